"""Which MCP servers a session has: the project's `.mcp.json` and the user's
`[mcp_servers.NAME]` tables.

`.mcp.json` is Claude Code's format (`{"mcpServers": {NAME: {...}}}`); VS Code's
top-level `servers` key is accepted too. An entry is `{"command", "args", "env", "cwd"}`
(stdio), `{"type": "http", "url", "headers"}` or `{"type": "sse", "url", "headers"}`,
plus Wyckoff's own keys (`enabled`, `enabled_tools`, `disabled_tools`,
`startup_timeout`, `tool_timeout`). Keys other tools write are ignored; a wrong type is a
`ConfigError` naming the file, the line and the server.

Strings may use `${VAR}` and `${VAR:-default}`. Expansion happens when a server starts
(`expand_server`), so a missing variable fails that one server with a clear reason and
the others still work. A server defined in both places is the user's (a project cannot
replace a server the user configured).
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.storage.config import Config
from wyckoff_cli.storage.config_mcp import McpServer

Transport = Literal["stdio", "http", "sse"]
Scope = Literal["project", "user"]
PROJECT_FILE = ".mcp.json"
_TYPE_ALIASES = {"streamable-http": "http", "streamableHttp": "http", "streamable_http": "http"}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ServerSpec:
    """One configured server, before `${VAR}` expansion."""

    name: str
    scope: Scope
    source: Path  # the file it came from
    transport: Transport
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    startup_timeout: float = 10.0
    tool_timeout: float = 60.0
    elicitation: Literal["decline", "cancel"] = "decline"  # the answer when no one can fill its form
    plugin: str = ""  # the installed plugin whose .mcp.json lists it ('' for config and .mcp.json)

    @property
    def shown_scope(self) -> str:
        """The scope listings show: `plugin:NAME` for a plugin's server, as Claude Code shows it."""
        return f"plugin:{self.plugin}" if self.plugin else self.scope

    def describe(self) -> str:
        """What it runs or where it connects, for trust prompts and listings."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return f"{self.url} ({self.transport})"

    def definition(self) -> dict[str, Any]:
        """The parts that decide what runs, for hashing and display."""
        return {
            "transport": self.transport,
            "command": self.command,
            "args": list(self.args),
            "env": dict(self.env),
            "cwd": self.cwd,
            "url": self.url,
            "headers": dict(self.headers),
        }

    def allows_tool(self, tool: str) -> bool:
        if tool in self.disabled_tools:
            return False
        return self.enabled_tools is None or tool in self.enabled_tools


@dataclass(frozen=True)
class McpConfig:
    """Every configured server, in a stable order (user first, then project)."""

    servers: tuple[ServerSpec, ...]
    project_file: Path | None  # the `.mcp.json` that was read, if any
    problems: tuple[str, ...] = ()  # told once when the servers start

    def get(self, name: str) -> ServerSpec | None:
        return next((s for s in self.servers if s.name == name), None)

    def project_servers(self) -> tuple[ServerSpec, ...]:
        return tuple(s for s in self.servers if s.scope == "project")


def load_mcp_config(
    root: Path, config: Config, *, user_file: Path | None = None, trust_settings: bool = False
) -> McpConfig:
    """The servers of the user's `config.toml` (`[mcp_servers.NAME]`) and of
    `ROOT/.mcp.json`. `[mcp_servers]` in a project's `.wyckoff/config.toml` is ignored
    with a notice: a project's servers belong in `.mcp.json`, which must be trusted
    first, and a cloned repository must not start commands through its config file."""
    from wyckoff_cli.storage.config import build, read_toml
    from wyckoff_cli.storage.paths import config_file, project_config_file

    user_source = user_file or config_file()
    tables = (read_toml(user_source) or {}).get("mcp_servers") or {}
    servers: list[ServerSpec] = []
    for name in sorted(tables):
        table = config.mcp_servers.get(name)
        if isinstance(tables[name], dict):
            table = build(McpServer, tables[name], user_source, f"mcp_servers.{name}.")
        if table is not None:
            servers.append(from_table(name, table, "user", user_source))
    problems: list[str] = []
    project_config = project_config_file(root)
    ignored = sorted((read_toml(project_config) or {}).get("mcp_servers") or {})
    if ignored:
        problems.append(
            f"{project_config}: [mcp_servers] ({', '.join(ignored)}) is ignored: a project's MCP servers "
            f"belong in {PROJECT_FILE}, which you trust before they start"
        )
    project_file = root / PROJECT_FILE
    taken = {s.name for s in servers}
    for server in read_project_file(project_file):
        if server.name not in taken:
            servers.append(server)
    servers += plugin_servers(root, {s.name for s in servers}, problems, trust_settings=trust_settings)
    from wyckoff_cli.storage.managed import allowed_servers  # an admin's mcp_allowlist wins

    servers = allowed_servers(servers, problems, lambda spec: spec.name)
    return McpConfig(tuple(servers), project_file if project_file.is_file() else None, tuple(problems))


def plugin_servers(
    root: Path, taken: set[str], problems: list[str], *, trust_settings: bool = False
) -> list[ServerSpec]:
    """The MCP servers of the installed, enabled plugins whose servers the user trusted,
    named as Claude Code names them (`plugin_PLUGIN_SERVER`), `${CLAUDE_PLUGIN_ROOT}`
    replaced by the plugin's folder."""
    from wyckoff_cli.storage.plugins import active_plugins, mcp_state

    found: list[ServerSpec] = []
    for plugin in active_plugins(root, trust_settings=trust_settings):
        if not plugin.mcp_servers:
            continue
        source = plugin.mcp_file or plugin.root
        if mcp_state(plugin) != "trusted":
            problems.append(
                f"[mcp] the servers of the plugin {plugin.name} are not trusted ({source}); "
                f"`wyckoff plugin update {plugin.name}` shows them and asks"
            )
            continue
        text = json.dumps({"mcpServers": plugin.mcp_servers}).replace(
            "${CLAUDE_PLUGIN_ROOT}", json.dumps(str(plugin.root))[1:-1]
        )
        for server in parse_project_json(text, source):
            name = f"plugin_{plugin.name}_{server.name}"
            if name not in taken:
                env = {**server.env, "CLAUDE_PLUGIN_ROOT": str(plugin.root)}
                found.append(replace(server, name=name, scope="user", env=env, plugin=plugin.name))
    return found


def from_table(name: str, table: McpServer, scope: Scope, source: Path) -> ServerSpec:
    transport = table.type or ("stdio" if table.command else "http")
    where = f"{source}: mcp_servers.{name}"
    if transport == "stdio" and not table.command:
        raise ConfigError(f"{where}: a stdio server needs `command`")
    if transport != "stdio" and not table.url:
        raise ConfigError(f"{where}: an {transport} server needs `url`")
    for key in ("startup_timeout", "tool_timeout"):
        if getattr(table, key) <= 0:
            raise ConfigError(f"{where}.{key} must be a positive number of seconds")
    return ServerSpec(
        name=name,
        scope=scope,
        source=source,
        transport=transport,
        command=table.command,
        args=tuple(table.args),
        env=dict(table.env),
        cwd=table.cwd,
        url=table.url,
        headers=dict(table.headers),
        enabled=table.enabled,
        enabled_tools=tuple(table.enabled_tools) if table.enabled_tools is not None else None,
        disabled_tools=tuple(table.disabled_tools),
        startup_timeout=table.startup_timeout,
        tool_timeout=table.tool_timeout,
        elicitation=table.elicitation,
    )


def read_project_file(path: Path) -> list[ServerSpec]:
    """The servers of one `.mcp.json` (none when it does not exist)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror})") from None
    return parse_project_json(text, path)


def parse_project_json(text: str, path: Path) -> list[ServerSpec]:
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}, line {exc.lineno}: invalid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object with `mcpServers`")
    table = data.get("mcpServers", data.get("servers", {}))
    if not isinstance(table, dict):
        raise ConfigError(f"{_where(path, text, 'mcpServers')}`mcpServers` must be an object")
    servers: list[ServerSpec] = []
    for name, entry in table.items():
        where = _where(path, text, name)
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}server {name!r} must be an object")
        servers.append(_from_json(name, entry, path, where))
    return servers


def _from_json(name: str, entry: dict[str, Any], path: Path, where: str) -> ServerSpec:
    kind = entry.get("type")
    kind = _TYPE_ALIASES.get(kind, kind) if isinstance(kind, str) else kind
    if kind is None:
        kind = "stdio" if "command" in entry else "http" if "url" in entry else None
    if kind not in ("stdio", "http", "sse"):
        raise ConfigError(f"{where}server {name!r}: type must be 'stdio', 'http' or 'sse', got {kind!r}")
    transport = typing.cast(Transport, kind)
    table = McpServer(
        type=transport,
        command=_string(entry, "command", name, where),
        args=_strings(entry, "args", name, where),
        env=_mapping(entry, "env", name, where),
        cwd=_string(entry, "cwd", name, where),
        url=_string(entry, "url", name, where),
        headers=_mapping(entry, "headers", name, where),
        enabled=_bool(entry, "enabled", name, where, True),
        enabled_tools=_strings(entry, "enabled_tools", name, where) if "enabled_tools" in entry else None,
        disabled_tools=_strings(entry, "disabled_tools", name, where),
        startup_timeout=_number(entry, "startup_timeout", name, where, 10.0),
        tool_timeout=_number(entry, "tool_timeout", name, where, 60.0),
        elicitation=_elicitation(entry, name, where),
    )
    try:
        return from_table(name, table, "project", path)
    except ConfigError as exc:
        raise ConfigError(f"{where}server {name!r}: {exc.message.rsplit(': ', 1)[-1]}") from None


def _where(path: Path, text: str, key: str) -> str:
    needle = json.dumps(key)
    for number, line in enumerate(text.splitlines(), 1):
        if re.search(re.escape(needle) + r"\s*:", line):
            return f"{path}, line {number}: "
    return f"{path}: "


def _string(entry: dict[str, Any], key: str, name: str, where: str) -> str | None:
    value = entry.get(key)
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}server {name!r}: {key} must be a string, got {value!r}")
    return value


def _elicitation(entry: dict[str, Any], name: str, where: str) -> Literal["decline", "cancel"]:
    value = entry.get("elicitation", "decline")
    if value == "cancel":
        return "cancel"
    if value != "decline":
        raise ConfigError(f"{where}server {name!r}: elicitation must be 'decline' or 'cancel', got {value!r}")
    return "decline"


def _strings(entry: dict[str, Any], key: str, name: str, where: str) -> list[str]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}server {name!r}: {key} must be a list of strings, got {value!r}")
    return list(value)


def _mapping(entry: dict[str, Any], key: str, name: str, where: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(f"{where}server {name!r}: {key} must be an object of strings, got {value!r}")
    return dict(value)


def _bool(entry: dict[str, Any], key: str, name: str, where: str, default: bool) -> bool:
    value = entry.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"{where}server {name!r}: {key} must be true or false, got {value!r}")
    return value


def _number(entry: dict[str, Any], key: str, name: str, where: str, default: float) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}server {name!r}: {key} must be a number of seconds, got {value!r}")
    return float(value)


# --------------------------------------------------------------------------- ${VAR}


class ExpansionError(ValueError):
    """A `${VAR}` without a default whose variable is not set."""


def expand(text: str, env: Mapping[str, str]) -> str:
    """`${VAR}` and `${VAR:-default}` replaced from `env` (an unset or empty VAR takes
    the default; an unset VAR without one raises `ExpansionError`)."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value:
            return value
        if default is not None:
            return default
        if value is not None:
            return value
        raise ExpansionError(f"environment variable {name} is not set")

    return _VAR.sub(one, text)


def expand_server(spec: ServerSpec, env: Mapping[str, str]) -> ServerSpec:
    """`spec` with every string expanded."""
    return replace(
        spec,
        command=expand(spec.command, env) if spec.command else spec.command,
        args=tuple(expand(a, env) for a in spec.args),
        env={k: expand(v, env) for k, v in spec.env.items()},
        cwd=expand(spec.cwd, env) if spec.cwd else spec.cwd,
        url=expand(spec.url, env) if spec.url else spec.url,
        headers={k: expand(v, env) for k, v in spec.headers.items()},
    )
