"""`wyckoff chat --worktree [NAME]` and `wyckoff run --worktree [NAME]`: the session
runs in a new git worktree (docs/PARALLEL.md).

The session is built for the worktree's folder (the same subfolder of it as the one
the user is in), so everything follows it: every tool's workspace root, the sandbox's
writable root (the main tree is read-only to it), checkpoints, the project config,
hooks and MCP servers (the worktree's own copies, trusted as files of their own), and
the session's record of where it ran. The worktree records this process, so
`wyckoff worktree prune` knows when it died. At the end a worktree with no changes
and no commits is removed with its branch; otherwise one line says how to review and
merge it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wyckoff_cli.runtime.worktrees import Worktree

WORKTREE_HELP = (
    "run the session in a new git worktree .wyckoff/worktrees/NAME on the branch wyckoff/NAME "
    "(a name is made up when none is given)"
)


def add_worktree_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--worktree", "-w", nargs="?", const="", default=None, metavar="NAME", help=WORKTREE_HELP
    )


def run_in_worktree(name: str | None, start: Path, body: Callable[[Path], int], title: str = "") -> int:
    """`body(folder)` in a new worktree of the repository around `start` (`name` None:
    `body(start)` as it is). Prints the worktree's notices and its end line to stderr."""
    if name is None:
        return body(start)
    from wyckoff_cli.runtime import worktrees as wt

    worktree = wt.create_worktree(start, name or None, title=title)
    for notice in worktree.notices:
        print(f"wyckoff: {notice}", file=sys.stderr)
    print(f"wyckoff: working in worktree {worktree.name} ({worktree.path}, branch {worktree.record.branch})",
          file=sys.stderr)  # fmt: skip
    worktree.claim()
    inside = start.resolve().relative_to(worktree.repo.current.root)
    folder = worktree.path / inside
    folder = folder if folder.is_dir() else worktree.path
    previous = Path.cwd()
    os.chdir(folder)
    try:
        return body(folder)
    finally:
        os.chdir(previous)
        _note_session(worktree)
        line = wt.finish_session(worktree)
        if line:
            print(f"wyckoff: {line}", file=sys.stderr)


def _note_session(worktree: Worktree) -> None:
    """Record the session that ran in the worktree (the latest of its folder)."""
    from wyckoff_cli.storage.sessions import SessionStore

    record = worktree.record
    try:
        latest = SessionStore().latest(worktree.path)
    except OSError:
        return
    if latest is not None:
        record.session_id = latest.id
        record.title = record.title or latest.title
