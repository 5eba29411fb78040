"""What one turn's model calls used and cost, sub-agents' calls included; and which
earlier tool results each call sent again.

The loop shows it every event it emits (`observe`); a child's calls reach the parent's
stream wrapped in `SubagentEvent`s and count too, so the turn's `done.usage` and
`done.cost_usd` are the totals of everything the turn caused.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from wyckoff_cli.context.tokens import TokenEstimator
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message
from wyckoff_cli.core.usage import Usage

log = logging.getLogger(__name__)

CallPricer = Callable[[str, Usage], "float | None"]  # (model, usage) -> USD, None when unpriced


class TurnTally:
    def __init__(self, price: CallPricer | None = None) -> None:
        self.price = price
        self.usage = Usage()
        self.cost_usd: float | None = None

    def observe(self, event: ev.RuntimeEvent) -> None:
        inner = event.inner if isinstance(event, ev.SubagentEvent) else event
        if not isinstance(inner, ev.UsageReported):
            return
        self.usage = self.usage + inner.usage
        cost = self._cost(inner)
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost

    def _cost(self, event: ev.UsageReported) -> float | None:
        if self.price is None:
            return None
        try:
            return self.price(event.model, event.usage)
        except Exception:  # pricing never breaks a turn
            log.warning("cannot price a call to %s", event.model, exc_info=True)
            return None

    @property
    def rounded_cost(self) -> float | None:
        return None if self.cost_usd is None else round(self.cost_usd, 8)


class ResentShares:
    """The share of a request's prompt each earlier tool result occupies: tokens that
    are sent again because of that result, once per model call (estimated, cached per
    message, so a long history is counted once)."""

    def __init__(self) -> None:
        self.estimator = TokenEstimator()

    def of(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """`[{"call_id", "tool", "tokens"}, ...]` for every tool result in `messages`."""
        return [
            {"call_id": m.tool_call_id, "tool": m.tool_name or "", "tokens": self.estimator.message(m)}
            for m in messages
            if m.role == "tool" and m.tool_call_id is not None
        ]
