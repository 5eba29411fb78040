"""The one-line summary `wyckoff run` prints to stderr at the end of a turn.

    [summary] 3 rounds · tool calls: 2 ok, 1 refused, 0 failed · 1 file changed · $0.0042

Built from the turn's events only (`RunSummary.record(event)` for each), so it says
what happened, whatever the answer claims. With `--output-format json` the same
figures are the result's `summary` field (`to_dict()`).

- A call is *refused* when the policy or the person said no (an `approval_result` of
  `deny` / `auto_deny`), or a guard would not run it (the doom-loop guard, the round
  limit, a refused batch); *failed* when it ran (or its arguments were invalid) and
  returned an error; *ok* otherwise.
- *Files changed* are the distinct `path` arguments of successful tools of kind
  `edit` (commands run by `run_shell` may change files too; they are not counted).
- *Cost* sums the priced model calls, every sub-agent's included; `cost_usd` is None when no call could be priced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.usage import Usage

REFUSED_DECISIONS = frozenset({"deny", "auto_deny"})
_REFUSAL_PREFIXES = ("Not run:", "Refused:", "The user denied")

Pricer = Callable[[str, Usage], "float | None"]


@dataclass
class RunSummary:
    workspace: Path
    tool_kinds: Mapping[str, str]
    price: Pricer | None = None
    rounds: int = 0
    ok: int = 0
    refused: int = 0
    failed: int = 0
    cost_usd: float | None = None
    uncosted_calls: int = 0
    files: list[str] = field(default_factory=list)
    _denied: set[str] = field(default_factory=set)
    _args: dict[str, dict[str, Any]] = field(default_factory=dict)

    def record(self, event: ev.RuntimeEvent) -> None:
        if type(event) is ev.TextDelta:  # most events: nothing to count (one check, not nine)
            return
        if isinstance(event, ev.ModelStart):
            self.rounds = max(self.rounds, event.round)
        elif isinstance(event, ev.ToolStarted):
            if self.tool_kinds.get(event.name) == "edit":  # kept until its result: bounded
                self._args[event.id] = dict(event.args)  # the arguments that ran (maybe edited)
        elif isinstance(event, ev.ApprovalDecided) and event.decision in REFUSED_DECISIONS:
            self._denied.add(event.id)
        elif isinstance(event, ev.ToolSucceeded):
            self.ok += 1
            self._note_file(event.id, event.name)
        elif isinstance(event, ev.ToolFailed):
            self._args.pop(event.id, None)
            if event.id in self._denied or event.error.startswith(_REFUSAL_PREFIXES):
                self.refused += 1
            else:
                self.failed += 1
        elif isinstance(event, ev.UsageReported):
            self._add_cost(event)
        elif isinstance(event, ev.SubagentEvent) and isinstance(event.inner, ev.UsageReported):
            self._add_cost(event.inner)  # a sub-agent's calls are the run's cost too
        elif isinstance(event, ev.TurnDone):
            self.rounds = max(self.rounds, event.rounds)

    def _note_file(self, call_id: str, name: str) -> None:
        if self.tool_kinds.get(name) != "edit":
            return
        raw = self._args.pop(call_id, {}).get("path")
        if not isinstance(raw, str) or not raw:
            return
        path = Path(raw)
        try:
            shown = str((path if path.is_absolute() else self.workspace / path).relative_to(self.workspace))
        except ValueError:
            shown = raw
        if shown not in self.files:
            self.files.append(shown)

    def _add_cost(self, event: ev.UsageReported) -> None:
        cost = None
        if self.price is not None:
            try:
                cost = self.price(event.model, event.usage)
            except Exception:  # pricing never breaks a run
                cost = None
        if cost is None:
            self.uncosted_calls += 1
        else:
            self.cost_usd = (self.cost_usd or 0.0) + cost

    def to_dict(self) -> dict[str, Any]:
        return {
            "rounds": self.rounds,
            "tool_calls": {"ok": self.ok, "refused": self.refused, "failed": self.failed},
            "files_changed": list(self.files),
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "uncosted_calls": self.uncosted_calls,
        }

    def line(self) -> str:
        rounds = f"{self.rounds} round{'s' if self.rounds != 1 else ''}"
        calls = f"tool calls: {self.ok} ok, {self.refused} refused, {self.failed} failed"
        count = len(self.files)
        files = f"{count} file{'s' if count != 1 else ''} changed"
        if self.cost_usd is None:
            cost = "cost unknown"
        else:
            cost = f"${self.cost_usd:.4f}" + (" (some calls unpriced)" if self.uncosted_calls else "")
        return f"[summary] {rounds} · {calls} · {files} · {cost}"
