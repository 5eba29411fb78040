"""Budgets through the real SDK and the fake server (issue 33): warnings at 50, 80 and
100% of the session's and the day's limit; at 100% the run ends with reason `budget`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.runtime.budget import SessionBudget
from wyckoff_cli.testing.fake_server import FakeServer

KEY = "fake-key-for-the-fake-server"
SONNET_INPUT = 3e-6  # USD per input token


def _glob(pattern: str, tokens: int) -> dict[str, Any]:
    return {
        "tool_calls": [{"name": "glob", "args": {"pattern": pattern}, "id": f"g_{pattern}"}],
        "usage": {"input_tokens": tokens, "output_tokens": 0},
    }


def _run(workspace: Path, server: FakeServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
    return subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "run", "--model", "anthropic:claude-sonnet-4-5"]
        + ["--output-format", "stream-json", *args, "look"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def _events(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert "Traceback" not in result.stderr, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def test_the_session_budget_warns_at_50_80_and_100_then_stops(workspace: Path) -> None:
    with FakeServer() as server:
        # $0.51, then $0.81, then $1.02 of a $1 budget
        server.script(_glob("a*", 170_000), _glob("b*", 100_000), _glob("c*", 70_000), {"text": "never sent"})
        result = _run(workspace, server, "--max-budget-usd", "1")
        requests = len(server.requests)
    events = _events(result)
    warnings = [e for e in events if e["type"] == "budget_warning"]
    assert [(w["scope"], w["percent"]) for w in warnings] == [
        ("session", 50),
        ("session", 80),
        ("session", 100),
    ]
    assert warnings[0]["limit_usd"] == 1 and warnings[0]["spent_usd"] == pytest.approx(0.51)
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("50% of the session's budget of $1.00 spent" in n for n in notices)
    assert any("100% of the session's budget" in n for n in notices)
    # the third call's tool ran to its end before the run stopped
    assert sum(1 for e in events if e["type"] == "tool_result") == 3
    assert events[-1]["type"] == "done" and events[-1]["reason"] == "budget"
    assert requests == 3
    assert result.returncode == 1


def test_the_day_budget_counts_every_session_today(workspace: Path) -> None:
    from wyckoff_cli.storage.paths import config_dir

    config = config_dir() / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[session]\nmax_day_usd = 1.0\n", encoding="utf-8")
    with FakeServer() as server:  # an earlier session today spends $0.60
        server.script({"text": "first", "usage": {"input_tokens": 200_000, "output_tokens": 0}})
        first = _events(_run(workspace, server))
        assert [e for e in first if e["type"] == "budget_warning"][-1]["percent"] == 50
    with FakeServer() as server:  # this one adds $0.30 (90%), then $0.15 (105%)
        server.script(_glob("a*", 100_000), _glob("b*", 50_000), {"text": "never sent"})
        events = _events(_run(workspace, server))
        requests = len(server.requests)
    warnings = [(e["scope"], e["percent"]) for e in events if e["type"] == "budget_warning"]
    assert warnings == [("day", 80), ("day", 100)]
    assert any("today's budget of $1.00" in e["message"] for e in events if e["type"] == "notice")
    assert events[-1]["reason"] == "budget" and requests == 2


def test_a_call_that_crosses_two_thresholds_announces_the_higher_once() -> None:
    budget = SessionBudget(1.0, lambda model, usage: usage.input_tokens * SONNET_INPUT)
    from wyckoff_cli.core.usage import Usage

    budget.add("m", Usage(300_000))
    assert [(w.scope, w.percent) for w in budget.new_warnings()] == [("session", 80)]
    assert budget.new_warnings() == [] and not budget.exceeded
    budget.add("m", Usage(100_000))
    assert [w.percent for w in budget.new_warnings()] == [100] and budget.exceeded
    assert "session's budget of $1.00 was reached" in budget.message()


def test_a_bad_day_limit_is_a_clear_error(workspace: Path) -> None:
    from wyckoff_cli.storage.paths import config_dir

    config = config_dir() / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[session]\nmax_day_usd = "lots"\n', encoding="utf-8")
    with FakeServer() as server:
        result = _run(workspace, server)
    assert result.returncode == 2 and "max_day_usd" in result.stderr and "Traceback" not in result.stderr


def test_today_starts_at_midnight_utc(tmp_path: Path) -> None:
    from wyckoff_cli.storage.spend import spent_since

    trace = tmp_path / "s"
    trace.mkdir()
    records = [
        {"type": "usage", "ts": "2026-12-01T23:59:00+00:00", "model": "m", "cost_usd": 2.0},
        {"type": "usage", "ts": "2026-12-02T00:01:00+00:00", "model": "m", "cost_usd": 0.5},
        {
            "type": "subagent",
            "ts": "2026-12-02T00:02:00+00:00",
            "agent": "explore",
            "event": {"type": "usage", "model": "m"},
            "cost_usd": 0.25,
        },
    ]
    (trace / "scratchpad.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    midnight = datetime(2026, 12, 2, tzinfo=UTC)
    assert spent_since([trace], midnight, lambda model, usage: None) == pytest.approx(0.75)
