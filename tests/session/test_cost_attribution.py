"""Where the tokens went: a turn's `done` counts its sub-agents' calls, every usage
record says which agent and purpose it served (issue 33)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.session.subagent_support import build, flat_cost, make_builder, run, task_call
from wyckoff_cli.core import events as ev
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.testing.fake_server import FakeServer

KEY = "fake-key-for-the-fake-server"
PARENT_FIRST = {"input_tokens": 1000, "output_tokens": 10}
CHILD_FIRST = {"input_tokens": 2000, "output_tokens": 20}
CHILD_LAST = {"input_tokens": 3000, "output_tokens": 30}
PARENT_LAST = {"input_tokens": 4000, "output_tokens": 40}


def _script(server: FakeServer) -> None:
    server.script(
        {"tool_calls": [task_call("explore", "Where is answer?", call_id="t_parent")], "usage": PARENT_FIRST},
        {
            "tool_calls": [{"name": "glob", "args": {"pattern": "*.py"}, "id": "t_child"}],
            "usage": CHILD_FIRST,
        },
        {"text": "in lib.py", "usage": CHILD_LAST},
        {"text": "It is in lib.py.", "usage": PARENT_LAST},
    )


async def test_done_counts_the_child_tokens_and_cost(workspace: Path) -> None:
    (workspace / "lib.py").write_text("x = 1\n", encoding="utf-8")
    with FakeServer() as server:
        _script(server)
        provider = build_provider(
            ModelSpec("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key=KEY)
        )
        session = build(make_builder(workspace, lambda _model: provider), "anthropic:claude-sonnet-4-5")
        events = await run(session, "find answer")
        await session.aclose()
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "completed"
    assert done.usage["input_tokens"] == 10_000 and done.usage["output_tokens"] == 100
    assert done.cost_usd == pytest.approx(flat_cost("", ev.UsageReported("m", 10_000, 100).usage))
    child_done = [
        e.inner for e in events if isinstance(e, ev.SubagentEvent) and isinstance(e.inner, ev.TurnDone)
    ]
    assert child_done[0].usage["input_tokens"] == 5000  # the child's own done: its calls only
    purposes = {e.purpose for e in events if isinstance(e, ev.UsageReported)}
    assert purposes == {"turn"}


def test_headless_done_and_summary_include_the_child(workspace: Path) -> None:
    """`wyckoff run`: `done.usage`, `done.cost_usd` and the `[summary]` cost are the
    totals of parent and child (Sonnet: $3 in, $15 out per million)."""
    (workspace / "lib.py").write_text("x = 1\n", encoding="utf-8")
    with FakeServer() as server:
        _script(server)
        env = dict(os.environ, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        result = subprocess.run(
            [sys.executable, "-m", "wyckoff_cli", "run", "--model", "anthropic:claude-sonnet-4-5"]
            + ["--output-format", "stream-json", "find answer"],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    done = events[-1]
    assert done["type"] == "done"
    assert done["usage"]["input_tokens"] == 10_000 and done["usage"]["output_tokens"] == 100
    expected = 10_000 * 3e-6 + 100 * 15e-6
    assert done["cost_usd"] == pytest.approx(expected)
    summary = next(line for line in result.stderr.splitlines() if line.startswith("[summary]"))
    assert f"${expected:.4f}" in summary
    wrapped = [e for e in events if e["type"] == "subagent" and e["event"]["type"] == "usage"]
    assert len(wrapped) == 2 and all(e["event"]["purpose"] == "turn" for e in wrapped)


def test_cost_shows_rows_by_purpose_once_not_only_turns_made_calls() -> None:
    from wyckoff_cli.session.info_requests import cost_output
    from wyckoff_cli.session.status import StatusModel

    status = StatusModel("m", price=lambda model, usage: (usage.input_tokens / 1000, 0.0))
    status.observe(ev.UsageReported("m", 1000, 10))
    output = cost_output(status)
    assert isinstance(output, ev.CommandOutput)
    assert not any(row[0].startswith("for ") for row in output.rows)
    status.observe(ev.UsageReported("m", 500, 5, purpose="compaction"))
    status.observe(ev.SubagentEvent("explore-1", "explore", "t1", ev.UsageReported("m", 2000, 20)))
    output = cost_output(status)
    assert isinstance(output, ev.CommandOutput)
    rows = {row[0]: row for row in output.rows}
    assert rows["for turn"][1:3] == ["2", "3,000"] and rows["for turn"][7] == "$3.0000"
    assert rows["for compaction"][1:3] == ["1", "500"] and rows["for compaction"][7] == "$0.5000"
    assert rows["agent explore"][2] == "2,000"


async def test_each_call_says_which_earlier_tool_results_it_resent(workspace: Path) -> None:
    big_text = "".join(f"line {n}: the quick brown fox {n * 7919 % 1000}\n" for n in range(400))
    (workspace / "big.txt").write_text(big_text, encoding="utf-8")
    (workspace / "small.txt").write_text("tiny\n", encoding="utf-8")
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "read_file", "args": {"path": "big.txt"}, "id": "r_big"}]},
            {"tool_calls": [{"name": "read_file", "args": {"path": "small.txt"}, "id": "r_small"}]},
            {"text": "done"},
        )
        provider = build_provider(
            ModelSpec("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key=KEY)
        )
        session = build(make_builder(workspace, lambda _model: provider), "anthropic:claude-sonnet-4-5")
        events = await run(session, "read them")
        directory = session.recorder.directory if session.recorder is not None else None
        await session.aclose()
    usages = [e for e in events if isinstance(e, ev.UsageReported)]
    assert [len(u.resent) for u in usages] == [0, 1, 2]
    big = {s["call_id"]: s for s in usages[2].resent}["r_big"]
    small = {s["call_id"]: s for s in usages[2].resent}["r_small"]
    assert big["tool"] == "read_file" and big["tokens"] > 1000 > small["tokens"] > 0
    assert usages[1].resent[0]["tokens"] == big["tokens"]  # the same result, counted alike

    from wyckoff_cli.session.info_requests import cost_output
    from wyckoff_cli.session.status import StatusModel

    status = StatusModel("m", price=lambda model, usage: (usage.input_tokens / 1_000_000, 0.0))
    for event in events:
        status.observe(event)
    output = cost_output(status)
    assert isinstance(output, ev.CommandOutput)
    resent = [row for row in output.rows if row[0].startswith("resent: ")]
    assert resent[0][0].startswith("resent: read_file at ") and "over 2 calls" in resent[0][0]
    assert resent[0][2] == f"{2 * big['tokens']:,}"

    from datetime import UTC, datetime, timedelta

    from wyckoff_cli.cli.usage_cmd import collect_usage

    assert directory is not None
    by_tool = collect_usage([directory], datetime.now(UTC) - timedelta(days=1), lambda m, u: 1.0, by="tool")
    assert by_tool["read_file"].calls == 2
    assert by_tool["read_file"].input_tokens == 2 * big["tokens"] + small["tokens"]


def test_the_spend_rate_is_per_hour_over_the_last_ten_minutes() -> None:
    from wyckoff_cli.session.status import StatusModel

    now = [1000.0]
    status = StatusModel(
        "m", price=lambda model, usage: (usage.input_tokens / 1000, 0.0), clock=lambda: now[0]
    )
    assert status.rate_text() == ""
    status.observe(ev.UsageReported("m", 100, 0))  # $0.10
    now[0] += 300
    status.observe(ev.SubagentEvent("e-1", "explore", "t", ev.UsageReported("m", 50, 0)))  # $0.05
    assert status.spend_rate() == pytest.approx(0.15 * 6)
    cost_forms = dict(status.segment_forms())["cost"]
    assert cost_forms[0].endswith(" · $0.90/h") and "/h" not in cost_forms[1] and cost_forms[-1] == "$0.1500"
    now[0] += 301  # the first call is now older than ten minutes
    assert status.spend_rate() == pytest.approx(0.05 * 6)
    now[0] += 600
    assert status.rate_text() == ""
