"""`wyckoff mcp list|get|add|remove|trust|untrust|login`: the MCP servers of this workspace.

    wyckoff mcp list [--json]                    connect and show each server's state
    wyckoff mcp get NAME                         one server: configuration, trust, tools
    wyckoff mcp add NAME [--scope project|user] [--env K=V] -- COMMAND ARGS...
    wyckoff mcp add NAME --url URL [--transport http|sse] [--header K=V] [--scope ...]
    wyckoff mcp remove NAME [--scope project|user]
    wyckoff mcp trust [NAME]                     trust .mcp.json; accept changed tools
    wyckoff mcp untrust                          forget the trust given to this project's .mcp.json
    wyckoff mcp login NAME [--no-browser]        sign in to an OAuth-protected server

`add` writes the project's `.mcp.json` by default (Claude Code's format), or
`[mcp_servers.NAME]` in the user config with `--scope user`. See docs/MCP.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import UsageError

_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("list", help="connect to every server and show its state and tool count")
    show.add_argument("--json", action="store_true", help="print JSON objects")
    show.add_argument("--timeout", type=float, default=None, help="seconds to wait per server")
    get = actions.add_parser("get", help="one server: its configuration, trust and tools")
    get.add_argument("name")
    add = actions.add_parser(
        "add", help="add a server: `add NAME -- COMMAND ARGS...` or `add NAME --url URL`"
    )
    add.add_argument("name")
    add.add_argument(
        "server_command", nargs="*", metavar="COMMAND", help="after --: the command and its arguments (stdio)"
    )
    add.add_argument("--url", help="the endpoint of an HTTP (or SSE) server")
    add.add_argument("--transport", choices=("http", "sse"), default="http", help="with --url (default http)")
    add.add_argument(
        "--header", action="append", default=[], metavar="K=V", help="an HTTP header (repeatable)"
    )
    add.add_argument("--env", action="append", default=[], metavar="K=V", help="an environment variable")
    add.add_argument("--scope", choices=("project", "user"), default="project", help="where to save it")
    remove = actions.add_parser("remove", help="remove a server")
    remove.add_argument("name")
    remove.add_argument("--scope", choices=("project", "user"), help="only from this place")
    trust = actions.add_parser(
        "trust", help="trust the project's .mcp.json and accept changed tool definitions"
    )
    trust.add_argument("name", nargs="?", help="accept only this server's tool changes")
    actions.add_parser(
        "untrust", help="forget the trust given to this project's .mcp.json (its servers ask again)"
    )
    login = actions.add_parser("login", help="sign in to an OAuth-protected HTTP server")
    login.add_argument("name")
    login.add_argument(
        "--no-browser", action="store_true", help="print the sign-in URL instead of opening it"
    )


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.session.builder import open_workspace

    workspace = open_workspace(Path.cwd())
    action = args.action
    if action == "add":
        return _add(args, workspace)
    if action == "remove":
        return _remove(args, workspace)
    if action == "untrust":
        return _untrust(workspace)
    return asyncio.run(_connected(args, workspace))


def _kv(items: list[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{what} must be K=V, got {item!r}")
        out[key] = value
    return out


def _add(args: argparse.Namespace, workspace: Any) -> int:
    from wyckoff_cli.tools.mcp.config import PROJECT_FILE
    from wyckoff_cli.tools.mcp.trust import TrustStore

    name = args.name
    if not _NAME.fullmatch(name):
        raise UsageError(f"invalid server name {name!r}: use letters, digits, '_', '-' and '.'")
    if bool(args.url) == bool(args.server_command):
        raise UsageError("give either `-- COMMAND ARGS...` (a stdio server) or --url URL (an HTTP server)")
    entry: dict[str, Any]
    if args.url:
        entry = {"type": args.transport, "url": args.url}
        if args.header:
            entry["headers"] = _kv(args.header, "--header")
    else:
        entry = {"command": args.server_command[0], "args": args.server_command[1:]}
        if args.env:
            entry["env"] = _kv(args.env, "--env")
    if args.scope == "user":
        from wyckoff_cli.storage.config import update_config_file
        from wyckoff_cli.storage.paths import config_file

        target = config_file()
        update_config_file(target, {f'mcp_servers."{name}"': entry})
        print(f"added {name} to {target}")
        return 0
    path = workspace.root / PROJECT_FILE
    store = TrustStore()
    was_trusted = not path.exists() or store.project_trusted(path)
    data = _read_json(path)
    key = "servers" if "servers" in data and "mcpServers" not in data else "mcpServers"
    data.setdefault(key, {})[name] = entry
    _write_json(path, data)
    if was_trusted:  # the user wrote this file themselves: it stays trusted
        from wyckoff_cli.tools.mcp.config import read_project_file

        store.trust_project(path, {s.name: s.describe() for s in read_project_file(path)})
    print(f"added {name} to {path}")
    return 0


def _remove(args: argparse.Namespace, workspace: Any) -> int:
    from wyckoff_cli.storage.config import read_toml, update_config_file
    from wyckoff_cli.storage.paths import config_file
    from wyckoff_cli.tools.mcp.config import PROJECT_FILE
    from wyckoff_cli.tools.mcp.trust import TrustStore

    removed: list[str] = []
    if args.scope in (None, "project"):
        path = workspace.root / PROJECT_FILE
        data = _read_json(path) if path.exists() else {}
        for key in ("mcpServers", "servers"):
            table = data.get(key)
            if isinstance(table, dict) and args.name in table:
                store = TrustStore()
                was_trusted = store.project_trusted(path)
                del table[args.name]
                _write_json(path, data)
                if was_trusted:
                    from wyckoff_cli.tools.mcp.config import read_project_file

                    store.trust_project(path, {s.name: s.describe() for s in read_project_file(path)})
                removed.append(str(path))
    if args.scope in (None, "user"):
        target = config_file()
        servers = (read_toml(target) or {}).get("mcp_servers", {})
        if isinstance(servers, dict) and args.name in servers:
            update_config_file(target, {f'mcp_servers."{args.name}"': None})
            removed.append(str(target))
    if not removed:
        raise UsageError(f"no MCP server {args.name!r} (see `wyckoff mcp list`)")
    for where in removed:
        print(f"removed {args.name} from {where}")
    return 0


def _read_json(path: Path) -> dict[str, Any]:
    from wyckoff_cli.core.errors import ConfigError

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}, line {exc.lineno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data


def _write_json(path: Path, data: dict[str, Any]) -> None:
    from wyckoff_cli.storage.atomic import write_atomic

    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=0o644)


# --------------------------------------------------------------------------- connecting


async def _connected(args: argparse.Namespace, workspace: Any) -> int:
    from wyckoff_cli.session.mcp import open_mcp

    action = args.action
    if action == "trust":
        return await _trust(args, workspace)
    if action == "login":
        return await _login(args, workspace)
    manager = open_mcp(workspace, None)
    try:
        if action == "get" and manager.config.get(args.name) is None:
            raise UsageError(f"no MCP server {args.name!r} (see `wyckoff mcp list`)")
        await manager.wait_ready(getattr(args, "timeout", None))
        if action == "list":
            return _print_list(manager, args.json)
        return _print_get(manager, args.name)
    finally:
        await manager.aclose()


def _print_list(manager: Any, as_json: bool) -> int:
    from wyckoff_cli.tools.mcp.extras import status_rows

    rows = status_rows(manager)
    if as_json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print("No MCP servers. Add one with `wyckoff mcp add NAME -- COMMAND ARGS...`,")
        print("or put Claude Code's .mcp.json in the project root.")
        return 0
    from wyckoff_cli.tools.mcp.extras import format_table

    print(format_table(manager))
    return 0


def _print_get(manager: Any, name: str) -> int:
    from wyckoff_cli.tools.mcp.names import prompt_command
    from wyckoff_cli.tools.mcp.oauth import describe_tokens

    spec = manager.config.get(name)
    status = next(s for s in manager.statuses() if s.name == name)
    print(f"{name}  ({spec.shown_scope}: {spec.source})")
    print(f"  transport:  {spec.transport}")
    print(f"  runs:       {spec.describe()}")
    if spec.env:
        print(f"  env:        {', '.join(sorted(spec.env))} (values not shown)")
    if spec.headers:
        print(f"  headers:    {', '.join(sorted(spec.headers))} (values not shown)")
    print(f"  enabled:    {'yes' if spec.enabled else 'no'}")
    print(f"  timeouts:   start {spec.startup_timeout:g} s, each call {spec.tool_timeout:g} s")
    if spec.scope == "project":
        print(f"  trusted:    {'yes' if manager.project_trusted() else 'no (run `wyckoff mcp trust`)'}")
    if spec.transport != "stdio":
        print(f"  sign-in:    {describe_tokens(name)}")
    print(f"  state:      {status.state}" + (f": {status.reason}" if status.reason else ""))
    connection = manager.connection(name)
    if connection is not None and status.state == "connected":
        offered = {t.extra.get("mcp_tool"): t for t in manager.tools()}
        print(f"  tools ({len(connection.listing.tools)}):")
        for tool in connection.listing.tools:
            proxy = offered.get(tool.name)
            mark = "read-only" if proxy is not None and proxy.extra.get("read_only") else "asks"
            label = proxy.name if proxy is not None else f"{tool.name} (not offered)"
            print(
                f"    {label}  [{mark}]  {(tool.description or '').splitlines()[0] if tool.description else ''}"
            )
        if connection.listing.resources:
            print(f"  resources ({len(connection.listing.resources)}):")
            for resource in connection.listing.resources:
                print(f"    @{name}:{resource.uri}  {resource.name or ''}")
        if connection.listing.prompts:
            print(f"  prompts ({len(connection.listing.prompts)}):")
            for prompt in connection.listing.prompts:
                print(f"    /{prompt_command(name, prompt.name)}  {prompt.description or ''}")
    return 0


def _untrust(workspace: Any) -> int:
    from wyckoff_cli.tools.mcp.config import PROJECT_FILE
    from wyckoff_cli.tools.mcp.trust import TrustStore

    path = workspace.root / PROJECT_FILE
    if TrustStore().forget_project(path):
        print(f"No longer trusted: {path} (its servers start again only after `wyckoff mcp trust`)")
    else:
        print(f"Nothing was trusted here ({path} has no trust record).")
    return 0


async def _trust(args: argparse.Namespace, workspace: Any) -> int:
    from wyckoff_cli.session.mcp import open_mcp
    from wyckoff_cli.tools.mcp.config import load_mcp_config

    config = load_mcp_config(workspace.root, workspace.config)
    if args.name is not None and config.get(args.name) is None:
        raise UsageError(f"no MCP server {args.name!r} (see `wyckoff mcp list`)")
    if config.project_file is not None and config.project_servers():
        print(f"Trusting {config.project_file}; it starts:")
        for spec in config.project_servers():
            print(f"  {spec.name}: {spec.describe()}")
    accept = True if args.name is None else frozenset({args.name})
    manager = open_mcp(workspace, None, trust_project=True, accept_changes=accept)
    try:
        await manager.wait_ready()
        for status in manager.statuses():
            if args.name is not None and status.name != args.name:
                continue
            if status.state == "connected":
                print(f"{status.name}: {len(status.tools)} tool(s) trusted as they are now")
            elif status.state != "disabled":
                print(f"{status.name}: {status.state}" + (f" ({status.reason})" if status.reason else ""))
    finally:
        await manager.aclose()
    return 0


async def _login(args: argparse.Namespace, workspace: Any) -> int:
    from wyckoff_cli.runtime.loop import child_environment
    from wyckoff_cli.tools.mcp.config import McpConfig, load_mcp_config
    from wyckoff_cli.tools.mcp.manager import LOGIN_SECONDS, start_mcp
    from wyckoff_cli.tools.mcp.oauth import CredentialsTokenStorage, open_in_browser

    config = load_mcp_config(workspace.root, workspace.config)
    spec = config.get(args.name)
    if spec is None:
        raise UsageError(f"no MCP server {args.name!r} (see `wyckoff mcp list`)")
    if spec.transport == "stdio":
        raise UsageError(f"{args.name} is a stdio server: there is nothing to sign in to")

    async def show(url: str) -> None:
        print(f"Sign in to {args.name} in your browser:\n  {url}", file=sys.stderr)
        if not args.no_browser:
            await open_in_browser(url)

    CredentialsTokenStorage(args.name).clear()
    manager = start_mcp(
        McpConfig((spec,), config.project_file),
        root=workspace.root,
        env=child_environment(),
        trust_project=spec.scope == "project",
        interactive_auth=True,
        open_url=show,
    )
    try:
        connection = manager.connection(args.name)
        if connection is not None:
            await connection.wait_ready(spec.startup_timeout + LOGIN_SECONDS + 5)
        status = manager.statuses()[0]
        if status.state != "connected":
            raise UsageError(f"sign-in to {args.name} failed: {status.reason or status.state}")
        print(f"signed in to {args.name}; {len(status.tools)} tool(s)")
    finally:
        await manager.aclose()
    return 0
