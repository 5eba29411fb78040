"""Forgetting ended background sessions (issue 29): `wyckoff ps --prune`, the seven-day
rule of `ps`, and `wyckoff worktree prune|remove` clearing their sessions' entries.
Real detached processes (the scripted model), real git."""

from __future__ import annotations

import os
import signal
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.cli.test_background import WRITE_THEN_ANSWER, entry_of, ps_json, reap, script, start, state
from tests.waiting import until_sync
from wyckoff_cli.cli.main import main
from wyckoff_cli.storage.running import RunningRegistry

__all__ = ["reap"]  # the fixture, used by name


def process_gone(pid: int) -> bool:
    """The process has exited (a zombie not yet reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=T"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / "a.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], cwd=root, check=True)
    return root


def test_ps_prune_forgets_the_ended_sessions_now_and_only_those(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    ended = start(capsys, "-m", script(tmp_path, [{"text": "Done."}]), "--cwd", str(workspace), "quick one")
    until_sync(lambda: state(ended) == "done", what="the one-answer session to end")
    waiting = start(capsys, "-m", script(tmp_path, WRITE_THEN_ANSWER), "--cwd", str(workspace), "slow one")
    until_sync(lambda: state(waiting) == "waiting")
    log = Path(entry_of(ended).log)
    assert {row["id"] for row in ps_json(capsys, "--all")} == {ended, waiting}  # a recent ended one is listed

    capsys.readouterr()
    assert main(["ps", "--prune", "--all"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"forgot {ended}  done  quick one")
    assert out[-1].startswith("1 ended session forgotten")
    assert [row["id"] for row in ps_json(capsys, "--all")] == [waiting]  # the live one stays
    assert not log.exists()
    capsys.readouterr()
    assert main(["ps", "--prune", "--all"]) == 0
    assert capsys.readouterr().out.strip() == "No ended background sessions to forget."


def test_ps_forgets_by_itself_what_ended_more_than_seven_days_ago(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    session_id = start(capsys, "-m", script(tmp_path, [{"text": "Done."}]), "--cwd", str(workspace), "old")
    until_sync(lambda: state(session_id) == "done", what="the session to end")
    # and its process gone: its last write (the end time) must come before the test's
    until_sync(lambda: process_gone(entry_of(session_id).pid), what="the session's process to exit")
    registry = RunningRegistry()
    registry.update(entry_of(session_id), ended=(datetime.now(UTC) - timedelta(days=8)).isoformat())
    assert ps_json(capsys, "--all") == []
    assert not registry.path(session_id).exists()


def test_worktree_prune_after_kill_9_clears_its_sessions_entry(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    model = script(tmp_path, WRITE_THEN_ANSWER)
    session_id = start(capsys, "--worktree", "crash", "-m", model, "--cwd", str(repo), "x")
    until_sync(lambda: state(session_id) == "waiting")
    (row,) = ps_json(capsys, "--all")
    assert (row["worktree"], row["branch"]) == ("crash", "wyckoff/crash")
    os.kill(entry_of(session_id).pid, signal.SIGKILL)
    until_sync(lambda: state(session_id) == "failed", what="the killed session to read as failed")

    capsys.readouterr()
    assert main(["worktree", "--cwd", str(repo), "prune"]) == 0
    out = capsys.readouterr().out
    assert "removed worktree crash" in out
    assert f"cleared 1 ended background session of it from wyckoff ps: {session_id}" in out
    assert ps_json(capsys, "--all") == []


def test_worktree_remove_clears_the_ended_sessions_that_ran_there(
    tmp_path: Path, repo: Path, capsys: pytest.CaptureFixture[str], reap: None
) -> None:
    done = [
        {
            "text": "Writing.",
            "tool_calls": [{"name": "write_file", "args": {"path": "b.txt", "content": "b\n"}}],
        }
    ]
    model = script(tmp_path, [*done, {"text": "Written."}])
    session_id = start(
        capsys, "--worktree", "kept", "--permission-mode", "auto-edit", "-m", model, "--cwd", str(repo), "x"
    )
    until_sync(lambda: state(session_id) == "done", what="the session to end")
    other = start(capsys, "-m", script(tmp_path, [{"text": "Done."}]), "--cwd", str(repo), "main tree")
    until_sync(lambda: state(other) == "done", what="the main tree's session to end")
    assert (repo / ".wyckoff" / "worktrees" / "kept" / "b.txt").exists()

    capsys.readouterr()
    assert main(["worktree", "--cwd", str(repo), "remove", "kept", "--force"]) == 0
    assert f"from wyckoff ps: {session_id}" in capsys.readouterr().out
    assert [row["id"] for row in ps_json(capsys, "--all")] == [other]  # the main tree's stays
