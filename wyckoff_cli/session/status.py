"""What the status bar shows, as plain data fed by events.

Kept free of widgets so it is tested without a screen: the chat controller feeds it
every event (`observe`: usage, fallback, model and mode changes), the app's router
sets the display state; the status bar renders `StatusModel.segments()`. `/cost`
reads the same per-model totals.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.events import UsageReported
from wyckoff_cli.session.resent import ResentLedger

RATE_WINDOW = 600.0  # seconds: the spend rate is over the last 10 minutes

# (model id, usage event) -> (cost in USD, saved by the cache in USD), or None if unpriced
PriceFn = Callable[[str, UsageReported], tuple[float, float] | None]


@dataclass
class ModelTotals:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    web_searches: int = 0  # server-side web searches (priced into `cost`)
    cost: float = 0.0
    saved: float = 0.0
    priced: bool = True


@dataclass
class StatusModel:
    model: str
    mode: str = "default"
    auto_allow: str = ""  # how sandbox auto-allow stands ("" when off), beside the mode
    context_window: int = 64_000
    fallback_model: str | None = None
    state: str = "idle"
    context_tokens: int = 0  # the last call's prompt plus answer: what the next call starts from
    background_running: int = 0
    per_model: dict[str, ModelTotals] = field(default_factory=dict)
    per_agent: dict[str, ModelTotals] = field(default_factory=dict)  # sub-agents' calls, by agent
    per_purpose: dict[str, ModelTotals] = field(default_factory=dict)  # this run's calls, by purpose
    resent: ResentLedger = field(default_factory=ResentLedger)  # tool results sent again
    price: PriceFn | None = None
    mcp: str = ""  # "MCP 3/4": connected of enabled servers
    lsp: str = ""  # "LSP basedpyright": the running language servers, "!" when one failed
    waiting: tuple[str, ...] = ()  # background sessions waiting for the user: "bg-1a2b3c: run_shell: ls"
    custom_line: str = ""  # the status line command's first line of output (session/status_line.py)
    clock: Callable[[], float] = time.monotonic  # for the spend rate
    _spend: deque[tuple[float, float]] = field(default_factory=deque)  # (when, USD) of recent calls

    def observe(self, event: ev.RuntimeEvent) -> None:
        """Take what the bar shows from one event."""
        if type(event) is ev.TextDelta:  # most events: nothing shown (one check, not seven)
            return
        if isinstance(event, ev.UsageReported):
            self.add_usage(event)
        elif isinstance(event, ev.SubagentEvent) and isinstance(event.inner, ev.UsageReported):
            self.add_usage(event.inner, agent=event.agent)
        elif isinstance(event, ev.ToolSucceeded | ev.ToolFailed | ev.SubagentEvent):
            self.resent.observe(event, None)
        elif isinstance(event, ev.FallbackSwitched):
            self.fallback_model = event.to_model
        elif isinstance(event, ev.ModelChanged):
            self.model, self.fallback_model = event.model, None
            self.context_window = event.context_window or self.context_window
        elif isinstance(event, ev.ModeChanged):
            self.mode = event.mode

    def reset(self) -> None:
        """A new or resumed session: no calls counted yet."""
        self.per_model.clear()
        self.per_agent.clear()
        self.per_purpose.clear()
        self._spend.clear()
        self.resent.clear()
        self.context_tokens = 0
        self.fallback_model = None

    def restore_session(self, info: Any) -> None:
        """Seed the totals from a resumed session's summary (`storage.session_info`)."""
        self.restore(info.usage_by_model, context_tokens=info.context_tokens, agent_usage=info.agent_usage)

    def restore(
        self,
        usage_by_model: Mapping[str, Any],
        *,
        context_tokens: int = 0,
        agent_usage: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Seed the totals of a resumed session: its saved token counts per model (and
        per sub-agent and model), priced again as one record each (its calls are not
        counted again), and the context its last call left."""
        for model, usage in usage_by_model.items():
            self.add_usage(UsageReported.from_usage(model, usage), calls=0)
        for agent, by_model in (agent_usage or {}).items():
            for model, usage in by_model.items():
                self._count(self.per_agent, agent, UsageReported.from_usage(model, usage), calls=0)
        self.context_tokens = context_tokens

    def add_usage(self, event: UsageReported, calls: int = 1, agent: str | None = None) -> None:
        """Count one call: in its model's totals (the session's), and in its agent's
        when a sub-agent made it (whose context is not the session's), or an MCP
        server's sampling request (`source`: counted as `mcp:SERVER`)."""
        if agent is None and event.source:
            agent = ev.source_agent(event.source)
        self._count(self.per_model, event.model, event, calls)
        if calls:  # a resumed session's saved totals carry no purposes
            self._count(self.per_purpose, event.purpose, event, calls)
            self._note_spend(event)
            if event.resent:
                priced = self.price(event.model, event) if self.price else None
                self.resent.observe(event, priced[0] if priced is not None else None)
        if agent is None:
            self.context_tokens = event.input_tokens + event.output_tokens
        else:
            self._count(self.per_agent, agent, event, calls)

    def _count(self, table: dict[str, ModelTotals], key: str, event: UsageReported, calls: int) -> None:
        priced = self.price(event.model, event) if self.price else None
        totals = table.setdefault(key, ModelTotals())
        totals.calls += calls
        totals.input_tokens += event.input_tokens
        totals.output_tokens += event.output_tokens
        totals.cache_read_tokens += event.cache_read_tokens
        totals.cache_write_tokens += event.cache_write_tokens
        totals.web_searches += event.web_searches
        if priced is None:
            totals.priced = False
        else:
            totals.cost += priced[0]
            totals.saved += priced[1]

    def _note_spend(self, event: UsageReported) -> None:
        priced = self.price(event.model, event) if self.price else None
        if priced is not None and priced[0] > 0:
            self._spend.append((self.clock(), priced[0]))

    def spend_rate(self) -> float:
        """USD per hour, over the calls of the last `RATE_WINDOW` seconds."""
        horizon = self.clock() - RATE_WINDOW
        while self._spend and self._spend[0][0] < horizon:
            self._spend.popleft()
        return sum(cost for _, cost in self._spend) * 3600 / RATE_WINDOW

    def rate_text(self) -> str:
        """` · $0.74/h` beside the cost while calls were priced in the last 10 minutes."""
        rate = self.spend_rate()
        return f" · ${rate:.2f}/h" if rate > 0 else ""

    def main_cost(self) -> float:
        """What the main agent's own calls cost (the session's minus its sub-agents')."""
        return self.cost - sum(t.cost for t in self.per_agent.values())

    def _sum(self, name: str) -> int:
        return sum(getattr(t, name) for t in self.per_model.values())

    @property
    def input_tokens(self) -> int:
        return self._sum("input_tokens")

    @property
    def output_tokens(self) -> int:
        return self._sum("output_tokens")

    @property
    def cache_read_tokens(self) -> int:
        return self._sum("cache_read_tokens")

    @property
    def cache_write_tokens(self) -> int:
        return self._sum("cache_write_tokens")

    @property
    def cost(self) -> float:
        return sum(t.cost for t in self.per_model.values())

    @property
    def saved(self) -> float:
        return sum(t.saved for t in self.per_model.values())

    @property
    def all_priced(self) -> bool:
        return all(t.priced for t in self.per_model.values())

    @property
    def any_priced(self) -> bool:
        return any(t.priced for t in self.per_model.values())

    def cost_text(self) -> str:
        """The session's cost, saying plainly when some or all calls have no price."""
        if self.per_model and not self.any_priced:
            return "cost unknown (set prices with `wyckoff model cost`)"
        text = f"${self.cost:.4f} {self.cache_text()}"
        return text if self.all_priced else f"{text} + unpriced calls"

    def cache_text(self) -> str:
        """`saved $0.0100`, or, while writing the cache has cost more than reading it
        saved (a first Anthropic call), what the writes cost: `cache writes +$0.0040`."""
        cell = saved_cell(self.saved)
        return f"cache {cell}" if self.saved < 0 else f"saved {cell}"

    @property
    def cache_hit_rate(self) -> float:
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def context_percent(self) -> float:
        return 100.0 * self.context_tokens / self.context_window if self.context_window else 0.0

    def segments(self) -> list[tuple[str, str]]:
        """(name, text) pairs in display order, each in its full form."""
        return [(name, forms[0]) for name, forms in self.segment_forms()]

    def segment_forms(self) -> list[tuple[str, list[str]]]:
        """(name, forms) in display order: each segment's full text, then its shorter
        forms. A narrow bar applies `SHORTEN_ORDER` until it fits."""
        model = self.model if self.fallback_model is None else f"{self.fallback_model} (fallback)"
        bare_model = model.split(":", 1)[1] if ":" in model.split(" ", 1)[0] else model
        cache_rate = f"cache {self.cache_hit_rate:.0%}"
        rate = self.rate_text()
        parts: list[tuple[str, list[str]]] = [
            ("state", [self.state]),
            ("model", [model, bare_model]),
            (
                "mode",
                [f"{self.mode} · {self.auto_allow}", f"{self.mode} · auto"]
                if self.auto_allow
                else [self.mode],
            ),
            ("context", [f"ctx {self.context_percent:.0f}%"]),
            ("tokens", [f"↑{human(self.input_tokens)} ↓{human(self.output_tokens)}"]),
            (
                "cache",
                [
                    f"{cache_rate} r{human(self.cache_read_tokens)} w{human(self.cache_write_tokens)}",
                    cache_rate,
                ],
            ),
            ("cost", [self.cost_text() + rate, self.cost_text(), self.short_cost_text()]),
        ]
        if self.per_agent:  # the sub-agents' share of the cost, beside it
            shares = [f"main ${self.main_cost():.4f}"]
            shares += [f"{name} ${t.cost:.4f}" for name, t in self.per_agent.items()]
            parts.append(("agents", [" · ".join(shares)]))
        if self.mcp:
            parts.insert(3, ("mcp", [self.mcp]))
        if self.lsp:
            parts.insert(3, ("lsp", [self.lsp]))
        if self.waiting:  # never dropped: a waiting session must be impossible to miss
            first, _, what = self.waiting[0].partition(": ")
            more = f" (+{len(self.waiting) - 1} more)" if len(self.waiting) > 1 else ""
            parts.insert(1, ("waiting", [f"⚠ {first} waits for {what}{more}", f"⚠ {first} waits{more}"]))
        if self.custom_line:
            parts.append(("line", [self.custom_line]))
        if self.background_running:
            count = self.background_running
            parts.append(("background", [f"{count} bg task{'s' * (count > 1)}", f"{count} bg"]))
        return parts

    def short_cost_text(self) -> str:
        """The cost without what the cache saved (and an unknown cost without the hint)."""
        if self.per_model and not self.any_priced:
            return "cost unknown"
        text = f"${self.cost:.4f}"
        return text if self.all_priced else f"{text} + unpriced"


def totals_row(label: str, totals: ModelTotals) -> list[str]:
    """One `/cost` row: calls, tokens, searches, cost and what the cache saved."""
    return [
        label,
        str(totals.calls),
        f"{totals.input_tokens:,}",
        f"{totals.output_tokens:,}",
        f"{totals.cache_read_tokens:,}",
        f"{totals.cache_write_tokens:,}",
        f"{totals.web_searches:,}",
        f"${totals.cost:.4f}" if totals.priced else "unpriced",
        saved_cell(totals.saved),
    ]


def saved_cell(saved: float) -> str:
    """`/cost`'s "cache saved": what reading the cache saved, or, while writing it has
    cost more than reading it saved (a first Anthropic call), the writes' extra cost."""
    return f"writes +${-saved:.4f}" if saved < 0 else f"${saved:.4f}"


def agent_rows(status: StatusModel) -> list[list[str]]:
    """`/cost` rows for the sub-agents, by agent (their calls are in the models' rows)."""
    return [totals_row(f"agent {name}", totals) for name, totals in status.per_agent.items()]


def purpose_rows(status: StatusModel) -> list[list[str]]:
    """`/cost` rows by what the calls were for (`turn`, `compaction`, ...), once more
    than the agents' own turns made calls (every call is in the models' rows too)."""
    if set(status.per_purpose) <= {"turn"}:
        return []
    return [totals_row(f"for {name}", totals) for name, totals in status.per_purpose.items()]


def resent_rows(status: StatusModel, count: int = 5) -> list[list[str]]:
    """`/cost` rows for the tool results that cost most in resent context: the tokens
    they added to later prompts (input), over how many calls, and that share of the cost."""
    return [
        [f"resent: {r.describe()}", str(r.calls), f"{r.tokens:,}", "", "", "", "", f"${r.cost:.4f}", ""]
        for r in status.resent.costliest(count)
        if r.tokens
    ]


SHORTEN_ORDER: tuple[tuple[str, int | None], ...] = (
    ("cost", 1),  # without the spend rate
    ("cache", 1),  # the hit rate only, without the read and written tokens
    ("model", 1),  # without the provider
    ("agents", None),  # None: dropped
    ("cache", None),
    ("tokens", None),
    ("background", 1),  # "2 bg"
    ("mcp", None),
    ("lsp", None),
    ("line", None),
    ("context", None),
    ("model", None),
    ("background", None),
    ("cost", 2),  # without what the cache saved
    ("waiting", 1),  # only the waiting session's id
)
"""How a narrow status bar makes room, step by step (docs/TUI.md): a segment takes a
shorter form (its index in `segment_forms()`) or is dropped. The state, the permission
mode, the cost and a waiting background session are never dropped."""


def human(count: int) -> str:
    if count < 1_000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1_000:.1f}k"
    return f"{count / 1_000_000:.2f}M"
