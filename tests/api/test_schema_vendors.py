"""Schema-checked answers through the real SDKs against the fake server: what each
vendor's request carried (asserted on what the server received), the answer checked,
corrections sent back at most twice (issue 32, part 2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli import Agent
from wyckoff_cli.testing.fake_server import FakeServer

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"files": {"type": "integer", "minimum": 0}, "summary": {"type": "string"}},
    "required": ["files", "summary"],
    "additionalProperties": False,
}
GOOD = {"files": 3, "summary": "three files"}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    with FakeServer() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-key")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.url)
        monkeypatch.setenv("GEMINI_API_KEY", "fake-key")
        yield fake


def bodies(server: FakeServer) -> list[Any]:
    return [r.body for r in server.requests if r.vendor is not None]


NATIVE = [
    ("openai:gpt-4.1", "/chat/completions"),
    ("gemini:gemini-2.5-pro", ":streamGenerateContent"),
]


@pytest.mark.parametrize(("model", "path"), NATIVE)
def test_native_structured_output_carries_the_schema_and_tools_still_run(
    server: FakeServer, workspace: Path, model: str, path: str
) -> None:
    (workspace / "a.txt").write_text("x")
    server.script(
        {"tool_calls": [{"name": "list_dir", "args": {"path": "."}}]},
        {"text": json.dumps(GOOD)},
    )
    result = Agent(model, workspace=workspace).run_sync("count the files", output_schema=SCHEMA)
    assert result.reason == "completed" and result.data == GOOD
    requests = [r for r in server.requests if r.vendor is not None]
    assert len(requests) == 2 and all(path in r.path for r in requests)
    for body in (r.body for r in requests):
        if model.startswith("openai"):
            names = [t["function"]["name"] for t in body["tools"]]
            assert body["response_format"]["type"] == "json_schema"
            assert body["response_format"]["json_schema"]["schema"]["required"] == ["files", "summary"]
        else:
            names = [d["name"] for d in body["tools"][0]["functionDeclarations"]]
            config = body["generationConfig"]
            assert config["responseMimeType"] == "application/json"
            assert config["responseJsonSchema"]["properties"]["files"]["minimum"] == 0
        assert "list_dir" in names and "final_answer" not in names  # the format, not a tool
        assert "$schema" not in json.dumps(body)


def test_openai_responses_api_carries_text_format(server: FakeServer, workspace: Path) -> None:
    server.script({"text": json.dumps(GOOD)})
    result = Agent("openai-responses:gpt-5", workspace=workspace).run_sync("count", output_schema=SCHEMA)
    (request,) = [r for r in server.requests if r.vendor is not None]
    assert request.path.endswith("/responses")
    text_format = request.body["text"]["format"]
    assert text_format["type"] == "json_schema" and text_format["schema"]["type"] == "object"
    assert result.data == GOOD


def test_anthropic_answers_through_a_forced_tool_after_other_tools(
    server: FakeServer, workspace: Path
) -> None:
    server.script(
        {"tool_calls": [{"name": "list_dir", "args": {"path": "."}}]},
        {"tool_calls": [{"name": "final_answer", "args": GOOD}]},
    )
    result = Agent("anthropic:claude-sonnet-4-5", workspace=workspace).run_sync("count", output_schema=SCHEMA)
    assert result.reason == "completed_by_tool" and result.data == GOOD
    assert len(bodies(server)) == 2
    for body in bodies(server):
        assert body["tool_choice"] == {"type": "any"}  # a tool must be called: maybe the answer
        (answer,) = [t for t in body["tools"] if t["name"] == "final_answer"]
        assert answer["input_schema"]["required"] == ["files", "summary"]
        assert "list_dir" in [t["name"] for t in body["tools"]]


def test_an_invalid_answer_is_sent_back_with_the_validators_message(
    server: FakeServer, workspace: Path
) -> None:
    server.script({"text": '{"files": -1, "summary": "x"}'}, {"text": json.dumps(GOOD)})
    result = Agent("openai:gpt-4.1", workspace=workspace).run_sync("count", output_schema=SCHEMA)
    assert result.reason == "completed" and result.data == GOOD
    sent_back = bodies(server)[1]["messages"][-1]["content"]
    text = sent_back if isinstance(sent_back, str) else json.dumps(sent_back)
    assert "at files: -1 is less than the minimum of 0" in text


@pytest.mark.parametrize("answers", [["not json"] * 3, ['{"files": 1}'] * 3])
def test_after_two_corrections_the_run_is_schema_failed(
    server: FakeServer, workspace: Path, answers: list[str]
) -> None:
    server.script(*({"text": a, "usage": {"input_tokens": 10, "output_tokens": 1}} for a in answers))
    server.script({"text": json.dumps(GOOD)})  # never asked for: two corrections at most
    result = Agent("openai:gpt-4.1", workspace=workspace).run_sync("count", output_schema=SCHEMA)
    assert result.reason == "schema_failed" and result.data is None
    assert len(bodies(server)) == 3 and server.pending == 1
    assert result.usage["input_tokens"] == 30  # every attempt counted
