"""What the app says in its transcript when its session runs in a git worktree
(`wyckoff chat --worktree`, docs/PARALLEL.md): a start line naming the worktree and
its branch, and after each turn that leaves the worktree with changes, how to review
and merge them (once per new state of the changes; git runs in a thread, off the
event loop). The terminal still gets the end line after the app closes."""

from __future__ import annotations

import asyncio
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.session.worktree_run import worktree_review_line, worktree_start_line


def install(chat: Any) -> None:
    """Show `chat`'s start line (after the first paint) and chain the review line to
    the end of each turn; nothing when its workspace is not a worktree."""
    root = chat.controller.root
    start = worktree_start_line(root)
    if start is None:
        return
    chat.call_after_refresh(chat.add_notice, "info", start)
    previous = chat.router.on_turn_end
    shown: list[str] = []

    async def review() -> None:
        line = await asyncio.to_thread(worktree_review_line, root)
        if line is not None and (not shown or shown[-1] != line):
            shown.append(line)
            chat.add_notice("info", line)

    def ended(done: ev.TurnDone, failure: ev.TurnFailed | None, elapsed: float | None) -> None:
        if previous is not None:
            previous(done, failure, elapsed)
        chat.run_worker(review(), group="worktree-review")

    chat.router.on_turn_end = ended
