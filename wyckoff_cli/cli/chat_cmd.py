"""`wyckoff chat`: the interactive app (also plain `wyckoff`).

This module is the composition root of the app: it turns the configuration into a
`SessionBuilder` and a `ChatController` and starts the TUI over them. Textual is
imported only here, when chosen.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from wyckoff_cli.cli.agents_cmd import add_budget_argument
from wyckoff_cli.cli.worktree_session import add_worktree_argument
from wyckoff_cli.core.errors import UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path", nargs="?", type=Path, default=None, help="the project folder (default: current)"
    )
    parser.add_argument("--model", "-m", help="model id (provider:model) or alias; default from config")
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--continue",
        "-c",
        dest="continue_",
        action="store_true",
        help="continue the latest session of this project",
    )
    group.add_argument(
        "--resume",
        "-r",
        nargs="?",
        const="",
        default=None,
        metavar="ID",
        help="resume a session (a picker when no ID is given)",
    )
    parser.add_argument(
        "--permission-mode",
        choices=("default", "plan", "auto-edit", "auto", "yolo"),
        help="start in this permission mode (Shift+Tab cycles them)",
    )
    add_budget_argument(parser)
    add_worktree_argument(parser)
    parser.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "off"),
        help="how shell commands run (default: [shell] sandbox, workspace-write where it can start)",
    )


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.cli.worktree_session import run_in_worktree

    start = (args.path or Path.cwd()).expanduser().resolve()
    if not start.is_dir():
        raise UsageError(f"{start} is not a folder")
    if args.worktree is not None and (args.continue_ or args.resume is not None):
        raise UsageError("--worktree starts a new session: it does not go with --continue or --resume")
    return run_in_worktree(args.worktree, start, lambda folder: _run_app(args, folder))


def _run_app(args: argparse.Namespace, start: Path) -> int:
    from wyckoff_cli.tui import heap

    heap.hold_collection()  # no collector passes while the app is built (settled once warm)
    try:
        return _open_app(args, start)
    finally:
        heap.release_collection()  # a start refused, or the app closed before it was warm


def _open_app(args: argparse.Namespace, start: Path) -> int:
    from wyckoff_cli.cli.sessions_cmd import export_text
    from wyckoff_cli.session.builder import SessionBuilder, open_workspace
    from wyckoff_cli.session.controller import ChatController
    from wyckoff_cli.session.models import resolve_model_spec

    os.chdir(start)
    workspace = open_workspace(start)
    workspace.sandbox = args.sandbox
    resolve_model_spec(args.model or workspace.config.model, workspace.config)  # an unknown id fails here
    from wyckoff_cli.storage.paths import StorageError, data_dir, writable_problem

    problem = writable_problem(data_dir())  # the app saves sessions and prompt history there
    if problem is not None:
        raise StorageError(f"{problem}; the app needs it for sessions (`wyckoff run --no-session` does not)")
    builder = SessionBuilder(workspace, cwd=start, max_budget_usd=args.max_budget_usd)
    builder.mcp = _mcp_host(workspace, args.model)
    from wyckoff_cli.session.lsp import open_lsp

    builder.lsp = open_lsp(workspace.root, workspace.config)
    store = builder.sessions()
    loaded = None
    pick = False
    if args.continue_:
        latest = store.latest(workspace.root)
        if latest is None:
            raise UsageError(f"no earlier session in {workspace.root} to continue")
        loaded = store.load(latest.id)
    elif args.resume:
        loaded = store.load(args.resume)
    elif args.resume == "":
        pick = True
    busy = store.in_use(loaded) if loaded is not None else None
    if busy is not None:  # another process writes it: refuse before the app starts
        raise UsageError(busy)
    controller = ChatController(
        builder, model=args.model, mode=args.permission_mode, loaded=loaded, exporter=export_text
    )
    from wyckoff_cli.tui.app import WyckoffApp

    app = WyckoffApp(controller, pick_session=pick)
    app.run()
    if app.farewell:
        print(app.farewell)
    return 0


def _mcp_host(workspace: Any, model: str | None) -> Any:
    """The app's MCP servers: started when the chat screen mounts, kept across sessions;
    a server that needs an OAuth sign-in opens the browser."""
    from wyckoff_cli.session.mcp import open_mcp
    from wyckoff_cli.tools.mcp.host import McpHost

    return McpHost(
        lambda on_event: open_mcp(workspace, None, model=model, interactive_auth=True, on_event=on_event)
    )
