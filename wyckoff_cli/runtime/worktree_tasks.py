"""Sub-agents in worktrees: a `task` with `isolation: "worktree"` (or an agent file's
`isolation: worktree`) runs its child in a git worktree of its own.

The worktree is made from the parent's files as they are now, uncommitted and
untracked ones included (runtime/worktrees: that state is the branch's base), named
after the child (`general-3f2a9c1d`, branch `wyckoff/general-3f2a9c1d`), and recorded as
used by this process so `wyckoff worktree prune` cleans up after a crash. The child's
workspace, sandbox and tools are the worktree's, so such children may run at once, up
to `[agents] max_parallel`. At the end, a worktree with no changes is removed; otherwise
the result tells the parent the branch, the files changed and a diff stat, and that
the changes reach the parent's files only through `merge_worktree` (which always asks)
or `/worktree merge NAME`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.runtime.agent_files import AgentDefinition
from wyckoff_cli.runtime.worktrees import Worktree, WorktreeError, create_worktree, summary
from wyckoff_cli.runtime.worktrees.store import delete_worktree

ISOLATION = "worktree"


def isolated(agent: AgentDefinition | None, args: dict[str, Any]) -> bool:
    """Whether this task runs in a worktree: the call's `isolation` or the agent's."""
    asked = args.get("isolation")
    return asked == ISOLATION or (asked is None and agent is not None and agent.isolation == ISOLATION)


@dataclass
class ParallelLimit:
    """`[agents] max_parallel`: children in worktrees running at once (one semaphore,
    made on first use inside the running loop)."""

    size: int = 4
    _semaphore: asyncio.Semaphore | None = None

    @property
    def semaphore(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.size)
        return self._semaphore


async def open_worktree(workspace: Path, agent_id: str, description: str) -> Worktree:
    """The child's worktree, from the parent's current files; a `ToolError` saying why not."""
    try:
        worktree = await asyncio.to_thread(
            create_worktree, workspace, agent_id, from_current_state=True, origin="agent", title=description
        )
    except WorktreeError as exc:
        raise ToolError(f"isolation: worktree is not possible here: {exc.message}") from None
    worktree.claim()
    return worktree


async def close_worktree(worktree: Worktree) -> tuple[str, dict[str, Any]]:
    """After the child: (the note for the parent, the display fields). A worktree with
    no changes is removed."""
    try:
        found = await asyncio.to_thread(summary, worktree)
    except WorktreeError as exc:
        return f"[worktree {worktree.name}: its changes could not be read: {exc.message}]", {}
    if found.empty:
        await asyncio.to_thread(delete_worktree, worktree)
        return f"[worktree {worktree.name}: no changes; it was removed]", {"worktree": None}
    count = len(found.files)
    files = ", ".join(found.files[:20]) + (f" and {count - 20} more" if count > 20 else "")
    note = (
        f"[worktree {worktree.name}: branch {worktree.record.branch}, {count} file{'s' * (count != 1)} "
        f"changed: {files}]\n{found.stat}\n"
        f"These changes are NOT in your files yet. To bring them in, call merge_worktree with "
        f'name "{worktree.name}" (the user reviews the diff and approves), or the user runs '
        f"/worktree merge {worktree.name}."
    )
    display = {
        "worktree": {
            "name": worktree.name,
            "branch": worktree.record.branch,
            "path": str(worktree.path),
            "files": found.files,
            "stat": found.stat,
        }
    }
    return note, display
