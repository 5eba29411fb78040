"""Bad model output never becomes a traceback or a lost turn: each case a row, run
through `wyckoff run` in a real process, in all three output formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.storage.sessions import SessionStore

FINAL = "I could not write the file: the call was invalid."  # admits it (the loop guard checks)


def raw_call(arguments: str, name: str = "write_file") -> dict[str, Any]:
    return {"raw_tool_call": {"name": name, "arguments": arguments}}


def tool_round(*steps: dict[str, Any]) -> list[dict[str, Any]]:
    return [*steps, {"usage": {"input_tokens": 10, "output_tokens": 5}}]


Check = Callable[[list[dict[str, Any]], list[Any]], None]


def tool_error_says(*needles: str) -> Check:
    def check(events: list[dict[str, Any]], history: list[Any]) -> None:
        errors = [e["error"] for e in events if e["type"] == "tool_error"]
        assert len(errors) == 1, errors
        for needle in needles:
            assert needle in errors[0], errors[0]
        answer = next(m for m in history if m.role == "tool")
        assert answer.is_error and needles[0] in answer.text  # the model was told

    return check


def replaced(field: str) -> Check:
    def check(events: list[dict[str, Any]], history: list[Any]) -> None:
        assert "\ufffd" in json.dumps([e for e in events if e["type"] != "done"], ensure_ascii=False)
        assistant = [m for m in history if m.role == "assistant"][0]
        if field == "text":
            assert assistant.text == "bad \ufffd text"
            deltas = "".join(e["text"] for e in events if e["type"] == "text_delta")
            assert deltas == "bad \ufffd text"
        elif field == "thinking":
            assert assistant.thinking[0].text == "hmm \ufffd"
        else:
            assert assistant.tool_calls[0].arguments["path"] == "a\ufffd.txt"

    return check


def answered_separately(events: list[dict[str, Any]], history: list[Any]) -> None:
    results = {e["id"]: e["result"] for e in events if e["type"] == "tool_result"}
    assert set(results) == {"dup", "dup_2"}
    assert "alpha" in results["dup"] and "beta" in results["dup_2"]
    calls = [m for m in history if m.role == "assistant"][0].tool_calls
    assert [c.id for c in calls] == ["dup", "dup_2"]
    assert calls[1].extra == {"vendor_call_id": "dup"}
    answers = [(m.tool_call_id, m.text) for m in history if m.role == "tool"]
    assert answers[0][0] == "dup" and "alpha" in answers[0][1]
    assert answers[1][0] == "dup_2" and "beta" in answers[1][1]


CASES: dict[str, tuple[list[Any], Check]] = {
    "surrogate in text": ([{"text": "bad \ud800 text"}], replaced("text")),
    "surrogate in thinking": ([{"thinking": "hmm \udfff", "text": FINAL}], replaced("thinking")),
    "surrogate in tool arguments": (
        [tool_round(raw_call('{"path": "a\ud800.txt", "content": "x"}')), {"text": FINAL}],
        replaced("args"),
    ),
    "escaped surrogate in tool arguments": (
        [tool_round(raw_call('{"path": "a\\ud800.txt", "content": "x"}')), {"text": FINAL}],
        replaced("args"),
    ),
    "duplicate call ids": (
        [
            {
                "tool_calls": [
                    {"id": "dup", "name": "read_file", "args": {"path": "alpha.txt"}},
                    {"id": "dup", "name": "read_file", "args": {"path": "beta.txt"}},
                ]
            },
            {"text": FINAL},
        ],
        answered_separately,
    ),
    "arguments as a list": (
        [tool_round(raw_call('[{"path": "a.txt"}]')), {"text": FINAL}],
        tool_error_says("must be a JSON object, got an array"),
    ),
    "a 5,000-digit integer": (
        [tool_round(raw_call('{"path": "a.txt", "content": "x", "n": ' + "9" * 5000 + "}")), {"text": FINAL}],
        tool_error_says("could not be read", "send a long number as a string"),
    ),
    "100,000-deep nesting": (
        [
            tool_round(raw_call('{"path": "a.txt", "content": ' + "[" * 100_000 + "]" * 100_000 + "}")),
            {"text": FINAL},
        ],
        tool_error_says("nested 100001 levels deep; the limit is 64"),
    ),
    "a 4,000-character path": (
        [tool_round(raw_call(json.dumps({"path": "a/" * 2000 + "x.txt", "content": "x"}))), {"text": FINAL}],
        tool_error_says("too deep: 2,001 levels of folders"),
    ),
    "a 4,000-character file name": (
        [tool_round(raw_call(json.dumps({"path": "x" * 4000, "content": "x"}))), {"text": FINAL}],
        tool_error_says("is too long: 4,000 bytes"),
    ),
    "a NUL in a path": (
        [tool_round(raw_call(json.dumps({"path": "a\u0000.txt", "content": "x"}))), {"text": FINAL}],
        tool_error_says("NUL character"),
    ),
}


@pytest.mark.parametrize("output", ["text", "json", "stream-json"])
@pytest.mark.parametrize("case", list(CASES))
def test_bad_model_output(tmp_path: Path, workspace: Path, case: str, output: str) -> None:
    rounds, check = CASES[case]
    (workspace / "alpha.txt").write_text("alpha\n")
    (workspace / "beta.txt").write_text("beta\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rounds": rounds}))
    env = dict(os.environ, PYTHONIOENCODING="utf-8")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "wyckoff_cli",
            "run",
            "-m",
            f"scripted:{script}",
            "--permission-mode",
            "yolo",
            "--output-format",
            output,
            "go",
        ],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in result.stderr and "internal" not in result.stderr, result.stderr
    assert result.returncode == 0, result.stderr
    if output == "json":
        data = json.loads(result.stdout)
        assert data["error"] is None and data["reason"] == "completed"
    elif output == "stream-json":
        events = [json.loads(line) for line in result.stdout.splitlines()]
        assert events[-1]["type"] == "done" and events[-1]["reason"] == "completed"
        assert not [e for e in events if e["type"] == "error"]
    store = SessionStore()
    (info,) = store.list(workspace)
    loaded = store.load(info.id)
    assert not loaded.torn and loaded.skipped == 0
    assert loaded.history[-1].role == "assistant"  # the answer was logged
    if output == "stream-json":
        check(events, loaded.history)


@pytest.mark.parametrize("output", ["text", "json", "stream-json"])
def test_a_file_name_that_is_not_utf8(tmp_path: Path, workspace: Path, output: str) -> None:
    try:
        with open(os.path.join(os.fsencode(workspace), b"caf\xe9.txt"), "wb") as handle:
            handle.write(b"x")
    except OSError:
        pytest.skip("this file system wants UTF-8 names")
    script = tmp_path / "script.json"
    rounds = [{"tool_calls": [{"name": "list_dir", "args": {"path": "."}}]}, {"text": "Listed."}]
    script.write_text(json.dumps({"rounds": rounds}))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "wyckoff_cli",
            "run",
            "-m",
            f"scripted:{script}",
            "--output-format",
            output,
            "ls",
        ],
        cwd=workspace,
        env=dict(os.environ, PYTHONIOENCODING="utf-8"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    (info,) = SessionStore().list(workspace)
    tool_message = next(m for m in SessionStore().load(info.id).history if m.role == "tool")
    assert "caf\ufffd.txt" in tool_message.text  # what the model saw (and could send back)
