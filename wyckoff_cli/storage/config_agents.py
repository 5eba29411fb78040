"""The typed `[agents]`, `[session]` and `[routing]` tables of the configuration (docs/CONFIG.md,
docs/SUBAGENTS.md); `storage/config.py` validates them with the rest."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class _Bounds:
    """What the config's range check asks of a bound: `allows` and `describe`."""

    low: float
    high: float
    low_open: bool = False

    def allows(self, value: float) -> bool:
        if not math.isfinite(value) or value > self.high:
            return False
        return value > self.low if self.low_open else value >= self.low

    def describe(self, integer: bool) -> str:
        low = f"{'greater than' if self.low_open else 'at least'} {self.low:g}"
        return f"{'an integer' if integer else 'a finite number'} {low} and at most {self.high:,g}"


def _doc(text: str, bounds: _Bounds, **kwargs: Any) -> Any:
    return field(metadata={"doc": text, "range": bounds}, **kwargs)


@dataclass
class AgentsConfig:
    """`[agents]`: sub-agents run by the `task` tool (docs/SUBAGENTS.md)."""

    max_rounds: int = _doc(
        "Tool rounds a sub-agent may take per task (an agent file's `max_rounds` overrides it).",
        _Bounds(1, 10_000),
        default=20,
    )
    max_seconds: float | None = _doc(
        "Wall time a sub-agent may run per task, in seconds; then it is stopped and its task result says so.",
        _Bounds(0, 86_400, low_open=True),
        default=1800.0,
    )
    idle_seconds: float | None = _doc(
        "Stop a sub-agent that makes no progress (no new tool call, answer text or tool output) "
        "for this many seconds; its task result says so.",
        _Bounds(0, 86_400, low_open=True),
        default=600.0,
    )
    max_parallel: int = _doc(
        "Sub-agents in worktrees (`isolation: worktree`) that may run at once; children without "
        "isolation keep their rule (read-only ones in parallel, others one at a time).",
        _Bounds(1, 64),
        default=4,
    )


@dataclass
class SessionConfig:
    """`[session]`: limits for a whole session."""

    max_budget_usd: float | None = _doc(
        "Stop the session, sub-agents included, once its model calls cost this much (USD); "
        "`--max-budget-usd` overrides it. Unset: no limit.",
        _Bounds(0, 1_000_000, low_open=True),
        default=None,
    )
    max_day_usd: float | None = _doc(
        "Stop once the day's model calls (UTC), over every session and their sub-agents, "
        "cost this much (USD). Unset: no limit.",
        _Bounds(0, 1_000_000, low_open=True),
        default=None,
    )


@dataclass
class RoutingConfig:
    """`[routing]`: a small model for the small jobs (docs/COST.md). Each value is a model
    id or an alias of `[models.NAME]`; a job without one uses `small`, and without that
    the session's model. On any error the session's model takes over, with one notice."""

    small: str | None = field(
        default=None, metadata={"doc": "The model for compaction summaries, the memory flush and titles."}
    )
    compaction: str | None = field(default=None, metadata={"doc": "The model for compaction summaries."})
    title: str | None = field(default=None, metadata={"doc": "The model that titles sessions."})
    memory_flush: str | None = field(
        default=None, metadata={"doc": "The model that saves memories when a compaction runs."}
    )
    review_check: str | None = field(
        default=None, metadata={"doc": "The model of `wyckoff review`'s check pass (docs/REVIEW.md)."}
    )

    def model_for(self, purpose: str) -> str | None:
        """The model configured for `purpose` (`compaction`, `title`, `memory_flush`,
        `review_check`)."""
        return getattr(self, purpose, None) or self.small
