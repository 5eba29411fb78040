"""`/worktree`, `/worktree diff NAME`, `/worktree merge NAME [--squash]`: the project's
git worktrees from inside a session (the app, ACP and `wyckoff run "/worktree ..."`
alike). Typing the merge is the user's approval; the tree it merges into is the
session's own (runtime/worktrees, docs/PARALLEL.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime import worktrees as wt

USAGE = "/worktree takes no argument (the list), `diff NAME` or `merge NAME [--squash]`"


async def worktree_output(root: Path, argument: str) -> ev.RuntimeEvent:
    try:
        return await asyncio.to_thread(_answer, root, argument.split())
    except wt.WorktreeError as exc:
        return ev.Notice("warning", exc.message)


def _answer(root: Path, words: list[str]) -> ev.RuntimeEvent:
    if not words:
        return _listing(root)
    verb, rest = words[0], words[1:]
    squash = "--squash" in rest
    names = [word for word in rest if word != "--squash"]
    if len(names) != 1 or verb not in ("diff", "merge") or (squash and verb != "merge"):
        return ev.Notice("warning", USAGE)
    worktree = wt.get_worktree(root, names[0])
    if verb == "diff":
        text = wt.diff(worktree) or "(no changes)"
        return ev.CommandOutput(
            "worktree", title=f"worktree {worktree.name} ({worktree.record.branch})", text=text
        )
    into = wt.open_repository(root).current
    result = wt.merge(worktree, into, squash=squash)
    return ev.Notice("info", result.line(worktree, into.root))


def _listing(root: Path) -> ev.RuntimeEvent:
    found = wt.list_worktrees(root)
    if not found:
        return ev.Notice("info", "No worktrees (a task with isolation worktree or --worktree makes one)")
    rows = []
    for worktree in found:
        changes = []
        commits = worktree.commits()
        if commits:
            changes.append(f"{commits} commit{'s' * (commits != 1)}")
        if worktree.uncommitted():
            changes.append("uncommitted")
        rows.append(
            [worktree.name, worktree.record.branch, worktree.record.origin, ", ".join(changes) or "none"]
        )
    return ev.CommandOutput(
        "worktree", title="Worktrees", columns=["name", "branch", "origin", "changes"], rows=rows
    )
