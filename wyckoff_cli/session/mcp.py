"""MCP for a session: which servers, which vendors, which environment.

`open_mcp(...)` reads the workspace's MCP configuration (plus servers an ACP client
passes with `session/new`) and calls `start_mcp`; `wyckoff run`, the app, `wyckoff acp`
and `wyckoff mcp list` all start their servers through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from wyckoff_cli.core.errors import ProviderError

if TYPE_CHECKING:
    from wyckoff_cli.session.builder import Workspace
    from wyckoff_cli.tools.mcp.config import ServerSpec
    from wyckoff_cli.tools.mcp.manager import EventFn, McpManager
    from wyckoff_cli.tools.registry import ToolRegistry


def session_vendors(workspace: Workspace, model: str | None) -> tuple[str, ...]:
    """The vendors this session's models (the default and the fallbacks) talk to; tool
    schemas must be valid for each. A scripted model or an unknown id counts as all."""
    from wyckoff_cli.core.tool_schema import VENDORS
    from wyckoff_cli.session.models import resolve_model_spec

    config = workspace.config
    vendors: list[str] = []
    for name in [model or config.model, *config.fallbacks]:
        try:
            provider = resolve_model_spec(name, config).provider
        except ProviderError:
            return VENDORS
        if provider not in VENDORS:
            return VENDORS
        vendors.append(provider)
    return tuple(dict.fromkeys(vendors)) or VENDORS


def session_sees_images(workspace: Workspace, model: str | None) -> bool:
    """Whether every model of the session (the default and the fallbacks) takes images,
    by the model catalogue; an unknown model counts as not."""
    from wyckoff_cli.session.images import every_model_takes_images

    return every_model_takes_images(workspace.config, model)


def open_mcp(
    workspace: Workspace,
    registry: ToolRegistry | None,
    *,
    model: str | None = None,
    trust_project: bool = False,
    trust_settings: bool = False,
    interactive_auth: bool = False,
    on_event: EventFn | None = None,
    accept_changes: bool | frozenset[str] | None = None,
    extra: Sequence[ServerSpec] = (),
) -> McpManager:
    """Start the workspace's MCP servers (and `extra` ones, e.g. from an ACP client) in
    the background, inside the running loop."""
    from wyckoff_cli.runtime.loop import child_environment
    from wyckoff_cli.tools.mcp.config import load_mcp_config
    from wyckoff_cli.tools.mcp.manager import start_mcp

    config = load_mcp_config(workspace.root, workspace.config, trust_settings=trust_settings)
    if extra:
        from dataclasses import replace

        taken = {s.name for s in extra}
        config = replace(config, servers=(*extra, *(s for s in config.servers if s.name not in taken)))
    return start_mcp(
        config,
        root=workspace.root,
        env=child_environment(),
        registry=registry,
        trust_project=trust_project,
        interactive_auth=interactive_auth,
        vendors=session_vendors(workspace, model),
        on_event=on_event,
        accept_changes=accept_changes,
        send_images=session_sees_images(workspace, model),
    )


def print_notices(write: Callable[[str], None]) -> EventFn:
    """An `on_event` for headless runs: notices (failures with their reason, changed
    tools, dropped schemas) are written once; state changes are not."""
    from wyckoff_cli.tools.mcp.manager import McpEvent

    def on_event(event: McpEvent) -> None:
        if event.kind == "notice":
            write(f"[mcp] {event.message}")

    return on_event


def untrusted_notice(manager: McpManager) -> str | None:
    """For headless runs: the project's servers that were not started, and how to start them."""
    waiting = [s.name for s in manager.statuses() if s.state == "needs_trust"]
    if not waiting:
        return None
    return (
        f"[mcp] not started (the project's .mcp.json is not trusted): {', '.join(waiting)}. "
        "Run `wyckoff mcp trust` once, or pass --trust-mcp."
    )


def client_servers(servers: Sequence[Any] | None) -> tuple[list[ServerSpec], list[str]]:
    """The MCP servers an ACP client passes (`McpServerStdio`, `HttpMcpServer`,
    `SseMcpServer`) as specs of scope "user" (the person's editor chose them), plus
    a problem for each one that cannot be used."""
    from wyckoff_cli.tools.mcp.config import ServerSpec

    specs: list[ServerSpec] = []
    problems: list[str] = []
    source = Path("<acp client>")
    for server in servers or ():
        name = str(getattr(server, "name", "") or "")
        kind = getattr(server, "type", None) or ("stdio" if getattr(server, "command", None) else None)
        pairs = {
            str(p.name): str(p.value)
            for p in getattr(server, "env", None) or getattr(server, "headers", None) or ()
        }
        if not name:
            problems.append("an MCP server from the client has no name")
        elif kind == "stdio":
            specs.append(
                ServerSpec(
                    name, "user", source, "stdio", command=server.command, args=tuple(server.args), env=pairs
                )
            )
        elif kind in ("http", "sse"):
            transport: Literal["http", "sse"] = "sse" if kind == "sse" else "http"
            specs.append(ServerSpec(name, "user", source, transport, url=str(server.url), headers=pairs))
        else:
            problems.append(
                f"MCP server {name} from the client uses transport {kind!r}, which Wyckoff does not speak"
            )
    from wyckoff_cli.storage.managed import allowed_servers  # an admin's mcp_allowlist wins

    return allowed_servers(specs, problems, lambda spec: spec.name), problems


async def start_session_mcp(controller: Any, servers: Sequence[Any] | None = None) -> list[str]:
    """For ACP `session/new` and `session/load`: the workspace's servers plus the
    client's, started on the controller's builder and waited for (each up to its
    startup timeout), so their tools are in the first request. Project servers start
    only when the project's `.mcp.json` was trusted before (`wyckoff mcp trust`).
    Returns what went wrong, one line each (the caller logs or shows it)."""
    import logging

    from wyckoff_cli.tools.mcp.host import McpHost

    specs, problems = client_servers(servers)
    builder = controller.builder
    host = McpHost(
        lambda on_event: open_mcp(
            builder.workspace, None, model=controller.model, extra=specs, on_event=on_event
        )
    )
    builder.mcp = host
    await host.start().wait_ready()
    notices = [*problems, *(text for kind, text in host.take_notices() if kind == "warning")]
    for line in notices:
        logging.getLogger(__name__).warning("%s", line)
    return notices
