"""The background registry: what `ps` reads, and how a dead process reads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from wyckoff_cli.storage.paths import StorageError
from wyckoff_cli.storage.running import (
    RegistryError,
    RunningRegistry,
    RunningSession,
    git_place,
    process_start,
    socket_dir,
)


def entry(session_id: str, pid: int, **changes: object) -> RunningSession:
    base = RunningSession(session_id, pid, "/p", "/p", "m", "2026-01-01T00:00:00+00:00")
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.mark.parametrize("live", ["running", "waiting"])
def test_a_dead_process_that_did_not_end_cleanly_reads_as_failed(live: str) -> None:
    registry = RunningRegistry()
    registry.write(entry("bg-000001", dead_pid(), state=live, waiting_for="run_shell: ls"))
    got = registry.read("bg-000001")
    assert got.state == "failed" and got.waiting_for is None


@pytest.mark.parametrize("ended", ["done", "stopped", "failed"])
def test_an_ended_state_stays_as_written(ended: str) -> None:
    registry = RunningRegistry()
    registry.write(entry("bg-000002", dead_pid(), state=ended))
    assert registry.read("bg-000002").state == ended


def test_a_live_process_stays_running_and_a_reused_pid_does_not() -> None:
    registry = RunningRegistry()
    me = os.getpid()
    registry.write(entry("bg-000003", me, pid_start=process_start(me)))
    assert registry.read("bg-000003").state == "running"
    registry.write(entry("bg-000004", me, pid_start="1"))  # our pid, but another start time
    assert registry.read("bg-000004").state == "failed"


def test_prefixes_torn_files_and_projects(tmp_path: Path) -> None:
    registry = RunningRegistry()
    registry.write(entry("bg-aaa111", 0, state="done", project="/one"))
    registry.write(entry("bg-aaa222", 0, state="done", project="/two", root="/two/.wyckoff/worktrees/x"))
    (registry.root / "bg-torn.json").write_text('{"id": "bg-torn", "pi')
    (registry.root / "bg-bad.json").write_text(
        '{"id": "bg-bad", "pid": 1, "project": "/", "root": "/", '
        '"model": "m", "started": "2026-01-01T00:00:00", "state": "odd"}'
    )
    assert {e.id for e in registry.entries()} == {"bg-aaa111", "bg-aaa222"}  # unreadable ones skipped
    assert [e.id for e in registry.entries(Path("/two"))] == ["bg-aaa222"]
    assert [e.id for e in registry.entries(Path("/two/.wyckoff/worktrees/x"))] == ["bg-aaa222"]
    assert registry.read("bg-aaa1").id == "bg-aaa111"
    with pytest.raises(RegistryError, match="more than one"):
        registry.read("bg-aaa")
    with pytest.raises(RegistryError, match="no background session"):
        registry.read("bg-zzz")
    with pytest.raises(RegistryError, match="cannot be read"):
        registry.read("bg-torn")


def test_elapsed_stops_at_the_end() -> None:
    done = entry("bg-1", 0, state="done", ended="2026-01-01T00:01:30+00:00")
    assert done.elapsed_s() == 90.0


def test_a_socket_folder_path_too_long_for_a_socket_moves_to_tmp(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WYCKOFF_HOME", str(tmp_path / ("long" * 30)))
    folder = socket_dir()
    assert str(folder).startswith(f"/tmp/wyckoff-{os.getuid()}-") and len(str(folder)) < 60
    assert folder.stat().st_mode & 0o777 == 0o700


def test_a_socket_folder_of_another_user_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from wyckoff_cli.storage import running

    real_getuid = os.getuid
    monkeypatch.setattr(running.os, "getuid", lambda: real_getuid() + 1)
    with pytest.raises(StorageError, match="belongs to another user"):
        running.check_private_dir(tmp_path)


def test_git_place_names_the_worktree_and_branch(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str, cwd: Path = repo) -> None:
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "one")
    git("worktree", "add", "-q", "-b", "wyckoff/x", str(repo / ".wyckoff" / "worktrees" / "x"))
    main_place = git_place(repo)
    assert (main_place.project, main_place.worktree, main_place.branch) == (repo.resolve(), None, "main")
    linked = git_place(repo / ".wyckoff" / "worktrees" / "x")
    assert (linked.project, linked.worktree, linked.branch) == (repo.resolve(), "x", "wyckoff/x")
    outside = git_place(tmp_path)
    assert (outside.project, outside.worktree, outside.branch) == (tmp_path, None, None)
    (repo / "sub").mkdir()
    assert git_place(repo / "sub").project == repo.resolve()  # a subfolder is the same project
    git("checkout", "-q", "--detach")
    assert git_place(repo).branch is None  # detached: no branch to name
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / ".git").write_text("not a pointer\n")
    assert git_place(odd) == type(outside)(odd, None, None)
