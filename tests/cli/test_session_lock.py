"""Two processes, one session: the writer lock, with real `wyckoff run` processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import until_sync
from wyckoff_cli.storage.session_lock import LOCK_FILE, SessionLock, SessionLocked, holder_of
from wyckoff_cli.storage.sessions import SessionStore


def write_script(path: Path, rounds: list[Any]) -> str:
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


def wyckoff(args: list[str], cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "run", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        **kwargs,
    )


def start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "wyckoff_cli", "run", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def only_session(store: SessionStore, workspace: Path) -> Path:
    sessions = store.list(workspace)
    assert len(sessions) == 1
    return sessions[0].directory


def wait_for_holder(directory: Path, pid: int, timeout: float = 20.0) -> dict[str, Any]:
    def held() -> dict[str, Any] | None:
        holder = holder_of(directory)
        return holder if holder and holder.get("pid") == pid else None

    return until_sync(held, timeout, what=f"pid {pid} to take the lock of {directory}")


@pytest.fixture
def session(tmp_path: Path, workspace: Path) -> Path:
    """A saved session with one finished turn."""
    model = write_script(tmp_path / "first.json", [{"text": "first answer"}])
    assert wyckoff(["-m", model, "first question"], workspace).returncode == 0
    return only_session(SessionStore(), workspace)


def test_a_second_writer_is_refused_then_forks(tmp_path: Path, workspace: Path, session: Path) -> None:
    slow = write_script(tmp_path / "slow.json", [{"text": "slow answer", "stall": 30}])
    first = start(["-m", slow, "--continue", "second question"], workspace)
    try:
        holder = wait_for_holder(session, first.pid)
        assert "--continue second question" in holder["command"]
        quick = write_script(tmp_path / "quick.json", [{"text": "quick answer"}, {"text": "forked answer"}])
        refused = wyckoff(["-m", quick, "--continue", "third question"], workspace)
        assert refused.returncode == 2
        line = refused.stderr.strip()
        assert len(line.splitlines()) == 1 and "Traceback" not in line
        assert f"session {session.name} is in use by another Wyckoff process (pid {first.pid}: " in line
        assert "--continue second question" in line and "since 20" in line and "UTC" in line
        assert "--fork" in line

        forked = wyckoff(
            ["-m", quick, "--resume", session.name, "--fork", "--output-format", "json", "go"], workspace
        )
        assert forked.returncode == 0, forked.stderr
        data = json.loads(forked.stdout)
        assert data["session_id"] != session.name and data["text"] == "quick answer"
        assert f"forked session {session.name} into {data['session_id']}" in forked.stderr
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=30)
    store = SessionStore()
    original = store.load(session.name)
    fork = store.load(data["session_id"])
    texts = [m.text for m in fork.history]
    # the same finished history (the other process's turn in progress left out), then this turn
    assert texts == ["first question", "first answer", "go", "quick answer"]
    assert "quick answer" not in [m.text for m in original.history]  # nothing leaked into the original
    assert holder_of(session) is None  # released at exit


def test_a_stale_lock_of_a_killed_process_is_taken_over(
    tmp_path: Path, workspace: Path, session: Path
) -> None:
    slow = write_script(tmp_path / "slow.json", [{"text": "slow", "stall": 30}])
    victim = start(["-m", slow, "--continue", "never finishes"], workspace)
    wait_for_holder(session, victim.pid)
    victim.kill()
    victim.communicate(timeout=30)
    assert json.loads((session / LOCK_FILE).read_text())["pid"] == victim.pid  # left behind
    quick = write_script(tmp_path / "quick.json", [{"text": "after the crash"}])
    result = wyckoff(["-m", quick, "--continue", "again"], workspace)
    assert result.returncode == 0, result.stderr
    assert f"took over the lock left by pid {victim.pid}" in result.stderr
    assert "which is no longer running" in result.stderr
    assert (session / LOCK_FILE).read_text() == ""  # released cleanly this time


def test_fork_needs_a_session_to_fork(tmp_path: Path, workspace: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"text": "x"}])
    result = wyckoff(["-m", model, "--fork", "hi"], workspace)
    assert result.returncode == 2
    assert result.stderr.strip() == "wyckoff: --fork needs --continue or --resume ID (the session to fork)"


def test_the_lock_in_process(tmp_path: Path) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    lock = SessionLock.acquire(folder, "s1", command="wyckoff run test")
    assert holder_of(folder) == {
        "pid": os.getpid(),
        "command": "wyckoff run test",
        "since": lock_since(folder),
    }
    with pytest.raises(SessionLocked) as info:
        SessionLock.acquire(folder, "s1")  # a second open file description: refused like another process
    assert info.value.exit_code == 2 and f"pid {os.getpid()}" in info.value.message
    lock.release()
    lock.release()  # idempotent
    assert holder_of(folder) is None
    again = SessionLock.acquire(folder, "s1")
    assert again.taken_over is None  # a clean release leaves nothing to take over
    again.release()
    assert (folder / LOCK_FILE).stat().st_mode & 0o777 == 0o600


def lock_since(folder: Path) -> str:
    return str(json.loads((folder / LOCK_FILE).read_text())["since"])


HOLD = """
import sys, time
from pathlib import Path
from wyckoff_cli.storage.session_lock import SessionLock
lock = SessionLock.acquire(Path(sys.argv[1]), "held", command="wyckoff chat (test holder)")
print("held", flush=True)
time.sleep(60)
"""


def test_chat_refuses_a_session_another_process_writes(
    workspace: Path, session: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from wyckoff_cli.cli.main import main

    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(session)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        store = SessionStore()
        loaded = store.load(session.name)
        busy = store.in_use(loaded)
        assert busy is not None and f"pid {holder.pid}: wyckoff chat (test holder)" in busy
        assert "--fork" not in busy  # the app has no --fork
        monkeypatch.chdir(workspace)
        assert main(["chat", "--continue", "--model", "scripted:none.json"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"wyckoff: session {session.name} is in use by another Wyckoff process")
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    assert SessionStore().in_use(SessionStore().load(session.name)) is None


def test_delete_and_prune_leave_a_session_in_use_alone(
    workspace: Path, session: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    from wyckoff_cli.cli.main import main

    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(session)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.chdir(workspace)
        assert main(["sessions", "delete", session.name]) == 2
        err = capsys.readouterr().err.strip()
        assert f"session {session.name} is in use by another Wyckoff process (pid {holder.pid}" in err
        assert "not deleted" in err
        assert SessionStore().prune(timedelta(seconds=-1)) == []  # everything is "old", but in use
        assert session.is_dir()
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    assert [info.id for info in SessionStore().prune(timedelta(seconds=-1))] == [session.name]
    assert not session.exists()
