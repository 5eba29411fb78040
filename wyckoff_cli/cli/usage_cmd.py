"""`wyckoff usage [--days N] [--all-projects] [--json]`: tokens and cost per model.

Read from the saved sessions' run traces (`scratchpad.jsonl`): every model call's
`usage` record names the model that actually served it (after a fallback, the
fallback), so figures are grouped by that id. A call recorded with its cost keeps it;
one recorded without (prices unknown then) is priced now from the catalogue and your
overrides, and counted as unpriced when that is still impossible. Each call is priced
on its own, so long-prompt price tiers stay right.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--days", type=int, default=30, help="look back this many days (default 30)")
    parser.add_argument("--all-projects", action="store_true", help="every project, not only this one")
    parser.add_argument("--json", action="store_true", help="print JSON")


@dataclass
class ModelUsage:
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


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.session.builder import open_workspace
    from wyckoff_cli.session.store import build_session_store, call_coster

    if args.days < 1:
        raise UsageError(f"--days must be a positive number of days, got {args.days}")
    workspace = open_workspace(Path.cwd())
    store = build_session_store(workspace.config)
    since = datetime.now(UTC) - timedelta(days=args.days)
    sessions = store.list(None if args.all_projects else workspace.root)
    totals = collect_usage([s.directory for s in sessions], since, call_coster(workspace.config))
    if args.json:
        print(
            json.dumps({"days": args.days, "models": {m: u.to_dict() for m, u in totals.items()}}, indent=2)
        )
        return 0
    scope = "all projects" if args.all_projects else str(workspace.root)
    print(f"Usage over the last {args.days} days ({scope}, {len(sessions)} sessions)")
    if not totals:
        print("No model calls recorded.")
        return 0
    print(format_table(totals))
    return 0


def collect_usage(directories: list[Path], since: datetime, price: Any) -> dict[str, ModelUsage]:
    """Per-model totals of every `usage` record at or after `since`."""
    from wyckoff_cli.core.usage import Usage
    from wyckoff_cli.storage.chatlog import read_jsonl

    totals: dict[str, ModelUsage] = {}
    for directory in directories:
        try:
            records = read_jsonl(directory / "scratchpad.jsonl").records
        except OSError:
            continue
        for record in records:
            if record.get("type") != "usage" or not _after(record.get("ts"), since):
                continue
            model = str(record.get("model") or "unknown")
            row = totals.setdefault(model, ModelUsage())
            usage = Usage.from_dict(record)
            row.calls += 1
            row.input_tokens += usage.input_tokens
            row.output_tokens += usage.output_tokens
            row.cache_read_tokens += usage.cache_read_tokens
            row.cache_write_tokens += usage.cache_write_tokens
            cost = record.get("cost_usd")
            if not isinstance(cost, int | float):
                cost = price(model, usage)
            if cost is None:
                row.unpriced_calls += 1
            else:
                row.cost_usd += float(cost)
    return dict(sorted(totals.items(), key=lambda item: -item[1].cost_usd))


def _after(stamp: Any, since: datetime) -> bool:
    if not isinstance(stamp, str):
        return False
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return False
    return (when if when.tzinfo else when.replace(tzinfo=UTC)) >= since


def format_table(totals: dict[str, ModelUsage]) -> str:
    headers = ("model", "calls", "input", "output", "cache read", "cache write", "cost")
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
