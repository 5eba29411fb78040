"""Issue 27: Wyckoff kills only the MCP server group it started, whatever a pid file
says; the pid file is where sandboxed commands cannot write."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import stdio_spec
from wyckoff_cli.storage import paths
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.mcp.leader import ServerLeader, read_leader
from wyckoff_cli.tools.permissions.sandbox import ShellSettings, probe
from wyckoff_cli.tools.shell import make_shell_tools

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def victim() -> Iterator[subprocess.Popen[bytes]]:
    """Another process group of the user's: a child of this process, as the server is."""
    process = subprocess.Popen(["sleep", "120"], start_new_session=True)
    yield process
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def alive(process: subprocess.Popen[bytes]) -> bool:
    return process.poll() is None


async def test_a_rewritten_pid_file_kills_nothing_of_the_users(
    start: Any, victim: subprocess.Popen[bytes]
) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    connection = started.manager.connections["demo"]
    pidfile = connection._pidfile
    assert pidfile is not None
    assert paths.cache_dir() in pidfile.parents  # hidden from the sandbox, never the temp folder
    pidfile.write_text(f"{victim.pid}\n")  # what a command could do to a pid file in /tmp
    await started.manager.aclose()
    assert alive(victim)


@pytest.mark.skipif(probe() is not None, reason="the sandbox cannot start here")
async def test_sandboxed_commands_cannot_write_the_pid_file(start: Any, tmp_path: Path) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    pidfile = started.manager.connections["demo"]._pidfile
    assert pidfile is not None
    before = pidfile.read_text()
    hidden = (paths.config_dir(), paths.data_dir(), paths.cache_dir())
    tool, _, _ = make_shell_tools(ShellSettings(sandbox="workspace-write", hidden=hidden))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    ctx = ToolContext(workspace=Path(os.path.realpath(workspace)))
    await tool.run({"command": f"echo 1 > {pidfile}; echo done"}, ctx)
    assert pidfile.read_text() == before


def test_a_pid_file_naming_a_process_that_is_not_our_child_is_ignored(
    tmp_path: Path, victim: subprocess.Popen[bytes]
) -> None:
    pidfile = tmp_path / "pid"
    for stranger in (1, os.getppid(), os.getpid(), 0, -5):
        pidfile.write_text(str(stranger))
        assert read_leader(pidfile) is None, stranger
    pidfile.write_text("not a pid")
    assert read_leader(pidfile) is None
    pidfile.write_text(str(victim.pid))
    leader = read_leader(pidfile)
    assert leader is not None and leader.pid == victim.pid and leader.still_ours()


def test_a_pid_given_to_another_process_is_not_ours(victim: subprocess.Popen[bytes]) -> None:
    leader = read_leader_of(victim)
    assert ServerLeader(leader.pid, leader.started + 1).still_ours() is False
    assert ServerLeader(2**22 + 12345, 0).still_ours()  # gone: only what is left of its group


def read_leader_of(process: subprocess.Popen[bytes]) -> ServerLeader:
    from wyckoff_cli.tools.mcp.leader import _stat

    found = _stat(process.pid)
    assert found is not None
    return ServerLeader(process.pid, found[1])


async def test_an_unusable_cache_folder_still_starts_the_server(
    start: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("WYCKOFF_HOME", str(blocker))  # cache_dir() cannot be made
    started = start(stdio_spec())
    await started.manager.wait_ready()
    connection = started.manager.connections["demo"]
    assert connection.state == "connected", connection.reason
    assert connection._pidfile is None
    await started.manager.aclose()
