"""Which tool results cost most in resent context: for `/cost`.

Every model call's `usage` event lists the earlier tool results its prompt sent again
(`resent`: call id, tool, tokens). `ResentLedger` adds them up per result, notes when
each result arrived and what share of each call's cost it made (the call's cost in
proportion to its prompt), so `/cost` can say "grep at 12:03 — 41,200 tokens resent over
9 calls".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from wyckoff_cli.core import events as ev


@dataclass
class ResentResult:
    tool: str
    at: datetime | None = None  # when the result arrived (None: before this run)
    tokens: int = 0
    calls: int = 0
    cost: float = 0.0

    def describe(self) -> str:
        when = f" at {self.at:%H:%M}" if self.at is not None else ""
        return f"{self.tool}{when} — {self.tokens:,} tokens resent over {self.calls} call{'s' * (self.calls != 1)}"


class ResentLedger:
    def __init__(self, clock: Callable[[], datetime] = datetime.now) -> None:
        self.clock = clock
        self.results: dict[str, ResentResult] = {}
        self._arrived: dict[str, datetime] = {}

    def observe(self, event: ev.RuntimeEvent, cost: float | None) -> None:
        """Take a tool result's arrival or a call's `resent` list (with that call's cost)."""
        inner = event.inner if isinstance(event, ev.SubagentEvent) else event
        if isinstance(inner, ev.ToolSucceeded | ev.ToolFailed):
            self._arrived.setdefault(inner.id, self.clock())
        elif isinstance(inner, ev.UsageReported):
            for share in inner.resent:
                call_id, tokens = str(share.get("call_id", "")), int(share.get("tokens", 0) or 0)
                row = self.results.get(call_id)
                if row is None:
                    row = self.results[call_id] = ResentResult(
                        str(share.get("tool", "")), self._arrived.get(call_id)
                    )
                row.tokens += tokens
                row.calls += 1
                if cost is not None and inner.input_tokens:
                    row.cost += cost * min(1.0, tokens / inner.input_tokens)

    def costliest(self, count: int = 5) -> list[ResentResult]:
        return sorted(self.results.values(), key=lambda r: -r.tokens)[:count]

    def clear(self) -> None:
        self.results.clear()
        self._arrived.clear()
