"""Background sessions with real detached processes: `run --background`, `ps`, `stop`,
an approval answered through an attach client, a crash (kill -9) seen by `ps`."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import until_sync
from wyckoff_cli.cli.main import main
from wyckoff_cli.cli.ps_cmd import FIELDS
from wyckoff_cli.session.channel import ChannelClient, ChannelError
from wyckoff_cli.storage.running import RunningRegistry, RunningSession, process_alive, socket_path
from wyckoff_cli.storage.sessions import SessionStore

WRITE_THEN_ANSWER = [
    {
        "text": "I will write it.",
        "tool_calls": [{"name": "write_file", "args": {"path": "a.txt", "content": "hi\n"}}],
    },
    {"text": "Written."},
]


def script(tmp_path: Path, rounds: list[Any]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


@pytest.fixture
def reap() -> Iterator[None]:
    """However a test ends, no background process it started outlives it."""
    yield
    for entry in RunningRegistry().entries():
        if process_alive(entry.pid, entry.pid_start):
            with contextlib.suppress(ProcessLookupError):
                os.kill(entry.pid, signal.SIGKILL)


def start(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["run", "--background", *argv]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("Started background session bg-"), out
    assert "wyckoff attach bg-" in out and "wyckoff ps" in out
    return first.split()[-1].rstrip(".")


def entry_of(session_id: str) -> RunningSession:
    return RunningRegistry().read(session_id)


def state(session_id: str) -> str:
    return entry_of(session_id).state


def ps_json(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert main(["ps", "--json", *extra]) == 0
    rows: list[dict[str, Any]] = json.loads(capsys.readouterr().out)
    return rows


def log_of(session_id: str) -> str:
    return Path(entry_of(session_id).log).read_text()


async def answer(session_id: str, decision: str = "allow", want: str = "control") -> dict[str, Any]:
    """Attach like the app does, answer the pending approval, return the welcome."""
    client = await ChannelClient.connect(socket_path(session_id), want)
    try:
        pending = client.welcome["pending"]
        assert [p["type"] for p in pending] == ["approval_request"]
        await client.send({"kind": "approve", "id": pending[0]["id"], "decision": {"kind": decision}})
        async for message in client.messages():  # the call runs, the turn ends, the session closes
            if message["kind"] == "event" and message["event"]["type"] == "done":
                break
        return client.welcome
    finally:
        await client.close()


def test_an_approval_waits_and_is_answered_through_an_attach_client(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    model = script(tmp_path, WRITE_THEN_ANSWER)
    session_id = start(capsys, "-m", model, "--cwd", str(workspace), "write a.txt")
    until_sync(lambda: state(session_id) == "waiting", what="the session waits for the approval")
    waiting = entry_of(session_id)
    assert waiting.waiting_for == "write_file: a.txt"
    (row,) = ps_json(capsys, "--all")
    assert tuple(row) == FIELDS
    assert row["state"] == "waiting" and row["waiting_for"] == "write_file: a.txt"
    assert row["title"] == "write a.txt" and row["model"] == model
    assert not (workspace / "a.txt").exists()  # nothing was skipped or denied meanwhile

    welcome = asyncio.run(answer(session_id))
    assert welcome["role"] == "control"
    until_sync(
        lambda: state(session_id) == "done", what="the session completes", observe=lambda: log_of(session_id)
    )
    assert (workspace / "a.txt").read_text() == "hi\n"
    assert "Written." in log_of(session_id)
    until_sync(lambda: not process_alive(entry_of(session_id).pid, entry_of(session_id).pid_start))
    assert not socket_path(session_id).exists()
    loaded = SessionStore().load(str(entry_of(session_id).session_id))  # the chat log, as any run writes it
    assert not loaded.torn and not loaded.interrupted
    assert loaded.history[-1].text == "Written."


def test_a_second_attach_is_view_only_and_cannot_answer(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    model = script(tmp_path, WRITE_THEN_ANSWER)
    session_id = start(capsys, "-m", model, "--cwd", str(workspace), "write a.txt")
    until_sync(lambda: state(session_id) == "waiting")

    async def both() -> None:
        first = await ChannelClient.connect(socket_path(session_id), "control")
        second = await ChannelClient.connect(socket_path(session_id), "control")
        assert (first.role, second.role) == ("control", "view")
        call_id = second.welcome["pending"][0]["id"]
        await second.send({"kind": "approve", "id": call_id, "decision": {"kind": "allow"}})
        async for message in second.messages():
            if message["kind"] == "error":
                assert "view-only" in message["message"]
                break
        assert state(session_id) == "waiting"  # still waiting: the view-only answer did nothing
        await first.send({"kind": "approve", "id": call_id, "decision": {"kind": "deny", "feedback": "no"}})
        async for message in first.messages():
            if message["kind"] == "event" and message["event"]["type"] == "done":
                break
        await first.close()
        await second.close()

    asyncio.run(both())
    until_sync(lambda: state(session_id) == "done")
    assert not (workspace / "a.txt").exists()  # denied by the person, through the controlling app


def test_kill_9_then_ps_shows_it_failed(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    session_id = start(capsys, "-m", script(tmp_path, WRITE_THEN_ANSWER), "--cwd", str(workspace), "x")
    until_sync(lambda: state(session_id) == "waiting")
    os.kill(entry_of(session_id).pid, signal.SIGKILL)
    until_sync(lambda: state(session_id) == "failed", what="a dead waiting session reads as failed")
    (row,) = ps_json(capsys, "--all")
    assert row["state"] == "failed" and row["waiting_for"] is None
    capsys.readouterr()
    assert main(["ps", "--all"]) == 0
    assert "failed" in capsys.readouterr().out


def test_stop_ends_it_cleanly_with_a_valid_history(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    session_id = start(capsys, "-m", script(tmp_path, WRITE_THEN_ANSWER), "--cwd", str(workspace), "x")
    until_sync(lambda: state(session_id) == "waiting")
    capsys.readouterr()
    assert main(["stop", session_id]) == 0
    assert f"Stopped background session {session_id} (stopped)" in capsys.readouterr().out
    entry = entry_of(session_id)
    assert entry.state == "stopped" and entry.ended is not None
    loaded = SessionStore().load(str(entry.session_id))
    assert not loaded.torn
    # the call it waited for has its answer: the history is valid for every provider
    assert loaded.history[-1].role in ("tool", "assistant")
    assert main(["stop", session_id]) == 2  # not running any more: a clear one-line error
    assert "is not running (it is stopped)" in capsys.readouterr().err


def test_sigterm_is_a_clean_stop_too(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    session_id = start(capsys, "-m", script(tmp_path, WRITE_THEN_ANSWER), "--cwd", str(workspace), "x")
    until_sync(lambda: state(session_id) == "waiting")
    os.kill(entry_of(session_id).pid, signal.SIGTERM)
    until_sync(lambda: state(session_id) == "stopped")


def test_the_socket_is_private(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    session_id = start(capsys, "-m", script(tmp_path, WRITE_THEN_ANSWER), "--cwd", str(workspace), "x")
    until_sync(lambda: state(session_id) == "waiting")
    sock = socket_path(session_id)
    assert stat.S_ISSOCK(sock.stat().st_mode)
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_IMODE(sock.parent.stat().st_mode) == 0o700
    assert sock.stat().st_uid == os.getuid()
    registry_file = RunningRegistry().path(session_id)
    assert stat.S_IMODE(registry_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(Path(entry_of(session_id).log).stat().st_mode) == 0o600


def test_background_refuses_no_session(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            ["run", "--background", "--no-session", "-m", script(tmp_path, []), "--cwd", str(workspace), "x"]
        )
        == 2
    )
    assert "--background needs a session" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["attach", "bg-nope"], ["stop", "bg-nope"]])
def test_an_unknown_id_is_a_one_line_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "no background session matches 'bg-nope'" in err and "Traceback" not in err


def test_attach_to_a_finished_session_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    entry = RunningSession("bg-000001", 0, "/p", "/p", "m", "2026-01-01T00:00:00+00:00", state="done")
    entry.session_id = "20260101-000000-abcd"
    RunningRegistry().write(entry)
    assert main(["attach", "bg-000001"]) == 2
    err = capsys.readouterr().err
    assert "is done, not running" in err and "wyckoff sessions show 20260101-000000-abcd" in err


def test_no_channel_reachable_is_a_clear_error() -> None:
    with pytest.raises(ChannelError, match="cannot reach the session"):
        asyncio.run(ChannelClient.connect(socket_path("bg-absent")))


def test_the_attached_app_sends_a_new_turn_and_detaching_ends_an_idle_session(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    model = script(tmp_path, [*WRITE_THEN_ANSWER, {"text": "Second answer."}])
    session_id = start(capsys, "-m", model, "--cwd", str(workspace), "write a.txt")
    until_sync(lambda: state(session_id) == "waiting")

    async def converse() -> list[str]:
        client = await ChannelClient.connect(socket_path(session_id), "control")
        seen: list[str] = []
        call_id = client.welcome["pending"][0]["id"]
        await client.send({"kind": "approve", "id": call_id, "decision": {"kind": "allow"}})
        async for message in client.messages():
            if message["kind"] == "user":
                seen.append(f"user: {message['text']}")
            if message["kind"] == "event" and message["event"]["type"] == "done":
                seen.append(f"done: {message['event']['text']}")
                if len(seen) == 1:
                    await client.send({"kind": "turn", "text": "and now?"})
                else:
                    break
        await client.close()  # detached: nobody can send another turn, so the session ends
        return seen

    assert asyncio.run(converse()) == ["done: Written.", "user: and now?", "done: Second answer."]
    until_sync(lambda: not process_alive(entry_of(session_id).pid, entry_of(session_id).pid_start))
    assert state(session_id) == "done"
    loaded = SessionStore().load(str(entry_of(session_id).session_id))
    assert [m.text for m in loaded.history if m.role == "user"][-1] == "and now?"
    assert loaded.history[-1].text == "Second answer."


@pytest.mark.parametrize(
    ("argv", "prompt", "expected"),
    [
        (["run", "--background", "-m", "m", "do it"], "do it", ["-m", "m", "do it"]),
        (  # part A's --worktree (and every other option) reaches the detached process
            ["run", "--worktree", "feature", "--background", "--permission-mode", "auto-edit", "p"],
            "p",
            ["--worktree", "feature", "--permission-mode", "auto-edit", "p"],
        ),
        (["run", "--background", "-"], "from stdin", ["from stdin"]),  # it has no stdin of its own
        (["run", "--background", "--", "--not-an-option"], "--not-an-option", ["--", "--not-an-option"]),
    ],
)
def test_every_other_argument_is_passed_through(argv: list[str], prompt: str, expected: list[str]) -> None:
    from wyckoff_cli.cli.background_cmd import CHILD_FLAG, child_argv

    assert child_argv(argv, prompt, "bg-123456") == ["run", CHILD_FLAG, "bg-123456", *expected]


GATED_SERVER = """\
import runpy, sys, time
from pathlib import Path
gate = Path(sys.argv[1])
while not gate.exists():  # the session waits for this server while it is being built
    time.sleep(0.02)
sys.argv = [sys.argv[2], "stdio"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_a_stop_before_the_first_turn_begins_stops_that_turn(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    # The socket listens before the session is built (here it waits for an MCP server):
    # a `stop` can come first. The turn must then stop as soon as it has begun, not run
    # to its end (a 60 s answer here).
    from wyckoff_cli.storage.paths import config_file

    gate, wrapper = tmp_path / "go", tmp_path / "gated_server.py"
    wrapper.write_text(GATED_SERVER, encoding="utf-8")
    demo = Path(__file__).resolve().parents[1] / "tools" / "mcp" / "demo_server.py"
    config_file().parent.mkdir(parents=True, exist_ok=True)
    config_file().write_text(
        f"[mcp_servers.gated]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps([str(wrapper), str(gate), str(demo)])}\nstartup_timeout = 60\n",
        encoding="utf-8",
    )
    slow = script(tmp_path, [[{"sleep": 60}, {"text": "too late"}]])
    session_id = start(capsys, "-m", slow, "--cwd", str(workspace), "x")
    until_sync(lambda: socket_path(session_id).exists())

    async def ask_to_stop() -> None:
        client = await ChannelClient.connect(socket_path(session_id), "view")
        try:
            await client.send({"kind": "stop"})
        finally:
            await client.close()

    asyncio.run(ask_to_stop())
    assert state(session_id) == "running"  # still being built: the server waits
    gate.touch()
    until_sync(lambda: state(session_id) == "stopped")
    loaded = SessionStore().load(str(entry_of(session_id).session_id))
    assert not loaded.torn
    assert "too late" not in log_of(session_id)
