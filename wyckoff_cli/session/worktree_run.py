"""A host's sessions in a named git worktree that lives across its turns (the Python
API's `Agent(worktree=NAME)`, docs/SDK.md).

`enter_worktree` opens the worktree NAME of the repository around the workspace,
making it (from HEAD, as `wyckoff run --worktree NAME` does) when there is none, and
records this process as using it; a worktree another live session is using is
refused. `leave_worktree` is the CLI's end-of-session rule: a worktree with no changes
and no commits is removed with its branch (the next turn makes it again), any other is
released and kept, with the one line that says how to review and merge it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wyckoff_cli.core.errors import UsageError
from wyckoff_cli.runtime import worktrees as wt


@dataclass
class WorktreeSession:
    """The worktree a turn runs in: `folder` is where the session is built (the same
    subfolder of the worktree as the workspace is of its repository)."""

    worktree: wt.Worktree
    folder: Path
    created: bool

    @property
    def name(self) -> str:
        return self.worktree.name

    @property
    def branch(self) -> str:
        return self.worktree.record.branch


def enter_worktree(workspace: Path, name: str, *, title: str = "") -> WorktreeSession:
    """Open (or make) worktree `name` of the repository around `workspace` and claim it."""
    try:
        worktree = wt.get_worktree(workspace, name)
        created = False
    except wt.WorktreeError:
        worktree = wt.create_worktree(workspace, name, title=title)  # bad names, no repository: its errors
        created = True
    if not worktree.exists():
        raise UsageError(
            f"worktree {name}: its folder {worktree.path} is missing (wyckoff worktree prune removes its record)"
        )
    if worktree.owner_alive() and worktree.record.pid is not None and not _is_ours(worktree.record.pid):
        raise UsageError(f"worktree {name} is in use by another session (process {worktree.record.pid})")
    worktree.claim()
    inside = workspace.resolve().relative_to(worktree.repo.current.root)
    folder = worktree.path / inside
    return WorktreeSession(worktree, folder if folder.is_dir() else worktree.path, created)


def leave_worktree(place: WorktreeSession, session_id: str | None) -> str | None:
    """The end of a turn in `place`: record its session, then remove the worktree when
    it holds nothing (None) or release it and return the review-and-merge line."""
    record = place.worktree.record
    if session_id is not None:
        record.session_id = session_id
    return wt.finish_session(place.worktree)


def _is_ours(pid: int) -> bool:
    import os

    return pid == os.getpid()


# --------------------------------------------------------------------------- what the app says


def worktree_start_line(root: Path) -> str | None:
    """The transcript's first line for a session whose workspace is a Wyckoff worktree
    (None elsewhere): which one, its branch, and that the main tree is not touched."""
    worktree = wt.worktree_at(root)
    if worktree is None:
        return None
    return (
        f"Working in worktree {worktree.name} ({worktree.path}) on the branch {worktree.record.branch}; "
        f"your files in {worktree.repo.main} are not touched"
    )


def worktree_review_line(root: Path) -> str | None:
    """After a turn: what the worktree holds and how to review and merge it, or None
    (not a worktree, or nothing changed since it was made)."""
    worktree = wt.worktree_at(root)
    if worktree is None or not worktree.exists():
        return None
    found = wt.summary(worktree)
    if found.empty:
        return None
    count = len(found.files)
    return (
        f"Worktree {worktree.name}: {count} file{'s' * (count != 1)} changed on {worktree.record.branch}. "
        f"Review: /worktree diff {worktree.name}; merge, from {worktree.repo.main}: "
        f"wyckoff worktree merge {worktree.name}"
    )
