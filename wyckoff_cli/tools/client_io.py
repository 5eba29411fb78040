"""When a host offers its own files and terminals (an editor over ACP), tools use them.

An editor's buffers may hold unsaved changes, and its terminal shows a command live:
with these set on the `ToolContext`, `read_file`, `write_file` and `edit_file` read and
write through the host, and `run_shell` runs in the host's terminal. Paths are checked
against the workspace and the policy exactly as for local files; without them the
tools use the disk and their own processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class HostFiles(Protocol):
    async def read_text(self, path: Path) -> str | None:
        """The file's text as the host has it (unsaved edits included); None if it
        does not exist."""
        ...

    async def write_text(self, path: Path, text: str) -> None: ...


@dataclass(frozen=True, slots=True)
class TerminalResult:
    output: str
    exit_code: int | None  # None: ended by a signal or still running at the timeout
    timed_out: bool = False
    truncated: bool = False


class HostTerminal(Protocol):
    async def run(self, call_id: str, command: str, cwd: Path, timeout: float) -> TerminalResult:
        """Run `command` in the host's terminal (which the host shows as the call's output)."""
        ...
