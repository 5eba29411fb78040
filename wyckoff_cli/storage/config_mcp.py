"""The typed `[mcp_servers.NAME]` table of the configuration (docs/CONFIG.md,
docs/MCP.md): the fields of a `.mcp.json` entry plus Wyckoff's own. `storage/config.py`
validates it with the rest (file and line on an error)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["McpServer"]


def _doc(text: str, **kwargs: Any) -> Any:
    return field(metadata={"doc": text}, **kwargs)


@dataclass
class McpServer:
    """`[mcp_servers.NAME]`: a Model Context Protocol server (docs/MCP.md)."""

    type: Literal["stdio", "http", "sse"] | None = _doc(
        "Transport: `stdio` (a command), `http` (streamable HTTP) or `sse`; default from `command`/`url`.",
        default=None,
    )
    command: str | None = _doc("The program that runs a stdio server.", default=None)
    args: list[str] = _doc("Its arguments.", default_factory=list)
    env: dict[str, str] = _doc("Environment variables added for it (`${VAR}` expands).", default_factory=dict)
    cwd: str | None = _doc("Its working folder (default: the workspace root).", default=None)
    url: str | None = _doc("The endpoint of an `http` or `sse` server.", default=None)
    headers: dict[str, str] = _doc("HTTP headers sent to it (`${VAR}` expands).", default_factory=dict)
    enabled: bool = _doc("Start it with each session.", default=True)
    enabled_tools: list[str] | None = _doc("Only these tools of it are offered (default: all).", default=None)
    disabled_tools: list[str] = _doc("Tools of it that are never offered.", default_factory=list)
    startup_timeout: float = _doc("Seconds to wait for it to start and list its tools.", default=10.0)
    tool_timeout: float = _doc("Seconds one call of its tools may take before it is cancelled.", default=60.0)
    elicitation: Literal["decline", "cancel"] = _doc(
        "What a run with no one to ask answers its elicitation requests (forms): `decline` or `cancel`.",
        default="decline",
    )
