"""The session's language servers (tools/lsp): built from `[lsp]` with the trust of
the project's server commands, and the runtime hook that plans an `lsp_rename` before
its approval (so the dialog shows the whole multi-file diff)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.core.messages import ToolCallPart
from wyckoff_cli.runtime.hooks import RuntimeHooks
from wyckoff_cli.storage.config import Config, read_toml
from wyckoff_cli.storage.paths import project_config_file
from wyckoff_cli.storage.trust import TrustStore, canonical_hash
from wyckoff_cli.tools.lsp.family import LspTools
from wyckoff_cli.tools.lsp.manager import LspManager
from wyckoff_cli.tools.lsp.report import status_lines, status_segment
from wyckoff_cli.tools.lsp.servers import ServerSpec, resolve_servers

TRUST_KIND = "lsp"  # trust records of a project's `[lsp.servers]` commands (storage/trust.py)


def project_servers_digest(project_servers: Mapping[str, Any]) -> str:
    """What trust of a project's `[lsp.servers]` is about: its commands, args and env."""
    return canonical_hash(
        {
            name: {k: v for k, v in table.items() if k in ("command", "args", "env")}
            for name, table in project_servers.items()
            if isinstance(table, dict)
        }
    )


def project_runs_programs(project_servers: Mapping[str, Any]) -> bool:
    return any(
        isinstance(t, dict) and any(k in t for k in ("command", "args", "env"))
        for t in project_servers.values()
    )


def trust_state(
    project_file: Path, project_servers: Mapping[str, Any], store: TrustStore | None = None
) -> str:
    """`trusted` when the project names no commands or the user trusted them."""
    if not project_runs_programs(project_servers):
        return "trusted"
    return (store or TrustStore()).state(project_file, TRUST_KIND, project_servers_digest(project_servers))


def trust_project_servers(
    project_file: Path, project_servers: Mapping[str, Any], store: TrustStore | None = None
) -> None:
    (store or TrustStore()).trust(project_file, TRUST_KIND, project_servers_digest(project_servers))


def project_lsp_servers(root: Path) -> dict[str, Any]:
    """The `[lsp.servers]` table of the project's own `.wyckoff/config.toml`."""
    try:
        data = read_toml(project_config_file(root)) or {}
    except Exception:
        return {}
    lsp = data.get("lsp")
    servers = lsp.get("servers") if isinstance(lsp, dict) else None
    return servers if isinstance(servers, dict) else {}


def workspace_servers(root: Path, config: Config) -> list[ServerSpec]:
    """Every server this workspace could run; project-set commands blocked until trusted."""
    project = project_lsp_servers(root)
    untrusted: frozenset[str] = frozenset()
    if trust_state(project_config_file(root), project) != "trusted":
        untrusted = frozenset(
            name
            for name, table in project.items()
            if isinstance(table, dict) and any(k in table for k in ("command", "args", "env"))
        )
    return resolve_servers(root, config.lsp.servers, untrusted=untrusted)


def open_lsp(root: Path, config: Config) -> LspTools | None:
    """The language-server family of a session (None when `[lsp] enabled = false`)."""
    if not config.lsp.enabled:
        return None
    return LspTools(LspManager(root, config.lsp, workspace_servers(root, config)))


class RenamePlanning(RuntimeHooks):
    """Computes an lsp_rename's workspace edit before the call is approved."""

    def __init__(self, lsp: LspTools, workspace: Path) -> None:
        self.lsp = lsp
        self.workspace = workspace

    async def before_tool(self, call: ToolCallPart) -> ToolCallPart | None:
        if call.name == "lsp_rename" and isinstance(call.arguments, dict) and call.raw_arguments is None:
            with contextlib.suppress(ToolError, KeyError, TypeError, ValueError):
                await self.lsp.plans.plan(call.id, call.arguments, self.workspace)
        return None


def lsp_output(lsp: LspTools | None) -> ev.RuntimeEvent:
    """`/lsp`: each server found or configured, its languages, state, files open, last error."""
    if lsp is None:
        return ev.Notice("info", "Language servers are off (`[lsp] enabled = false`).")
    return ev.CommandOutput(
        "lsp", title="Language servers", text="\n".join(status_lines(lsp.manager.status()))
    )


def lsp_segment(lsp: LspTools | None) -> str:
    """The status bar's `LSP` segment ("" when no server runs or failed)."""
    return status_segment(lsp.manager if lsp is not None else None)
