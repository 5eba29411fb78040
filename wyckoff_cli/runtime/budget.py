"""Cost limits shared by every runtime of a session (parent and children).

`SessionBudget` adds up what the session's model calls cost against two optional
limits: the session's own (`--max-budget-usd`, `[session] max_budget_usd`) and the
day's (`[session] max_day_usd`, counted on top of what every session spent earlier
that day). `BudgetHook`, one per runtime, counts that runtime's own calls, announces
each limit's 50%, 80% and 100% once (a `budget_warning` event and a `notice`), and
stops the run before its next model call once a limit is spent (`done.reason ==
"budget"`): a running tool finishes first.
"""

from __future__ import annotations

from collections.abc import Callable

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import StopRun
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.runtime.hooks import Emit, ModelRequest, RuntimeHooks

CostFn = Callable[[str, Usage], "float | None"]  # (model, usage) -> USD, None when unpriced
THRESHOLDS = (50, 80, 100)


class SessionBudget:
    """What a session's model calls cost so far, against its optional limits."""

    def __init__(
        self,
        limit_usd: float | None,
        cost: CostFn,
        *,
        day_limit_usd: float | None = None,
        day_spent_before: float = 0.0,
    ) -> None:
        self.limit_usd = limit_usd
        self.day_limit_usd = day_limit_usd
        self.day_spent_before = day_spent_before
        self.cost = cost
        self.spent = 0.0
        self._announced: set[tuple[str, int]] = set()

    def add(self, model: str, usage: Usage) -> None:
        try:
            priced = self.cost(model, usage)
        except Exception:  # an unpriced model never breaks a turn
            priced = None
        self.spent += priced or 0.0

    def _limits(self) -> list[tuple[ev.BudgetScope, float, float]]:
        """(scope, limit, spent) for each limit that is set."""
        limits: list[tuple[ev.BudgetScope, float, float]] = []
        if self.limit_usd is not None:
            limits.append(("session", self.limit_usd, self.spent))
        if self.day_limit_usd is not None:
            limits.append(("day", self.day_limit_usd, self.day_spent_before + self.spent))
        return limits

    @property
    def exceeded(self) -> bool:
        return any(spent >= limit for _, limit, spent in self._limits())

    def new_warnings(self) -> list[ev.BudgetWarning]:
        """The thresholds crossed since the last call, each announced once per session."""
        warnings = []
        for scope, limit, spent in self._limits():
            reached = [
                t for t in THRESHOLDS if spent >= limit * t / 100 and (scope, t) not in self._announced
            ]
            if reached:
                self._announced.update((scope, t) for t in reached)
                warnings.append(ev.BudgetWarning(scope, max(reached), round(limit, 6), round(spent, 6)))
        return warnings

    def message(self) -> str:
        for scope, limit, spent in self._limits():
            if spent >= limit:
                if scope == "day":
                    return f"the day's budget of ${limit:.2f} was reached (${spent:.4f} spent today)"
                return f"the session's budget of ${limit:.2f} was reached (${spent:.4f} spent)"
        return "the budget was reached"


class BudgetHook(RuntimeHooks):
    """Counts one runtime's own calls into the shared budget, announces the thresholds,
    and stops the run before the next model call once it is spent."""

    receives_deltas = False  # only usage counts (the stream's hot path)

    def __init__(self, budget: SessionBudget) -> None:
        self.budget = budget
        self._emit: Emit | None = None

    def attach(self, emit: Emit) -> None:
        self._emit = emit

    async def on_event(self, event: ev.RuntimeEvent) -> None:
        if isinstance(event, ev.UsageReported):  # a child's are wrapped: its own hook counts them
            self.budget.add(event.model, event.usage)
            for warning in self.budget.new_warnings():
                if self._emit is not None:
                    await self._emit(warning)
                    await self._emit(
                        ev.Notice("warning" if warning.percent >= 80 else "info", warning.notice)
                    )

    async def before_model_call(self, request: ModelRequest) -> ModelRequest | None:
        if self.budget.exceeded:
            raise StopRun(self.budget.message(), "budget")
        return None
