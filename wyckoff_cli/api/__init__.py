"""Wyckoff's public Python API (docs/SDK.md): `from wyckoff_cli import Agent`.

Everything a program needs is exported here: `Agent`, its `RunResult`, the
`ApprovalDecision` an `on_approval` function returns, the event classes (`events`, the
union `wyckoff run --output-format stream-json` prints) and `API_VERSION`. Names not
exported here are internal and may change in any release.
"""

from __future__ import annotations

from wyckoff_cli.api.agent import Agent, ApprovalHandler, RunResult
from wyckoff_cli.core import events
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.errors import ConfigError, UsageError, WyckoffError
from wyckoff_cli.core.events import ApprovalRequested as ApprovalRequest
from wyckoff_cli.core.events import RuntimeEvent as Event

API_VERSION = "1.0"
"""The public API's version: the minor number grows with additions, the major one only
with a breaking change, after the deprecation period docs/SDK.md describes."""

__all__ = [
    "API_VERSION",
    "Agent",
    "ApprovalDecision",
    "ApprovalHandler",
    "ApprovalRequest",
    "ConfigError",
    "Event",
    "RunResult",
    "UsageError",
    "WyckoffError",
    "events",
]
