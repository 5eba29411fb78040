"""`wyckoff ps [--json] [--all]`: the background sessions of this project.

Read from the registry (storage/running.py) without starting anything: one git call
to know the project, then a small JSON file per session. A session whose process
died without ending cleanly shows as `failed`. JSON: a list of objects with exactly
`id, state, title, model, worktree, branch, started, elapsed_s, cost_usd, waiting_for`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

FIELDS = (
    "id",
    "state",
    "title",
    "model",
    "worktree",
    "branch",
    "started",
    "elapsed_s",
    "cost_usd",
    "waiting_for",
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="a JSON list, one object per session")
    parser.add_argument("--all", action="store_true", help="every project's sessions, not only this one's")


def rows(project: Path | None) -> list[dict[str, Any]]:
    """One dict per session of `project` (None: all), newest first, with `FIELDS`."""
    from wyckoff_cli.storage.running import RunningRegistry

    return [
        {
            "id": e.id,
            "state": e.state,
            "title": e.title,
            "model": e.model,
            "worktree": e.worktree,
            "branch": e.branch,
            "started": e.started,
            "elapsed_s": e.elapsed_s(),
            "cost_usd": round(e.cost_usd, 6),
            "waiting_for": e.waiting_for,
        }
        for e in RunningRegistry().entries(project)
    ]


def current_project() -> Path:
    from wyckoff_cli.storage.paths import find_project_root
    from wyckoff_cli.storage.running import git_place

    return git_place(find_project_root(Path.cwd().resolve())).project


def run(args: argparse.Namespace) -> int:
    found = rows(None if args.all else current_project())
    if args.json:
        print(json.dumps(found, ensure_ascii=False, indent=2))
        return 0
    if not found:
        where = "" if args.all else " of this project (`wyckoff ps --all`: every project's)"
        print(f"No background sessions{where}. Start one with: wyckoff run --background PROMPT")
        return 0
    table = [["ID", "STATE", "ELAPSED", "COST", "MODEL", "WORKTREE", "BRANCH", "TITLE / WAITING FOR"]]
    for row in found:
        what = f"waits for {row['waiting_for']}" if row["waiting_for"] else row["title"]
        table.append(
            [
                row["id"],
                row["state"],
                _duration(row["elapsed_s"]),
                f"${row['cost_usd']:.4f}",
                row["model"] or "-",
                row["worktree"] or "-",
                row["branch"] or "-",
                what,
            ]
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]) - 1)]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1])
    return 0


def _duration(seconds: float) -> str:
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
