"""`wyckoff run --output-schema FILE` (alias `--json-schema`): text output prints only the
JSON, stream-json carries it in `done.data`, an answer still invalid after two
corrections exits 1 with `schema_failed`, and a bad schema file exits 2 before any
request (issue 32, part 2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.testing.fake_server import FakeServer

SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    with FakeServer() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        yield fake


def schema_file(tmp_path: Path, schema: object) -> str:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(schema) if not isinstance(schema, str) else schema)
    return str(path)


def run(workspace: Path, schema: str, *extra: str, flag: str = "--output-schema") -> int:
    return main(["run", "-m", "openai:gpt-4.1", "--cwd", str(workspace), flag, schema, *extra, "check it"])


@pytest.mark.parametrize("flag", ["--output-schema", "--json-schema"])
def test_text_output_prints_only_the_json(
    server: FakeServer, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    server.script({"text": 'Here it is: ```json\n{"ok": true}\n```'}, {"text": '```json\n{"ok": true}\n```'})
    assert run(workspace, schema_file(tmp_path, SCHEMA), flag=flag) == 0
    assert capsys.readouterr().out == '{"ok": true}\n'
    assert server.requests[0].body["response_format"]["json_schema"]["schema"] == SCHEMA


def test_stream_json_puts_the_answer_in_done_data(
    server: FakeServer, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script({"text": '{"ok": false}'})
    assert run(workspace, schema_file(tmp_path, SCHEMA), "--output-format", "stream-json") == 0
    done = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert done["type"] == "done" and done["data"] == {"ok": False} and done["reason"] == "completed"


def test_json_output_has_data(
    server: FakeServer, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script({"text": '{"ok": true}'})
    assert run(workspace, schema_file(tmp_path, SCHEMA), "--output-format", "json") == 0
    assert json.loads(capsys.readouterr().out)["data"] == {"ok": True}


def test_still_invalid_after_two_corrections_exits_1(
    server: FakeServer, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server.script(*({"text": '{"ok": "yes"}'} for _ in range(3)))
    assert run(workspace, schema_file(tmp_path, SCHEMA), "--output-format", "stream-json") == 1
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[-1]["reason"] == "schema_failed" and lines[-1]["data"] is None
    sent_back = [m for m in server.requests[2].body["messages"] if m["role"] == "user"][-1]["content"]
    assert "at ok: 'yes' is not of type 'boolean'" in json.dumps(sent_back)
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ("{not json", "is not JSON"),
        ({"type": "objekt"}, "is not a valid JSON Schema (2020-12) at type"),
        ({"properties": {"a": {"minimum": "zero"}}}, "at properties/a/minimum"),
        ([1, 2], "must be a JSON object"),
    ],
)
def test_a_bad_schema_is_a_usage_error_before_any_request(
    server: FakeServer,
    tmp_path: Path,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    schema: object,
    says: str,
) -> None:
    assert run(workspace, schema_file(tmp_path, schema)) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert server.requests == []


def test_a_missing_schema_file_is_a_usage_error(
    server: FakeServer, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(workspace, str(tmp_path / "nope.json")) == 2
    assert "cannot read the output schema" in capsys.readouterr().err and server.requests == []
