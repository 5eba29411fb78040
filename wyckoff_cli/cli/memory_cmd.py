"""`wyckoff memory list|search|add|delete|clear`: the durable memories.

Memories live in one SQLite database in the data dir (`memory.db`), scoped to the
user (every project) or to a project root. Commands act on the user's memories and
those of the current project (the folder holding `.git` or `.wyckoff` at or above
the working directory) unless told otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wyckoff_cli.core.errors import UsageError

if TYPE_CHECKING:
    from wyckoff_cli.context.memory import Memory, MemoryStore

KINDS = ("preference", "fact", "decision", "other")


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="list memories, newest first")
    listing.add_argument(
        "--scope",
        choices=("all", "user", "project", "everywhere"),
        default="all",
        help="all: yours and this project's (default); everywhere: every project's too",
    )
    listing.add_argument("--json", action="store_true", help="print JSON lines")
    search = actions.add_parser("search", help="search memories (as recall would rank them)")
    search.add_argument("query", nargs="+")
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--json", action="store_true", help="print JSON lines")
    add = actions.add_parser("add", help="save a memory")
    add.add_argument("text", nargs="+")
    add.add_argument("--kind", choices=KINDS, default="fact")
    add.add_argument("--scope", choices=("project", "user"), default="project")
    delete = actions.add_parser("delete", help="delete memories by id")
    delete.add_argument("ids", nargs="+", type=int, metavar="ID")
    clear = actions.add_parser("clear", help="delete every memory of a scope")
    clear.add_argument(
        "--scope",
        choices=("project", "user", "all"),
        default="project",
        help="project: this project's (default); user: yours; all: both",
    )
    clear.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    for sub in (listing, search, add, delete, clear):
        sub.add_argument("--cwd", type=Path, default=None, help="project folder (default: current)")


def open_store() -> MemoryStore:
    from wyckoff_cli.context.memory import MemoryStore
    from wyckoff_cli.storage.paths import memory_db_path

    return MemoryStore(memory_db_path())


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.storage.paths import find_project_root

    project = find_project_root((args.cwd or Path.cwd()).resolve())
    with open_store() as store:
        if args.action == "list":
            memories = store.list_memories(project=project, scope=args.scope)
            _print(memories, as_json=args.json, empty="No memories.")
        elif args.action == "search":
            found = store.search(" ".join(args.query), project=project, limit=args.limit)
            _print([s.memory for s in found], as_json=args.json, empty="No matching memories.")
        elif args.action == "add":
            result = store.add(" ".join(args.text), kind=args.kind, scope=args.scope, project=project)
            memory = result.memory
            if result.created:
                print(f"saved #{memory.id} ({memory.scope}, {memory.kind})")
            else:
                print(f"already remembered as #{memory.id}: {memory.text}")
        elif args.action == "delete":
            deleted = store.delete(args.ids)
            missing = len(set(args.ids)) - deleted
            print(f"deleted {deleted} memor{'y' if deleted == 1 else 'ies'}")
            if missing:
                print(f"wyckoff: {missing} id(s) not found", file=sys.stderr)
                return 1
        elif args.action == "clear":
            count = len(store.list_memories(project=project, scope=args.scope))
            if count == 0:
                print("nothing to clear")
                return 0
            if not args.yes and not _confirm(f"Delete {count} memories ({_describe(args.scope, project)})?"):
                raise UsageError("not cleared (pass --yes to clear without asking)")
            deleted = store.clear(scope=args.scope, project=project)
            print(f"deleted {deleted} memor{'y' if deleted == 1 else 'ies'}")
    return 0


def _describe(scope: str, project: Path) -> str:
    if scope == "user":
        return "your user-level memories"
    if scope == "project":
        return f"project {project}"
    return f"yours and project {project}"


def _confirm(question: str) -> bool:
    if not sys.stdin.isatty():
        return False
    answer = input(f"{question} [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def _print(memories: list[Memory], *, as_json: bool, empty: str) -> None:
    if as_json:
        for memory in memories:
            print(json.dumps(_as_dict(memory), ensure_ascii=False))
        return
    if not memories:
        print(empty)
        return
    for memory in memories:
        where = "user" if memory.scope == "user" else f"project {memory.project}"
        print(f"#{memory.id}  {memory.kind:<10}  {_date(memory.created_at)}  {where}")
        print(f"    {memory.text}")


def _as_dict(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "text": memory.text,
        "kind": memory.kind,
        "scope": memory.scope,
        "project": memory.project,
        "created_at": _iso(memory.created_at),
        "used_at": _iso(memory.used_at) if memory.used_at else None,
        "use_count": memory.use_count,
        "source_session": memory.source_session,
    }


def _date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d")


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).astimezone().isoformat(timespec="seconds")
