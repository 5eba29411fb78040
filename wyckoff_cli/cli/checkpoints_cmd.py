"""`wyckoff checkpoints`: list, diff and restore the work tree's checkpoints.

    wyckoff checkpoints list [--session ID] [--json]
    wyckoff checkpoints diff CHECKPOINT              # changes since the checkpoint
    wyckoff checkpoints diff --session ID            # everything the session changed
    wyckoff checkpoints restore CHECKPOINT [--code | --conversation | --both] [--yes]
    wyckoff checkpoints prune [--keep-days N]

Without `--yes`, `restore` prints what it would do and exits 1, changing nothing.
The default session is the workspace's latest. See docs/CHECKPOINTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from wyckoff_cli.core.errors import UsageError

if TYPE_CHECKING:
    from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
    from wyckoff_cli.runtime.checkpoints.store import Checkpoint
    from wyckoff_cli.session.builder import Workspace
    from wyckoff_cli.storage.sessions import SessionStore


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = sub.add_parser("list", help="the checkpoints of a session, oldest first, and the disk use")
    listing.add_argument("--session", metavar="ID", help="a session id or prefix (default: the latest)")
    listing.add_argument("--json", action="store_true", help="one JSON object per line")
    diff = sub.add_parser("diff", help="what changed since a checkpoint, or in a whole session")
    diff.add_argument("checkpoint", nargs="?", help="a checkpoint id or prefix")
    diff.add_argument(
        "--session", metavar="ID", help="every change the session made (against its first checkpoint)"
    )
    restore = sub.add_parser("restore", help="restore the code and/or the conversation to a checkpoint")
    restore.add_argument("checkpoint", help="a checkpoint id or prefix")
    what = restore.add_mutually_exclusive_group()
    what.add_argument("--code", dest="what", action="store_const", const="code", help="the files (default)")
    what.add_argument(
        "--conversation",
        dest="what",
        action="store_const",
        const="conversation",
        help="the conversation only",
    )
    what.add_argument(
        "--both", dest="what", action="store_const", const="both", help="files and conversation"
    )
    restore.add_argument("--yes", action="store_true", help="do it (without: show the preview and exit 1)")
    prune = sub.add_parser("prune", help="remove checkpoints older than keep_days")
    prune.add_argument("--keep-days", type=int, metavar="N", help="instead of [checkpoints] keep_days")


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
    from wyckoff_cli.session.builder import open_workspace
    from wyckoff_cli.session.store import build_session_store

    workspace = open_workspace(Path.cwd())
    engine = CheckpointEngine.open(workspace.root, workspace.config.checkpoints)
    store = build_session_store(workspace.config)
    if args.action == "list":
        return _list(engine, store, workspace, args.session, args.json)
    if args.action == "diff":
        return _diff(engine, store, workspace, args.checkpoint, args.session)
    if args.action == "restore":
        return _restore(engine, store, args.checkpoint, args.what or "code", args.yes)
    return _prune(engine, args.keep_days)


def _session_id(
    engine: CheckpointEngine, store: SessionStore, workspace: Workspace, given: str | None
) -> str | None:
    if given:
        from wyckoff_cli.storage.sessions import SessionNotFound

        try:
            return store.find(given).id
        except SessionNotFound:
            matches = [s for s in engine.sessions() if s.startswith(given.strip().lower())]
            if len(matches) == 1:
                return matches[0]
            raise
    latest = store.latest(workspace.root)
    if latest is not None:
        return latest.id
    sessions = engine.sessions()
    return sessions[-1] if sessions else None


def _list(
    engine: CheckpointEngine, store: SessionStore, workspace: Workspace, session: str | None, as_json: bool
) -> int:
    session_id = _session_id(engine, store, workspace, session)
    checkpoints = engine.checkpoints(session_id) if session_id else []
    if as_json:
        for checkpoint in checkpoints:
            print(json.dumps(checkpoint.summary(), ensure_ascii=False))
        return 0
    texts = _message_texts(store, session_id)
    if not checkpoints:
        print(
            f"No checkpoints for session {session_id}." if session_id else "No checkpoints in this workspace."
        )
    else:
        print(f"Session {session_id}: {len(checkpoints)} checkpoint{'s' if len(checkpoints) != 1 else ''}")
        print(f"{'ID':<9} {'CREATED':<19}  {'TYPE':<8} {'FILES':>5}  WHAT")
        for checkpoint in checkpoints:
            print(
                f"{checkpoint.id:<9} {checkpoint.created[:19].replace('T', ' '):<19}  {checkpoint.type:<8} "
                f"{len(checkpoint.files):>5}  {_what(checkpoint, texts)}"
            )
    print(f"Disk use: {_size(engine.disk_use())} ({engine.folder})")
    return 0


def _what(checkpoint: Checkpoint, texts: dict[str, str]) -> str:
    if checkpoint.type == "restore":
        return f"saved before {checkpoint.action or 'restore'} to {checkpoint.restore_of}"
    calls = ", ".join(dict.fromkeys(str(c.get("name")) for c in checkpoint.calls))
    text = texts.get(checkpoint.message_id or "", "")
    flat = " ".join(text.split())
    return f"{calls}  “{flat[:50]}{'…' if len(flat) > 50 else ''}”" if flat else calls


def _message_texts(store: SessionStore, session_id: str | None) -> dict[str, str]:
    if session_id is None:
        return {}
    from wyckoff_cli.core.errors import WyckoffError

    try:
        loaded = store.load(session_id)
    except (WyckoffError, OSError):
        return {}
    return {m.id: m.text for m in loaded.history if m.role == "user"}


def _diff(
    engine: CheckpointEngine,
    store: SessionStore,
    workspace: Workspace,
    checkpoint: str | None,
    session: str | None,
) -> int:
    if (checkpoint is None) == (session is None):
        raise UsageError("give a CHECKPOINT or --session ID (one of them)")
    if checkpoint is not None:
        text = engine.diff_since(engine.find(checkpoint))
    else:
        session_id = _session_id(engine, store, workspace, session)
        if session_id is None or not engine.checkpoints(session_id):
            print(f"Session {session}: no checkpoints, so no changes recorded.", file=sys.stderr)
            return 0
        text = engine.session_diff(session_id)
    if not text:
        print("No changes.", file=sys.stderr)
        return 0
    sys.stdout.write(colour_diff(text) if _colour() else text)
    return 0


def _restore(engine: CheckpointEngine, store: SessionStore, given: str, what: str, yes: bool) -> int:
    checkpoint = engine.find(given)
    plan = engine.plan(checkpoint) if what in ("code", "both") else None
    loaded = None
    removed = 0
    if what in ("conversation", "both"):
        if not checkpoint.message_id:
            raise UsageError(
                f"checkpoint {checkpoint.id} belongs to no user message; restore its --code only"
            )
        loaded = store.load(checkpoint.session)
        ids = [m.id for m in loaded.history]
        if checkpoint.message_id not in ids:
            raise UsageError(
                f"the message of checkpoint {checkpoint.id} is no longer in session {checkpoint.session}'s "
                "conversation (rewound or compacted away); restore its --code only"
            )
        removed = len(ids) - ids.index(checkpoint.message_id)
    if plan is not None:
        sys.stdout.write(plan.preview_text() if not _colour() else colour_diff(plan.preview_text()))
    if loaded is not None:
        print(
            f"Conversation of session {checkpoint.session}: {removed} messages removed (from the checkpoint's "
            "user message on)."
        )
    if not yes:
        print("Nothing was changed. Run again with --yes to restore.", file=sys.stderr)
        return 1
    if plan is not None and not plan.empty:
        saved = engine.apply(plan, checkpoint.session, checkpoint.message_id)
        print(
            f"Restored. The state before was saved as checkpoint {saved.id} "
            f"(`wyckoff checkpoints restore {saved.id} --yes` undoes this)."
        )
    if loaded is not None and checkpoint.message_id:
        recorder = store.reopen(loaded)
        try:
            recorder.conversation.truncate_to(checkpoint.message_id)  # the recorder logs the rewind
        finally:
            recorder.close()
        print(f"Conversation rewound to before the checkpoint's message ({removed} messages removed).")
    return 0


def _prune(engine: CheckpointEngine, keep_days: int | None) -> int:
    if keep_days is not None and keep_days < 0:
        raise UsageError(f"--keep-days must be 0 or more, got {keep_days}")
    removed = engine.prune(keep_days)
    print(
        f"Removed {len(removed)} checkpoint{'s' if len(removed) != 1 else ''}; disk use now {_size(engine.disk_use())}."
    )
    return 0


def _size(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"


def _colour() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def colour_diff(text: str) -> str:
    """ANSI colours for a unified diff: additions green, removals red, hunks cyan."""
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith(("+++", "---", "diff --git")):
            out.append(f"\x1b[1m{line.rstrip(chr(10))}\x1b[0m\n")
        elif line.startswith("+"):
            out.append(f"\x1b[32m{line.rstrip(chr(10))}\x1b[0m\n")
        elif line.startswith("-"):
            out.append(f"\x1b[31m{line.rstrip(chr(10))}\x1b[0m\n")
        elif line.startswith("@@"):
            out.append(f"\x1b[36m{line.rstrip(chr(10))}\x1b[0m\n")
        else:
            out.append(line)
    return "".join(out)
