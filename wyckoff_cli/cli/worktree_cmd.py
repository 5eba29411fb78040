"""`wyckoff worktree`: the git worktrees Wyckoff's sessions and sub-agents work in.

    wyckoff worktree list [--json]         name, branch, base, session, state of each
    wyckoff worktree diff NAME [--stat]    the branch's changes since it was made
    wyckoff worktree merge NAME [--squash] commit its leftovers, merge into the current branch
    wyckoff worktree remove NAME [--force] delete worktree and branch (refuses unmerged work)
    wyckoff worktree prune                 remove those whose session process died

Every failure is one line naming the reason (exit 1); see docs/PARALLEL.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

VERBS = ("list", "diff", "merge", "remove", "prune")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cwd", type=Path, default=None, help="a folder of the repository (default: current)"
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = verbs.add_parser("list", help="the worktrees: name, branch, base, session, changes")
    listing.add_argument("--json", action="store_true", help="one JSON array")
    shown = verbs.add_parser("diff", help="the branch's changes since it was made, committed and uncommitted")
    shown.add_argument("name")
    shown.add_argument("--stat", action="store_true", help="a diff stat instead of the patch")
    merging = verbs.add_parser("merge", help="commit its leftovers, then merge it into the current branch")
    merging.add_argument("name")
    merging.add_argument("--squash", action="store_true", help="one commit instead of a merge commit")
    removing = verbs.add_parser("remove", help="delete the worktree and its branch")
    removing.add_argument("name")
    removing.add_argument("--force", action="store_true", help="even with work not merged")
    verbs.add_parser("prune", help="remove the worktrees whose session process died (listed first)")


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.runtime import worktrees as wt

    cwd = (args.cwd or Path.cwd()).expanduser().resolve()
    if args.verb == "list":
        return _list(cwd, args.json)
    if args.verb == "prune":
        return _prune(cwd)
    worktree = wt.get_worktree(cwd, args.name)
    if args.verb == "diff":
        sys.stdout.write(wt.diff(worktree, stat=args.stat))
        return 0
    if args.verb == "merge":
        into = wt.open_repository(cwd).current
        result = wt.merge(worktree, into, squash=args.squash, message=_title(worktree))
        if result.committed_leftovers:
            print(f"committed the uncommitted changes on {worktree.record.branch}", file=sys.stderr)
        print(result.line(worktree, into.root))
        return 0
    wt.remove(worktree, force=args.force, into=wt.open_repository(cwd).current)
    print(f"removed worktree {worktree.name} and its branch {worktree.record.branch}")
    return 0


def _title(worktree: Any) -> str | None:
    """The merge commit's message: the session's title (its first prompt until titled)."""
    if worktree.record.session_id is None:
        return None
    from wyckoff_cli.core.errors import WyckoffError
    from wyckoff_cli.storage.sessions import SessionStore

    try:
        info = SessionStore().find(worktree.record.session_id)
    except (WyckoffError, OSError):
        return None
    return info.title.strip() or None


def rows(cwd: Path) -> list[dict[str, Any]]:
    """What `list --json` prints: one object per worktree."""
    from wyckoff_cli.runtime import worktrees as wt

    found: list[dict[str, Any]] = []
    for worktree in wt.list_worktrees(cwd):
        record = worktree.record
        exists = worktree.exists()
        found.append(
            {
                "name": record.name,
                "path": record.path,
                "branch": record.branch,
                "base": record.base,
                "origin": record.origin,
                "session_id": record.session_id,
                "pid": record.pid if worktree.owner_alive() else None,
                "state": "missing" if not exists else ("in use" if worktree.owner_alive() else "idle"),
                "uncommitted": bool(worktree.uncommitted()) if exists else False,
                "commits": worktree.commits(),
                "created": record.created,
            }
        )
    return found


def _list(cwd: Path, as_json: bool) -> int:
    found = rows(cwd)
    if as_json:
        print(json.dumps(found, indent=2))
        return 0
    if not found:
        print("no worktrees (wyckoff run --worktree or chat --worktree makes one)")
        return 0
    header = ("NAME", "BRANCH", "BASE", "STATE", "CHANGES", "SESSION")
    table = [header]
    for row in found:
        changes = ", ".join(
            part
            for part in (
                f"{row['commits']} commit{'s' * (row['commits'] != 1)}" if row["commits"] else "",
                "uncommitted" if row["uncommitted"] else "",
            )
            if part
        )
        state = row["state"] + (f" (pid {row['pid']})" if row["pid"] else "")
        session = row["session_id"] or "-"
        table.append((row["name"], row["branch"], row["base"][:10], state, changes or "none", session))
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
    return 0


def _prune(cwd: Path) -> int:
    from wyckoff_cli.runtime import worktrees as wt

    dead = wt.dead_worktrees(cwd)
    if not dead:
        print("nothing to prune: every worktree's session is running or ended cleanly")
        return 0
    for worktree in dead:
        print(f"{worktree.name}: its session (pid {worktree.record.pid}) is gone")
    for pruned in wt.prune(cwd):
        kept = f"; its work is kept on the branch {pruned.kept_branch}" if pruned.kept_branch else ""
        print(f"removed worktree {pruned.name}{kept}")
    return 0
