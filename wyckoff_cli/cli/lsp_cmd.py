"""`wyckoff lsp status [--json]` and `wyckoff lsp trust`: the language servers this
project could run (found on PATH or in its own virtualenv, or configured), with their
languages and state, headless and before any server runs; trusting the project's own
`[lsp.servers]` commands."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    status = actions.add_parser("status", help="each server with its languages and state")
    status.add_argument("--json", action="store_true", help="print one JSON object per server")
    trust = actions.add_parser(
        "trust", help="trust the server commands of this project's .wyckoff/config.toml"
    )
    trust.add_argument("--yes", "-y", action="store_true", help="do not ask (for scripts and CI)")
    for child in (status, trust):
        child.add_argument("--cwd", type=Path, default=None, help="project folder (default: current)")


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.session.builder import open_workspace
    from wyckoff_cli.session.lsp import (
        project_lsp_servers,
        project_runs_programs,
        trust_project_servers,
        trust_state,
        workspace_servers,
    )
    from wyckoff_cli.storage.paths import project_config_file
    from wyckoff_cli.tools.lsp.manager import LspManager
    from wyckoff_cli.tools.lsp.report import status_lines

    workspace = open_workspace((args.cwd or Path.cwd()).expanduser().resolve())
    root, config = workspace.root, workspace.config
    if args.action == "status":
        manager = LspManager(root, config.lsp, workspace_servers(root, config))
        statuses = manager.status()
        if args.json:
            for status in statuses:
                print(json.dumps(status.as_dict(), ensure_ascii=False))
            return 0
        if not config.lsp.enabled:
            print("Language servers are off (`[lsp] enabled = false`).")
        print("\n".join(status_lines(statuses)))
        return 0
    project_file = project_config_file(root)
    servers = project_lsp_servers(root)
    if not project_runs_programs(servers) or trust_state(project_file, servers) == "trusted":
        print(
            "Nothing to trust: this project's config sets no language-server commands, or they are trusted."
        )
        return 0
    print(f"{project_file} runs these language servers:")
    for name, table in servers.items():
        if isinstance(table, dict):
            command = " ".join([str(table.get("command", f"({name})")), *map(str, table.get("args", []))])
            print(f"  {name}: {command}  env {table.get('env', {})}")
    if not args.yes:
        if not sys.stdin.isatty():
            print("wyckoff: not a terminal; run `wyckoff lsp trust --yes` to trust these.", file=sys.stderr)
            return 2
        if input("Trust and run these commands? [y/N] ").strip().lower() not in ("y", "yes"):
            print("Not trusted.")
            return 1
    trust_project_servers(project_file, servers)
    print("Trusted.")
    return 0
