"""The model calls recorded in sessions' run traces, and what they cost.

Every call is a `usage` record of `scratchpad.jsonl` (a sub-agent's is wrapped in a
`subagent` record naming the agent); the recorder adds `cost_usd` when it could price
the call. `wyckoff usage` groups them; the day's budget (`[session] max_day_usd`)
sums them with `spent_since`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wyckoff_cli.core.events import source_agent
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.storage.chatlog import read_jsonl

Pricer = Callable[[str, Usage], "float | None"]


def call_of(record: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """A model call's usage fields and the agent that made it (`main`, the
    sub-agent's name, or `mcp:SERVER` for an MCP server's sampling request), or None
    when `record` is not a model call."""
    if record.get("type") == "usage":
        source = record.get("source")
        return record, source_agent(source) if isinstance(source, str) and source else "main"
    inner = record.get("event")
    if record.get("type") == "subagent" and isinstance(inner, dict) and inner.get("type") == "usage":
        return inner, str(record.get("agent") or "sub-agent")
    return None, ""


def recorded_at_or_after(stamp: Any, since: datetime) -> bool:
    if not isinstance(stamp, str):
        return False
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return False
    return (when if when.tzinfo else when.replace(tzinfo=UTC)) >= since


def trace_records(directories: Iterable[Path]) -> Iterator[dict[str, Any]]:
    """Every record of the sessions' run traces (an unreadable one is skipped)."""
    for directory in directories:
        try:
            records = read_jsonl(directory / "scratchpad.jsonl").records
        except OSError:
            continue
        yield from records


def call_cost(record: dict[str, Any], call: dict[str, Any], price: Pricer) -> float | None:
    """The recorded price of a call, or today's when it was recorded without one."""
    cost = record.get("cost_usd")
    if isinstance(cost, int | float):
        return float(cost)
    try:
        return price(str(call.get("model") or "unknown"), Usage.from_dict(call))
    except Exception:  # pricing never breaks a session
        return None


def spent_since(directories: Iterable[Path], since: datetime, price: Pricer) -> float:
    """USD of every recorded call at or after `since` (unpriced calls count as free)."""
    total = 0.0
    for record in trace_records(directories):
        call, _ = call_of(record)
        if call is not None and recorded_at_or_after(record.get("ts"), since):
            total += call_cost(record, call, price) or 0.0
    return total
