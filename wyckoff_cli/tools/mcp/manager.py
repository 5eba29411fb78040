"""The session's MCP servers: start them in the background, keep their tools current.

`start_mcp(...)` is the one entry point a session builder calls. It returns an
`McpManager` at once, with every enabled (and trusted) server connecting in its own
task; `wait_ready()` waits for them (each up to its `startup_timeout`), which headless
runs do so the tools are in the first request. Tools of a server that becomes ready are
appended to the session's `ToolRegistry` after the built-ins (the cached prompt prefix
stays as long as possible). Every state change, tool-set change and problem is an
`McpEvent` given to `on_event`, reported once.

Trust: a project's servers start only when its `.mcp.json` is trusted (TrustStore) or
the host passes `trust_project=True` (`--trust-mcp`, or the user said yes in the app).
A server whose tool definitions differ from the trusted ones is held in state `changed`
with its tools withheld until `accept_changes(name)`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from wyckoff_cli.core.tool_schema import VENDORS, usable_for
from wyckoff_cli.tools.base import Tool
from wyckoff_cli.tools.mcp.client import ServerConnection, State
from wyckoff_cli.tools.mcp.config import ExpansionError, McpConfig, ServerSpec, expand_server
from wyckoff_cli.tools.mcp.names import assign_names, sanitize_part, server_prefix
from wyckoff_cli.tools.mcp.proxy import proxy_tool, tool_definition
from wyckoff_cli.tools.mcp.server_asks import Sampler
from wyckoff_cli.tools.mcp.trust import TrustStore, definition_hash, server_key
from wyckoff_cli.tools.registry import ToolRegistry


@dataclass(frozen=True)
class McpEvent:
    """`kind`: `state` (a server's state changed), `tools` (the tool set changed) or
    `notice` (something the user should read once)."""

    kind: Literal["state", "tools", "notice"]
    server: str
    message: str
    state: str = ""


@dataclass(frozen=True)
class ServerStatus:
    name: str
    scope: str
    transport: str
    state: State
    reason: str
    tools: tuple[str, ...]  # model-facing names offered
    target: str  # what it runs / where it connects


EventFn = Callable[[McpEvent], None]
LOGIN_SECONDS = 300.0  # how long a browser sign-in may take during start-up


TASK_ONLY = (
    'it runs only as an MCP task (`taskSupport: "required"`), and Wyckoff does not run '
    "MCP tasks yet, so every call would fail"
)


def task_only(mcp_tool: Any) -> str | None:
    """Why a tool that the server runs only as a task is not offered (None if it runs
    as a plain call)."""
    execution = getattr(mcp_tool, "execution", None)
    return TASK_ONLY if getattr(execution, "task_support", None) == "required" else None


class McpManager:
    def __init__(
        self,
        config: McpConfig,
        *,
        root: Path,
        env: Mapping[str, str],
        trust: TrustStore | None = None,
        registry: ToolRegistry | None = None,
        trust_project: bool = False,
        interactive_auth: bool = False,
        vendors: tuple[str, ...] = VENDORS,
        on_event: EventFn | None = None,
        expand_env: Mapping[str, str] | None = None,
        open_url: Any = None,
        accept_changes: bool | frozenset[str] | None = None,
        send_images: bool = False,
    ) -> None:
        self.config = config
        self.send_images = send_images  # the session's models accept images
        self.root = root
        self.env = dict(env)
        self.trust = trust or TrustStore()
        self.registry = registry
        self.interactive_auth = interactive_auth
        self.vendors = vendors
        self.on_event = on_event or (lambda _e: None)
        self._expand_env = dict(os.environ if expand_env is None else expand_env)
        self._open_url = open_url
        # whose changed tool definitions are accepted without asking (default: all
        # when the host trusts the project, as headless `--trust-mcp` runs do)
        self._accept_changes = trust_project if accept_changes is None else accept_changes
        self.connections: dict[str, ServerConnection] = {}
        self.sampler: Sampler | None = None  # the session's model, for servers' sampling requests
        self._states: dict[str, tuple[State, str]] = {}
        self._tools: dict[str, list[Tool]] = {}
        self._dropped: dict[str, set[str]] = {}
        self._slugs = _server_slugs([s.name for s in config.servers])
        if trust_project and config.project_file is not None and config.project_servers():
            self.trust.trust_project(
                config.project_file, {s.name: s.describe() for s in config.project_servers()}
            )

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> None:
        for problem in self.config.problems:
            self.on_event(McpEvent("notice", "", problem))
        for spec in self.config.servers:
            self._start_one(spec)

    def _start_one(self, spec: ServerSpec) -> None:
        if not spec.enabled:
            self._set_state(spec.name, "disabled", "")
            return
        if spec.scope == "project" and not self.project_trusted():
            self._set_state(spec.name, "needs_trust", "the project's .mcp.json is not trusted yet")
            return
        try:
            expanded = expand_server(spec, self._expand_env)
        except ExpansionError as exc:
            self._set_state(spec.name, "failed", str(exc))
            self.on_event(McpEvent("notice", spec.name, f"MCP server {spec.name} failed: {exc}", "failed"))
            return
        connection = ServerConnection(expanded, root=self.root, env=self.env, on_change=self._changed)
        if spec.transport in ("http", "sse") and not any(k.lower() == "authorization" for k in spec.headers):
            from wyckoff_cli.tools.mcp.oauth import build_auth, open_in_browser

            def signing_in(url: str, connection: ServerConnection = connection) -> None:
                connection.extend_startup(LOGIN_SECONDS)
                self.on_event(
                    McpEvent("notice", spec.name, f"MCP server {spec.name}: sign in in your browser: {url}")
                )

            connection.auth = build_auth(
                spec.name,
                expanded.url or "",
                interactive=self.interactive_auth,
                open_url=self._open_url or open_in_browser,
                login_timeout=LOGIN_SECONDS,
                on_wait=signing_in,
            )
        connection.sampler = self.sampler
        self.connections[spec.name] = connection
        self._set_state(spec.name, "connecting", "")
        connection.start()

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait for every connecting server (each up to its startup timeout, or `timeout`)."""
        waits = [
            c.wait_ready(timeout if timeout is not None else c.spec.startup_timeout + 1)
            for c in self.connections.values()
        ]
        if waits:
            await asyncio.gather(*waits)

    async def restart(self, name: str) -> None:
        spec = self.config.get(name)
        if spec is None:
            raise KeyError(name)
        old = self.connections.pop(name, None)
        if old is not None:
            await old.close()
        self._withdraw(name)
        self._start_one(spec)

    async def aclose(self) -> None:
        connections = list(self.connections.values())
        self.connections.clear()
        await asyncio.gather(*(c.close() for c in connections), return_exceptions=True)

    def use_model(self, sampler: Sampler | None) -> None:
        """Answer the servers' sampling requests with `sampler` (the runtime's model)."""
        self.sampler = sampler
        for connection in self.connections.values():
            connection.sampler = sampler

    async def set_root(self, root: Path) -> None:
        """The session's workspace is `root` now: every server's `roots/list` answers
        it, and the connected ones get `notifications/roots/list_changed`."""
        if root.resolve() == self.root.resolve():
            return
        self.root = root
        await asyncio.gather(*(c.set_root(root) for c in self.connections.values()), return_exceptions=True)

    def attach(self, registry: ToolRegistry) -> None:
        """Offer the tools through `registry` from now on (a new runtime after a model
        switch): the current ones are appended to it, later changes go there."""
        self.registry = registry
        for tool in self.tools():
            if tool.name not in registry:
                registry.add(tool)

    # ----------------------------------------------------------------- trust

    def project_trusted(self) -> bool:
        file = self.config.project_file
        return file is None or self.trust.project_trusted(file)

    def trust_prompt(self) -> str | None:
        """What the user is asked before the project's servers start (None: nothing to ask)."""
        servers = self.config.project_servers()
        if not servers or self.project_trusted():
            return None
        lines = [f"{self.config.project_file} wants to start these MCP servers:"]
        lines += [f"  {s.name}: {s.describe()}" for s in servers]
        lines.append("Trust this file and start them? (a changed file asks again)")
        return "\n".join(lines)

    def trust_project_file(self) -> None:
        """The user trusted the project's `.mcp.json`: record it and start its servers."""
        file = self.config.project_file
        if file is None:
            return
        servers = self.config.project_servers()
        self.trust.trust_project(file, {s.name: s.describe() for s in servers})
        for spec in servers:
            if spec.name not in self.connections:
                self._start_one(spec)

    def accept_changes(self, name: str) -> None:
        """The user accepted a server's changed tool definitions."""
        connection = self.connections.get(name)
        if connection is None:
            return
        self.trust.record_tools(self._key(connection.spec), self._hashes(connection))
        connection.state = "connected"
        self._set_state(name, "connected", "")
        self._offer(connection)

    # ----------------------------------------------------------------- tools

    def tools(self) -> list[Tool]:
        """Every offered MCP tool, in config order of the servers."""
        return [t for spec in self.config.servers for t in self._tools.get(spec.name, [])]

    def statuses(self) -> list[ServerStatus]:
        out: list[ServerStatus] = []
        for spec in self.config.servers:
            state, reason = self._states.get(spec.name, ("closed", ""))
            names = tuple(t.name for t in self._tools.get(spec.name, []))
            connection = self.connections.get(spec.name)
            transport = connection.transport if connection is not None else spec.transport  # which connected
            out.append(
                ServerStatus(spec.name, spec.shown_scope, transport, state, reason, names, spec.describe())
            )
        return out

    def counts(self) -> tuple[int, int]:
        """(connected, enabled) for a status bar's "MCP 3/4"."""
        states = [s.state for s in self.statuses()]
        return states.count("connected"), sum(1 for s in states if s != "disabled")

    def status_text(self) -> str:
        connected, enabled = self.counts()
        return f"MCP {connected}/{enabled}" if enabled else ""

    def connection(self, name: str) -> ServerConnection | None:
        return self.connections.get(name)

    def _key(self, spec: ServerSpec) -> str:
        return server_key(spec.scope, self.root, spec.name)

    def _hashes(self, connection: ServerConnection) -> dict[str, str]:
        return {t.name: definition_hash(tool_definition(t)) for t in connection.listing.tools}

    def _changed(self, connection: ServerConnection, what: str) -> None:
        name = connection.spec.name
        if self.connections.get(name) is not connection:
            return  # an old connection being replaced
        if what == "failed":
            self._withdraw(name)
            self._set_state(name, "failed", connection.reason)
            self.on_event(
                McpEvent("notice", name, f"MCP server {name} failed: {connection.reason}", "failed")
            )
            return
        if what not in ("connected", "tools"):
            self.on_event(McpEvent("state", name, f"MCP server {name}: {what} changed", connection.state))
            return
        if what == "connected" and connection.transport != connection.spec.transport:
            self.on_event(
                McpEvent(
                    "notice",
                    name,
                    f"MCP server {name}: connected over SSE (streamable HTTP failed: "
                    f'{connection.fallback_reason}); `type = "sse"` skips the first try',
                )
            )
        hashes = self._hashes(connection)
        key = self._key(connection.spec)
        change = self.trust.check_tools(key, hashes)
        if change is None:
            self.trust.record_tools(key, hashes)
        elif change.changed and not self._accepts(name):
            self._withdraw(name)
            connection.state = "changed"
            reason = f"tool definitions changed since you trusted them ({change.describe()})"
            self._set_state(name, "changed", reason)
            self.on_event(
                McpEvent(
                    "notice",
                    name,
                    f"MCP server {name}: {reason}. Its tools are withheld until you accept the change "
                    f"(`wyckoff mcp trust {name}` or /mcp trust {name}).",
                    "changed",
                )
            )
            return
        elif change:
            self.trust.record_tools(key, hashes)
            self.on_event(McpEvent("notice", name, f"MCP server {name}: tools {change.describe()}"))
        self._set_state(name, "connected", "")
        self._offer(connection)

    def _accepts(self, name: str) -> bool:
        accept = self._accept_changes
        return accept if isinstance(accept, bool) else name in accept

    def _offer(self, connection: ServerConnection) -> None:
        spec = connection.spec
        name = spec.name
        wanted = [t for t in connection.listing.tools if spec.allows_tool(t.name)]
        taken = [t.name for n, tools in self._tools.items() if n != name for t in tools]
        if self.registry is not None:
            taken += [n for n in self.registry.names() if not n.startswith(server_prefix(self._slugs[name]))]
        names = assign_names(self._slugs[name], [t.name for t in wanted], taken)
        tools: list[Tool] = []
        dropped = self._dropped.setdefault(name, set())
        for mcp_tool in wanted:
            unusable = usable_for(mcp_tool.input_schema, self.vendors)
            problem = f"its schema cannot be made valid ({unusable})" if unusable else task_only(mcp_tool)
            if problem is not None:
                if mcp_tool.name not in dropped:
                    dropped.add(mcp_tool.name)
                    self.on_event(
                        McpEvent(
                            "notice",
                            name,
                            f"MCP tool {mcp_tool.name} of {name} is not offered: {problem}",
                        )
                    )
                continue
            tools.append(proxy_tool(connection, mcp_tool, names[mcp_tool.name], send_images=self.send_images))
        before = [t.name for t in self._tools.get(name, [])]
        self._withdraw(name, announce=False)
        self._tools[name] = tools
        if self.registry is not None:
            for tool in tools:
                self.registry.add(tool)
        after = [t.name for t in tools]
        if before != after:
            self.on_event(
                McpEvent("tools", name, f"MCP server {name}: {len(after)} tool(s) available", "connected")
            )

    def _withdraw(self, name: str, *, announce: bool = True) -> None:
        old = self._tools.pop(name, [])
        if self.registry is not None:
            for tool in old:
                self.registry.remove(tool.name)
        if old and announce:
            self.on_event(McpEvent("tools", name, f"MCP server {name}: its tools were withdrawn"))

    def _set_state(self, name: str, state: State, reason: str) -> None:
        if self._states.get(name) == (state, reason):
            return
        self._states[name] = (state, reason)
        self.on_event(McpEvent("state", name, f"MCP server {name}: {state}", state))


def _server_slugs(names: list[str]) -> dict[str, str]:
    """Each server's sanitised name, unique in config order (`a.b` and `a_b` → `a_b`, `a_b_2`)."""
    slugs: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        slug = sanitize_part(name)
        candidate, counter = slug, 2
        while candidate in used:
            candidate = f"{slug}_{counter}"
            counter += 1
        used.add(candidate)
        slugs[name] = candidate
    return slugs


def start_mcp(
    config: McpConfig,
    *,
    root: Path,
    env: Mapping[str, str],
    registry: ToolRegistry | None = None,
    trust: TrustStore | None = None,
    trust_project: bool = False,
    interactive_auth: bool = False,
    vendors: tuple[str, ...] = VENDORS,
    on_event: EventFn | None = None,
    open_url: Any = None,
    expand_env: Mapping[str, str] | None = None,
    accept_changes: bool | frozenset[str] | None = None,
    send_images: bool = False,
) -> McpManager:
    """Start the session's MCP servers in the background (call inside the running event
    loop); the returned manager appends their tools to `registry` as they become ready.
    `env` is the scrubbed environment stdio servers inherit; `expand_env` (default: the
    process environment) is what `${VAR}` reads."""
    manager = McpManager(
        config,
        root=root,
        env=env,
        trust=trust,
        registry=registry,
        trust_project=trust_project,
        interactive_auth=interactive_auth,
        vendors=vendors,
        on_event=on_event,
        open_url=open_url,
        expand_env=expand_env,
        accept_changes=accept_changes,
        send_images=send_images,
    )
    manager.start()
    return manager
