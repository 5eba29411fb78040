"""MCP for a session, from the composition root: which servers, which vendors, which env.

`open_mcp(...)` reads the workspace's MCP configuration and calls `start_mcp`; it is what
`wyckoff run`, the app and `wyckoff mcp list` use (and what the session builder will).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from wyckoff_cli.core.errors import ProviderError

if TYPE_CHECKING:
    from wyckoff_cli.session.builder import Workspace
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
    from wyckoff_cli.models.facts import resolve_model_facts
    from wyckoff_cli.session.models import model_id

    config = workspace.config
    for name in [model or config.model, *config.fallbacks]:
        facts = resolve_model_facts(model_id(name, config), config.model_overrides)
        if facts.entry is None or not facts.entry.images:
            return False
    return True


def open_mcp(
    workspace: Workspace,
    registry: ToolRegistry | None,
    *,
    model: str | None = None,
    trust_project: bool = False,
    interactive_auth: bool = False,
    on_event: EventFn | None = None,
    accept_changes: bool | frozenset[str] | None = None,
) -> McpManager:
    """Start the workspace's MCP servers in the background (inside the running loop)."""
    from wyckoff_cli.runtime.loop import child_environment
    from wyckoff_cli.tools.mcp.config import load_mcp_config
    from wyckoff_cli.tools.mcp.manager import start_mcp

    config = load_mcp_config(workspace.root, workspace.config)
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
