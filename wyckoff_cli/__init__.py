"""Wyckoff: a terminal coding assistant.

The public Python API is `wyckoff_cli.api` (docs/SDK.md); `Agent`, `RunResult`,
`ApprovalDecision` and `API_VERSION` are also importable from here, loaded on first use
(so `wyckoff --help` does not import the session's modules).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from wyckoff_cli.api import API_VERSION, Agent, ApprovalDecision, RunResult

__all__ = ["API_VERSION", "Agent", "ApprovalDecision", "RunResult", "__version__"]
_PUBLIC = frozenset({"API_VERSION", "Agent", "ApprovalDecision", "RunResult"})


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        from wyckoff_cli import api

        return getattr(api, name)
    raise AttributeError(f"module 'wyckoff_cli' has no attribute {name!r}")
