"""Wyckoff's own folders: unusable homes are one line, `--no-session` works without
them, everything created is private, and a session that could not be saved says so."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.context.memory import MemoryStore
from wyckoff_cli.storage import paths

ROOT = os.geteuid() == 0  # permission bits do not stop root


def write_script(tmp_path: Path, rounds: list[Any]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


def wyckoff(args: list[str], cwd: Path, home: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, WYCKOFF_HOME=str(home))
    return subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        **kwargs,
    )


def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "home-is-a-file"
    path.write_text("not a folder")
    return path


def under_proc(tmp_path: Path) -> Path:
    if not Path("/proc/self").exists():
        pytest.skip("no /proc here")
    return Path("/proc/wyckoff-home")


def read_only(tmp_path: Path) -> Path:
    if ROOT:
        pytest.skip("root ignores permission bits")
    home = tmp_path / "ro-home"
    home.mkdir()
    home.chmod(0o500)
    return home


def fresh_in_read_only(tmp_path: Path) -> Path:
    return read_only(tmp_path) / "new-home"


HOMES = [
    (a_file, "Not a directory"),
    (under_proc, "No such file or directory"),
    (read_only, "Permission denied"),
    (fresh_in_read_only, "Permission denied"),
]


@pytest.mark.parametrize(("make_home", "reason"), HOMES, ids=["file", "proc", "read-only", "fresh-read-only"])
def test_an_unusable_home_is_one_line_and_no_session_still_works(
    tmp_path: Path, workspace: Path, make_home: Any, reason: str
) -> None:
    home = make_home(tmp_path)
    model = write_script(tmp_path, [{"text": "answer one"}, {"text": "answer two"}])
    saved = wyckoff(["-m", model, "hi"], workspace, home)
    assert saved.returncode == 2
    line = saved.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert line.startswith("wyckoff: cannot create the folder ") and reason in line
    assert f"WYCKOFF_HOME is {home}" in line and "--no-session" in line

    model = write_script(tmp_path, [{"text": "answer"}])
    unsaved = wyckoff(["-m", model, "--no-session", "hi"], workspace, home)
    assert unsaved.returncode == 0, unsaved.stderr
    assert unsaved.stdout == "answer\n"
    notice, summary = unsaved.stderr.strip().splitlines()
    assert notice.endswith("; memory is off for this run") and reason in notice
    assert summary.startswith("[summary] 1 round")


@pytest.mark.skipif(ROOT, reason="root ignores permission bits")
def test_continuing_a_read_only_session_is_one_line(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    model = write_script(tmp_path, [{"text": "one"}, {"text": "two"}])
    assert wyckoff(["-m", model, "hi"], workspace, home).returncode == 0
    (chat,) = home.glob("data/sessions/*/*/chat.jsonl")
    chat.chmod(0o400)
    result = wyckoff(["-m", model, "--continue", "again"], workspace, home)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("wyckoff: cannot continue session ")
    assert "Permission denied" in result.stderr and "Traceback" not in result.stderr


def test_everything_created_is_private(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "fresh" / "home"  # its parents do not exist yet either
    model = write_script(
        tmp_path,
        [
            {"tool_calls": [{"name": "remember", "args": {"text": "The user prefers tabs."}}]},
            {"text": "noted"},
        ],
    )
    old = os.umask(0o022)
    try:
        result = wyckoff(["-m", model, "remember that I like tabs"], workspace, home)
    finally:
        os.umask(old)
    assert result.returncode == 0, result.stderr
    assert (home / "data" / "memory.db").exists()
    seen = []
    for folder, dirs, files in os.walk(tmp_path / "fresh"):
        for name in dirs:
            seen.append((Path(folder) / name, 0o700))
        for name in files:
            seen.append((Path(folder) / name, 0o600))
    wrong = [
        (str(p), oct(stat.S_IMODE(p.stat().st_mode)))
        for p, mode in seen
        # git keeps its objects read-only for the owner (0400): private too
        if stat.S_IMODE(p.stat().st_mode) not in (mode, 0o400 if mode == 0o600 else mode)
    ]
    assert wrong == []
    assert len(seen) > 8


def test_memory_db_and_its_wal_files_are_private(tmp_path: Path) -> None:
    path = paths.data_dir() / "memory.db"
    old = os.umask(0o022)
    try:
        store = MemoryStore(path)
        store.add("The build uses make.", scope="user")
        files = [path, path.with_name("memory.db-wal"), path.with_name("memory.db-shm")]
        assert all(f.exists() for f in files)
        assert {oct(stat.S_IMODE(f.stat().st_mode)) for f in files} == {"0o600"}
        store.close()
    finally:
        os.umask(old)
    path.chmod(0o644)  # as an older version left it
    again = MemoryStore(path)
    again.add("Tests run with pytest.", scope="user")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again.close()


def _limit_file_size() -> None:
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, 16_000))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE as a full disk")
def test_a_session_that_could_not_be_saved_changes_the_exit_status(tmp_path: Path, workspace: Path) -> None:
    home = tmp_path / "home"
    model = write_script(tmp_path, [{"text": "x" * 40_000}])
    for output in ("text", "json"):
        result = wyckoff(
            ["-m", model, "--output-format", output, "hi"], workspace, home, preexec_fn=_limit_file_size
        )
        assert result.returncode == 3, result.stderr
        assert "wyckoff: the session could not be fully saved: " in result.stderr
        assert "Traceback" not in result.stderr
        if output == "json":
            data = json.loads(result.stdout)
            assert data["reason"] == "completed" and "File too large" in data["session_error"]
        else:
            assert result.stdout.startswith("x" * 1000)


@pytest.mark.parametrize(("make_home", "reason"), HOMES[:2], ids=["file", "proc"])
def test_chat_with_an_unusable_home_is_one_line_before_the_app_starts(
    tmp_path: Path, workspace: Path, make_home: Any, reason: str
) -> None:
    home = make_home(tmp_path)
    env = dict(os.environ, WYCKOFF_HOME=str(home))
    result = subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "chat", "--model", "scripted:none.json"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and reason in line and "the app needs it for sessions" in line
