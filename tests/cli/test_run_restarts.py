"""`wyckoff run` when a model call restarts mid-answer (retry or fallback): the text
printed is never the discarded partial answer."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.cli.text_output import TextPrinter
from wyckoff_cli.core import events as ev
from wyckoff_cli.testing.fake_server import FakeServer

FAULTS = [
    {"text": "The answer is part", "midstream_error": True},
    {"text": "The answer is part", "drop": True},
    {"text": "The answer is part", "no_end": True},
    {"text": "The answer is part", "midstream_error": {"type": "rate_limit_error", "message": "slow"}},
]


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def _configure(workspace: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch, retries: int) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-anthropic")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-openai")
    config = workspace / ".wyckoff" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        'model = "anthropic:claude-sonnet-4-5"\nfallbacks = ["openai:gpt-4o"]\n'
        f"retry_attempts = {retries}\nretry_max_delay = 0.01\n"
    )


@pytest.mark.parametrize("fault", FAULTS, ids=["midstream", "drop", "no_end", "rate_limit"])
@pytest.mark.parametrize("retries", [1, 2], ids=["fallback", "retry"])
def test_text_output_never_contains_the_discarded_partial_answer(
    fault: dict[str, object],
    retries: int,
    server: FakeServer,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _configure(workspace, server, monkeypatch, retries)
    server.script(fault, {"text": "The whole answer.", "chunk_size": 5})
    code = main(["run", "--no-session", "--cwd", str(workspace), "question"])
    captured = capsys.readouterr()
    assert code == 0
    assert captured.out == "The whole answer.\n"
    marker = "[retrying]" if retries == 2 else "[fallback]"
    assert marker in captured.err
    paths = [r.path for r in server.requests]
    assert paths[-1].endswith("/chat/completions" if retries == 1 else "/messages")


def test_on_a_terminal_the_restart_is_marked() -> None:
    out = io.StringIO()
    printer = TextPrinter(out, live=True)
    for event in (
        ev.TextDelta("The answer is part"),
        ev.Retrying("anthropic:x", 2, 3, 1.0, "overloaded", discarded_text="The answer is part"),
        ev.TextDelta("The whole answer."),
    ):
        printer.handle(event)
    assert out.getvalue() == (
        "The answer is part\n[answer restarted: retrying anthropic:x; the text above is discarded]\n"
        "The whole answer."
    )


def test_stream_json_reports_the_retry(
    server: FakeServer, workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _configure(workspace, server, monkeypatch, 3)
    server.script({"status": 429, "retry_after": 0}, {"text": "ok"})
    assert main(["run", "--no-session", "--cwd", str(workspace), "--output-format", "stream-json", "q"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    retry = next(line for line in lines if line["type"] == "retrying")
    assert (retry["attempt"], retry["attempts"], retry["delay"]) == (2, 3, 0.0)
    assert lines[-1]["type"] == "done" and lines[-1]["stop_reason"] == "end_turn"
