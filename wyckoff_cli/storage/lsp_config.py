"""`[lsp]`: language servers run beside the session (docs/LSP.md, docs/CONFIG.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _doc(text: str, **kwargs: Any) -> Any:
    return field(metadata={"doc": text}, **kwargs)


@dataclass
class LspServerConfig:
    """`[lsp.servers.NAME]`: one language server, a known one (`basedpyright`, `pyright`,
    `pylsp`, `typescript-language-server`, `gopls`, `rust-analyzer`, `clangd`) adjusted or a new one."""

    command: str | None = _doc(
        "The program to run (default for a known server: found on PATH or in the workspace's .venv/venv).",
        default=None,
    )
    args: list[str] | None = _doc(
        "Its arguments (default for a known server: its stdio flags).", default=None
    )
    languages: list[str] | None = _doc(
        'File extensions it serves, e.g. `[".py", ".pyi"]` (default for a known server: its own).',
        default=None,
    )
    initialization_options: dict[str, Any] = _doc(
        "Sent as `initializationOptions` in its `initialize` request.", default_factory=dict
    )
    env: dict[str, str] = _doc("Environment variables added for it.", default_factory=dict)
    enabled: bool = _doc("Use it (false: never start it).", default=True)


@dataclass
class LspConfig:
    """`[lsp]`: diagnostics after edits and the lsp_* navigation tools."""

    enabled: bool = _doc("Run language servers at all.", default=True)
    diagnostics_wait_ms: int = _doc(
        "Longest wait, in milliseconds, for a server's diagnostics of an edited file.", default=2000
    )
    startup_wait_ms: int = _doc(
        "Longest wait, in milliseconds, for a server to start (its `initialize` answer).", default=15000
    )
    request_timeout_ms: int = _doc(
        "Longest wait, in milliseconds, for an answer to a definition, references, hover, symbols or "
        "rename request.",
        default=10000,
    )
    servers: dict[str, LspServerConfig] = _doc(
        "Language servers, `[lsp.servers.NAME]`.", default_factory=dict
    )
