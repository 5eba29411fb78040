"""The `wyckoff` entry point.

Sub-commands live in their own modules and are imported only when chosen, so
`wyckoff --help` and `wyckoff --version` stay near Python's own start-up time (no
textual, no provider SDK). Each command module has `configure(parser)` and
`run(args) -> int`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from wyckoff_cli import __version__

# name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "chat": ("wyckoff_cli.cli.chat_cmd", "open the interactive app (the default command)"),
    "run": ("wyckoff_cli.cli.run_cmd", "run one turn headless and print the answer or events"),
    "review": ("wyckoff_cli.cli.review_cmd", "review a change read-only: findings checked against the code"),
    "config": ("wyckoff_cli.cli.config_cmd", "see and edit the configuration"),
    "permissions": ("wyckoff_cli.cli.permissions_cmd", "list, add, remove and trust saved allow/deny rules"),
    "sessions": ("wyckoff_cli.cli.sessions_cmd", "saved sessions: list, show, export, delete, prune"),
    "model": ("wyckoff_cli.cli.model_cmd", "models: context windows, prices, default, fallbacks, aliases"),
    "usage": ("wyckoff_cli.cli.usage_cmd", "tokens and cost by model, agent, purpose, day"),
    "memory": ("wyckoff_cli.cli.memory_cmd", "durable memories: list, search, add, delete, clear"),
    "agents": (
        "wyckoff_cli.cli.agents_cmd",
        "sub-agents for the task tool: list them and where they come from",
    ),
    "mcp": ("wyckoff_cli.cli.mcp_cmd", "MCP servers: list, get, add, remove, trust, login"),
    "lsp": (
        "wyckoff_cli.cli.lsp_cmd",
        "language servers: status (found, running, failed), trust a project's",
    ),
    "plugin": (
        "wyckoff_cli.cli.plugin_cmd",
        "Claude Code plugins: marketplaces, install, list, enable, disable, remove, update",
    ),
    "hooks": ("wyckoff_cli.cli.hooks_cmd", "user hooks: list them with source and trust, trust a project's"),
    "checkpoints": (
        "wyckoff_cli.cli.checkpoints_cmd",
        "checkpoints of the work tree: list, diff, restore, prune",
    ),
    "ps": ("wyckoff_cli.cli.ps_cmd", "background sessions of this project: state, cost, what each waits for"),
    "attach": ("wyckoff_cli.cli.attach_cmd", "open the app on a background session, live"),
    "stop": ("wyckoff_cli.cli.stop_cmd", "end a background session cleanly"),
    "worktree": (
        "wyckoff_cli.cli.worktree_cmd",
        "git worktrees of sessions and sub-agents: list, diff, merge, remove, prune",
    ),
    "batch": (
        "wyckoff_cli.cli.batch_cmd",
        "run many tasks headless, each in its own clone, locally or on Ray",
    ),
    "acp": ("wyckoff_cli.cli.acp_cmd", "serve the Agent Client Protocol on stdio (for Zed, JetBrains, Toad)"),
}


def build_parser(selected: str | None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wyckoff",
        description="Wyckoff: a terminal coding assistant.",
        epilog="Run `wyckoff COMMAND --help` for a command's options. Docs: docs/ in the repository.",
    )
    parser.add_argument("--version", action="version", version=f"wyckoff {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        child = sub.add_parser(name, help=help_text, description=help_text)
        if name == selected:
            importlib.import_module(module).configure(child)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    selected = next((a for a in args_list if not a.startswith("-")), None)
    if selected not in COMMANDS and not {"-h", "--help", "--version"} & set(args_list):
        args_list.insert(0, "chat")  # plain `wyckoff [PATH] [--model ...]` opens the app
        selected = "chat"
    parser = build_parser(selected if selected in COMMANDS else None)
    args = parser.parse_args(args_list)
    args.argv = args_list  # as typed: `run --background` passes it on to the detached process
    if args.command is None:
        parser.print_help()
        return 0
    from wyckoff_cli.cli.logs import setup_logging
    from wyckoff_cli.core.errors import WyckoffError

    setup_logging()
    module = importlib.import_module(COMMANDS[args.command][0])
    try:
        return int(module.run(args))
    except WyckoffError as exc:
        print(f"wyckoff: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("wyckoff: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, as Unix tools do.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
