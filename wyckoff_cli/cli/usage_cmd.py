"""`wyckoff usage [--by model|agent|purpose|tool|day] [--since DATE | --days N] [--all-projects] [--json]`.

Tokens and cost over the saved sessions' run traces (`scratchpad.jsonl`), grouped by
the model that actually served each call (after a fallback, the fallback), the agent
that made it (`main`, or a sub-agent's name: its calls are recorded wrapped in the
parent's trace), what it was for (`turn`, `compaction`, ...), the UTC day, or the tool
whose earlier results each call's prompt sent again (`resent`: the tokens, and that
share of the call's cost). A call
recorded with its cost keeps it; one recorded without (prices unknown then) is priced
now from the catalogue and your overrides, and counted as unpriced when that is still
impossible. Each call is priced on its own, so long-prompt price tiers stay right.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import UsageError

GROUPINGS = ("model", "agent", "purpose", "tool", "day")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--by", default="model", help="group by model, agent, purpose, tool or day (default model)"
    )
    parser.add_argument("--since", help="count calls from this UTC date on (YYYY-MM-DD), instead of --days")
    parser.add_argument("--days", type=int, default=30, help="look back this many days (default 30)")
    parser.add_argument("--all-projects", action="store_true", help="every project, not only this one")
    parser.add_argument("--json", action="store_true", help="print JSON")


@dataclass
class ModelUsage:
    """The totals of one group (a model, an agent, a purpose or a day)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "unpriced_calls": self.unpriced_calls,
        }


def since_of(args: argparse.Namespace) -> datetime:
    """The start of the window: `--since DATE` (midnight UTC) or `--days` ago."""
    if args.since is not None:
        try:
            day = date.fromisoformat(args.since)
        except ValueError:
            raise UsageError(f"--since takes a date as YYYY-MM-DD, got {args.since!r}") from None
        return datetime(day.year, day.month, day.day, tzinfo=UTC)
    if args.days < 1:
        raise UsageError(f"--days must be a positive number of days, got {args.days}")
    return datetime.now(UTC) - timedelta(days=args.days)


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.session.builder import open_workspace
    from wyckoff_cli.session.store import build_session_store, call_coster

    if args.by not in GROUPINGS:
        raise UsageError(f"--by takes one of {', '.join(GROUPINGS)}, got {args.by!r}")
    since = since_of(args)
    workspace = open_workspace(Path.cwd())
    store = build_session_store(workspace.config)
    sessions = store.list(None if args.all_projects else workspace.root)
    directories = [s.directory for s in sessions]
    totals = collect_usage(directories, since, call_coster(workspace.config), by=args.by)
    if args.json:
        groups = {key: row.to_dict() for key, row in totals.items()}
        data: dict[str, Any] = {"by": args.by, "since": since.isoformat(), "groups": groups}
        if args.since is None:
            data["days"] = args.days
        if args.by == "model":
            data["models"] = groups  # the name it had before `--by`
        print(json.dumps(data, indent=2))
        return 0
    scope = "all projects" if args.all_projects else str(workspace.root)
    window = f"since {args.since}" if args.since is not None else f"over the last {args.days} days"
    print(f"Usage {window} by {args.by} ({scope}, {len(sessions)} sessions)")
    if not totals:
        print("No model calls recorded.")
        return 0
    print(format_table(totals, args.by))
    return 0


def collect_usage(
    directories: list[Path], since: datetime, price: Any, by: str = "model"
) -> dict[str, ModelUsage]:
    """Totals per group (`by`) of every call's `usage` record at or after `since`,
    a sub-agent's (recorded wrapped, as `subagent`) included. The costliest first
    (days: in date order)."""
    from wyckoff_cli.core.usage import Usage
    from wyckoff_cli.storage.spend import call_cost, call_of, recorded_at_or_after, trace_records

    totals: dict[str, ModelUsage] = {}
    for record in trace_records(directories):
        call, agent = call_of(record)
        if call is None or not recorded_at_or_after(record.get("ts"), since):
            continue
        model = str(call.get("model") or "unknown")
        usage = Usage.from_dict(call)
        cost = call_cost(record, call, price)  # the recorder's price, on the outer record
        if by == "tool":
            _add_resent(totals, call, usage, cost)
            continue
        key = _group_key(by, model, agent, call, record)
        row = totals.setdefault(key, ModelUsage())
        row.calls += 1
        row.input_tokens += usage.input_tokens
        row.output_tokens += usage.output_tokens
        row.cache_read_tokens += usage.cache_read_tokens
        row.cache_write_tokens += usage.cache_write_tokens
        if cost is None:
            row.unpriced_calls += 1
        else:
            row.cost_usd += float(cost)
    if by == "day":
        return dict(sorted(totals.items()))
    return dict(sorted(totals.items(), key=lambda item: -item[1].cost_usd))


def _add_resent(totals: dict[str, ModelUsage], call: dict[str, Any], usage: Any, cost: Any) -> None:
    """`--by tool`: the prompt tokens each call sent again because of earlier results of
    each tool (`input_tokens`), and that share of the call's cost (its cost in proportion
    to its prompt). `calls` counts the model calls that resent the tool's results."""
    by_tool: dict[str, int] = {}
    for share in call.get("resent") or ():
        if isinstance(share, dict) and isinstance(share.get("tokens"), int):
            tool = str(share.get("tool") or "unknown")
            by_tool[tool] = by_tool.get(tool, 0) + share["tokens"]
    for tool, tokens in by_tool.items():
        row = totals.setdefault(tool, ModelUsage())
        row.calls += 1
        row.input_tokens += tokens
        if cost is None:
            row.unpriced_calls += 1
        elif usage.input_tokens:
            row.cost_usd += float(cost) * min(1.0, tokens / usage.input_tokens)


def _group_key(by: str, model: str, agent: str, call: dict[str, Any], record: dict[str, Any]) -> str:
    if by == "agent":
        return agent
    if by == "purpose":
        return str(call.get("purpose") or "turn")  # recorded before purposes: the agent's turn
    if by == "day":
        return str(record.get("ts") or "")[:10] or "unknown"
    return model


def format_table(totals: dict[str, ModelUsage], by: str = "model") -> str:
    headers = (
        by,
        "calls",
        "resent" if by == "tool" else "input",
        "output",
        "cache read",
        "cache write",
        "cost",
    )
    rows = [
        (
            model,
            f"{u.calls:,}",
            f"{u.input_tokens:,}",
            f"{u.output_tokens:,}",
            f"{u.cache_read_tokens:,}",
            f"{u.cache_write_tokens:,}",
            f"${u.cost_usd:.4f}" + (f" (+{u.unpriced_calls} unpriced)" if u.unpriced_calls else ""),
        )
        for model, u in totals.items()
    ]
    total = ModelUsage()
    for u in totals.values():
        for name in (
            "calls",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "unpriced_calls",
        ):
            setattr(total, name, getattr(total, name) + getattr(u, name))
        total.cost_usd += u.cost_usd
    rows.append(
        (
            "total",
            f"{total.calls:,}",
            f"{total.input_tokens:,}",
            f"{total.output_tokens:,}",
            f"{total.cache_read_tokens:,}",
            f"{total.cache_write_tokens:,}",
            f"${total.cost_usd:.4f}",
        )
    )
    widths = [max(len(str(r[i])) for r in (headers, *rows)) for i in range(len(headers))]
    lines = [
        "  ".join(
            str(cell).ljust(w) if i == 0 else str(cell).rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in (headers, *rows)
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
