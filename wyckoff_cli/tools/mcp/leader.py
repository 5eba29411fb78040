"""The process an MCP stdio connection started, so only its group is ever killed.

The server is started as `sh -c 'echo $$ > PIDFILE && exec SERVER'`: the pid it
writes is the server's own and leads its process group. The pid file lives in a
private folder under Wyckoff's cache folder (hidden from sandboxed commands, which
may write the temp folder). Before a group is killed, `ServerLeader.still_ours`
checks that the pid is still the process we started: recorded when the server
answered (our child, with its start time), a process with that pid now must have
the same start time. When the leader is gone, its pid cannot have been given to
another process while members of its group are alive (Linux keeps a pid in use as
long as a group of that id exists), so what is left of the group is ours.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class ServerLeader:
    pid: int
    started: int  # clock ticks after boot, from /proc/PID/stat

    def still_ours(self) -> bool:
        """Whether killing group `pid` reaches only what this connection started."""
        now = _stat(self.pid)
        return now is None or now[1] == self.started


def pid_folder() -> Path | None:
    """The private folder the pid files go in (made on first use); None when Wyckoff's
    cache folder is unusable (the SDK still stops the server's group on close, but
    its children left after it exits are not reached)."""
    from wyckoff_cli.core.errors import WyckoffError
    from wyckoff_cli.storage.paths import cache_dir, ensure_private_dir

    try:
        return ensure_private_dir(cache_dir() / "mcp")
    except (OSError, WyckoffError):
        return None


def read_leader(pidfile: Path, parent: int | None = None) -> ServerLeader | None:
    """The server process named in `pidfile`, when it is alive and a child of
    `parent` (default: this process); else None (never a stranger's pid)."""
    try:
        pid = int(pidfile.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
    if pid <= 1:
        return None
    found = _stat(pid)
    if found is None or found[0] != (os.getpid() if parent is None else parent):
        return None
    return ServerLeader(pid, found[1])


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of `pid`, or None when there is no such process."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        text = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
        fields = text[text.rindex(")") + 2 :].split()
        return int(fields[1]), int(fields[19])
    return None
