"""`wyckoff sessions ...` and the session options of `wyckoff run`, through the entry point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import until_sync
from wyckoff_cli.cli.main import main
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.storage.redact import Redactor
from wyckoff_cli.storage.sessions import SessionStore

FAKE_KEY = "sk-ant-api03-" + "Zp4Qm8Lx2Vb6Nc1Rt5Wy9Ks3Dh7Gf0Ja" * 3


def script(tmp_path: Path, rounds: list[Any], name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


def store() -> SessionStore:
    return SessionStore(redactor=Redactor())


def crafted_session(workspace: Path, *, secret: str = "") -> str:
    """A session with thinking, a tool call and result, a compaction and a failed turn."""
    recorder = store().create(workspace, model="anthropic:claude-sonnet-4-5")
    turn1 = [
        Message.user(f"Find the bug. {secret}".strip()),
        Message(
            "assistant",
            (
                ThinkingPart("The parser looks suspicious here.", signature="sig=="),
                TextPart("Let me read **parser.py**."),
                ToolCallPart("toolu_1", "read_file", {"path": "parser.py"}),
            ),
        ),
        Message.tool_result("toolu_1", "read_file", "def parse():\n    return ```x```\n" + "pass\n" * 10),
        Message.assistant("Found it: `parse` returns the wrong value."),
    ]
    for message in turn1:
        recorder.conversation.append(message)
        recorder.record(ev.MessageCommitted(message.to_dict()))
    recorder.record(ev.UsageReported("anthropic:claude-sonnet-4-5", 12_000, 800, 10_000))
    recorder.record(ev.TurnDone(turn1[-1].text, "completed", 2))
    summary = [Message.user("Summary: the bug is in parse().", synthetic="compaction")]
    archive = recorder.archive_replaced(turn1, summary)
    recorder.conversation.replace_all(summary, archive_path=str(archive))
    user2 = Message.user("Fix it.")
    recorder.conversation.append(user2)
    recorder.record(ev.MessageCommitted(user2.to_dict()))
    recorder.record(ev.TurnFailed("rate_limited", "slow down"))
    recorder.record(ev.TurnDone("", "error", 1))
    recorder.close()
    return recorder.id


def test_list_shows_this_projects_sessions(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sessions", "list", "--cwd", str(workspace)]) == 0
    assert "No sessions for this project" in capsys.readouterr().out
    session_id = crafted_session(workspace)
    other = tmp_path / "other"
    other.mkdir()
    other_id = crafted_session(other)
    assert main(["sessions", "list", "--cwd", str(workspace)]) == 0
    out = capsys.readouterr().out
    assert session_id in out and other_id not in out
    assert "Find the bug." in out and "anthropic:claude-sonnet-4-5" in out and "12.8k" in out
    assert main(["sessions", "list", "--all-projects"]) == 0
    out = capsys.readouterr().out
    assert session_id in out and other_id in out and "PROJECT" in out


def test_list_json(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session_id = crafted_session(workspace)
    assert main(["sessions", "list", "--json", "--cwd", str(workspace)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["id"] == session_id and row["turns"] == 2 and row["tokens"] == 12_800
    assert row["title"] == "Find the bug." and row["compactions"] == 1 and row["last_reason"] == "error"
    assert row["usage"]["cache_read_tokens"] == 10_000
    assert Path(row["directory"]).is_dir()
    # the crafted session was recorded without prices: its cost is unknown
    assert row["cost_usd"] is None


def test_runs_are_priced_per_call(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = Path(os.environ["WYCKOFF_HOME"]) / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[model_overrides."scripted:priced.json"]\ninput = 3.0\noutput = 15.0\n')
    model = script(
        tmp_path,
        [{"text": "ok", "usage": {"input_tokens": 1_000_000, "output_tokens": 100_000}}],
        name="priced.json",
    )
    assert main(["run", "-m", model, "--cwd", str(workspace), "hi"]) == 0
    capsys.readouterr()
    assert main(["sessions", "list", "--json", "--cwd", str(workspace)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["cost_usd"] == pytest.approx(3.0 + 1.5)
    assert main(["sessions", "list", "--cwd", str(workspace)]) == 0
    assert "$4.50" in capsys.readouterr().out


def test_show_folds_thinking_and_tool_calls(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session_id = crafted_session(workspace)
    assert main(["sessions", "show", session_id[:17]]) == 0
    out = capsys.readouterr().out
    assert "▸ thinking (5 words)" in out and "The parser looks suspicious" not in out
    assert '▸ read_file(path="parser.py")' in out
    assert "↳ read_file: def parse(): … (13 lines)" in out
    assert "compacted: 4 messages archived" in out and "Summary: the bug is in parse()." in out
    assert "Fix it." in out and "turn ended: error" in out
    assert main(["sessions", "show", session_id, "--expand"]) == 0
    out = capsys.readouterr().out
    assert "The parser looks suspicious here." in out and '"path": "parser.py"' in out


def test_export_markdown_and_json_are_redacted(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    custom = "internal-gateway-credential-42"
    session_id = crafted_session(workspace, secret=f"{FAKE_KEY} {custom}")
    # the session was recorded before this key was configured: the export still hides it
    monkeypatch.setenv("GATEWAY_API_KEY", custom)
    target = tmp_path / "out.md"
    assert main(["sessions", "export", session_id, "-o", str(target)]) == 0
    markdown = target.read_text()
    assert FAKE_KEY not in markdown and custom not in markdown and "[REDACTED]" in markdown
    assert markdown.startswith(f"# Wyckoff session {session_id}")
    assert "<details><summary>Thinking</summary>" in markdown
    assert "**Tool call** `read_file` (`toolu_1`)" in markdown
    assert "````text\ndef parse():\n    return ```x```" in markdown  # the fence outgrows the content's
    assert "*Compacted: 4 messages archived to `archive/001-" in markdown
    assert main(["sessions", "export", session_id[:10], "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    text = json.dumps(document)
    assert FAKE_KEY not in text and custom not in text
    assert document["format"] == "wyckoff.export" and document["session"]["id"] == session_id
    kinds = [item["kind"] for item in document["transcript"]]
    assert kinds == ["message"] * 4 + ["turn_end", "compaction", "message", "turn_end"]
    assert document["transcript"][5]["added"][0]["parts"][0]["text"].startswith("Summary:")


@pytest.mark.parametrize("action", ["show", "export", "delete"])
def test_unknown_or_ambiguous_ids_exit_2(
    action: str, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sessions", action, "20990101"]) == 2
    assert "no session matches '20990101'" in capsys.readouterr().err
    crafted_session(workspace)
    crafted_session(workspace)
    assert main(["sessions", action, "20"]) == 2
    assert "matches 2 sessions" in capsys.readouterr().err


def test_delete_and_prune(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keep, old = crafted_session(workspace), crafted_session(workspace)
    info = store().find(old)
    data = json.loads((info.directory / "session.json").read_text())
    data["updated"] = (datetime.now(UTC) - timedelta(days=45)).isoformat()
    (info.directory / "session.json").write_text(json.dumps(data))
    assert main(["sessions", "prune", "--older-than", "30", "--dry-run", "--cwd", str(workspace)]) == 0
    assert f"Would delete {old}" in capsys.readouterr().out and info.directory.exists()
    assert main(["sessions", "prune", "--older-than", "30", "--cwd", str(workspace)]) == 0
    assert "Deleted 1 session not used for 30 days." in capsys.readouterr().out
    assert not info.directory.exists()
    assert main(["sessions", "delete", keep]) == 0
    assert f"Deleted session {keep}" in capsys.readouterr().out
    assert store().list() == []


def test_run_records_a_session_and_continues_it(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = script(tmp_path, [{"thinking": "hm", "signature": "s1", "text": "One."}], "a.json")
    assert main(["run", "-m", first, "--cwd", str(workspace), "--output-format", "json", "first"]) == 0
    session_id = json.loads(capsys.readouterr().out)["session_id"]
    second = script(tmp_path, [{"text": "Two."}], "b.json")
    assert main(["run", "-m", second, "--cwd", str(workspace), "--continue", "second"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "Two.\n" and f"[session {session_id};" in captured.err
    third = script(tmp_path, [{"text": "Three."}], "c.json")
    assert main(["run", "-m", third, "--cwd", str(workspace), "--resume", session_id[:17], "third"]) == 0
    loaded = store().load(session_id)
    assert [m.text for m in loaded.history] == ["first", "One.", "second", "Two.", "third", "Three."]
    assert loaded.history[1].thinking[0].signature == "s1"
    assert [i.id for i in store().list(workspace)] == [session_id]


def test_run_session_options(tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = script(tmp_path, [{"text": "ok"}])
    assert main(["run", "-m", model, "--cwd", str(workspace), "--continue", "hi"]) == 2
    assert "no session to continue" in capsys.readouterr().err
    assert main(["run", "-m", model, "--cwd", str(workspace), "--resume", "20990101", "hi"]) == 2
    assert "no session matches" in capsys.readouterr().err
    assert main(["run", "-m", model, "--cwd", str(workspace), "--no-session", "hi"]) == 0
    assert "[session" not in capsys.readouterr().err and store().list() == []


def _wait_for(predicate: Any, timeout: float = 30.0) -> None:
    until_sync(predicate, timeout)


def test_a_run_killed_mid_turn_loads_and_resumes(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = script(tmp_path, [{"text": "Turn one done."}], "one.json")
    assert main(["run", "-m", first, "--cwd", str(workspace), "one"]) == 0
    capsys.readouterr()
    (info,) = store().list(workspace)
    chat = info.directory / "chat.jsonl"
    pad = info.directory / "scratchpad.jsonl"
    stalled = script(
        tmp_path, [[{"thinking": "thinking hard"}, {"text": "half an ans"}, {"sleep": 30}]], "two.json"
    )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wyckoff_cli",
            "run",
            "-m",
            stalled,
            "--cwd",
            str(workspace),
            "--continue",
            "two",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=os.environ.copy(),
    )
    try:
        # mid-turn: the user message is on disk and the model call has started streaming
        _wait_for(lambda: b'"two"' in chat.read_bytes() and pad.read_bytes().count(b'"model_start"') == 2)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL

    loaded = store().load(info.id)
    assert [m.text for m in loaded.history] == ["one", "Turn one done.", "two"]
    assert loaded.interrupted and not loaded.torn and loaded.skipped == 0
    # the summary was not rewritten by the killed process; list rebuilds it from the logs
    (listed,) = store().list(workspace)
    assert listed.turns == 2 and listed.messages == 3

    third = script(tmp_path, [{"text": "Back again."}], "three.json")
    assert main(["run", "-m", third, "--cwd", str(workspace), "--resume", info.id, "three"]) == 0
    assert capsys.readouterr().out == "Back again.\n"
    resumed = store().load(info.id)
    assert [m.text for m in resumed.history] == ["one", "Turn one done.", "two", "three", "Back again."]
    assert not resumed.interrupted
    assert store().list(workspace)[0].turns == 3
