"""Time limits for sub-agents (issue 33): `[agents] max_seconds` and the no-progress
watchdog `[agents] idle_seconds` end a child with a clear reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.session.subagent_support import build, child_events, make_builder, run, task_call
from wyckoff_cli.core import events as ev
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.child_watch import ChildWatch

PARENT, CHILD = "scripted:parent", "scripted:child"


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_nearer_limit_sets_the_wait_and_progress_resets_the_watchdog() -> None:
    clock = FakeClock()
    watch = ChildWatch(60, 10, clock)
    assert watch.next_timeout() == 10
    clock.now += 8
    watch.saw(ev.ToolStarted("c1", "grep", {}))  # progress
    assert watch.next_timeout() == 10
    clock.now += 5
    watch.saw(ev.ModelStart(2))  # not progress
    assert watch.next_timeout() == 5
    clock.now += 5
    assert watch.reached() == "idle_seconds" and "idle_seconds (10 s)" in watch.message("idle_seconds")
    clock.now = 160.0
    assert watch.next_timeout() == 0 and watch.reached() == "max_seconds"
    assert "max_seconds (60 s)" in watch.message("max_seconds")


def test_no_limits_wait_forever() -> None:
    assert ChildWatch(None, None).next_timeout() is None


@pytest.mark.parametrize(
    ("limits", "said"),
    [
        ({"max_seconds": 0.3, "idle_seconds": None}, "it ran longer than [agents] max_seconds (0.3 s)"),
        ({"max_seconds": None, "idle_seconds": 0.3}, "no new tool call or text for [agents] idle_seconds"),
    ],
)
async def test_a_stalled_child_is_stopped_and_its_parent_told(
    workspace: Path, limits: dict[str, Any], said: str
) -> None:
    (workspace / ".wyckoff" / "agents").mkdir(parents=True)
    (workspace / ".wyckoff" / "agents" / "slow.md").write_text(
        f"---\nname: slow\ndescription: Slow.\nmodel: {CHILD}\n---\nYou are slow.\n", encoding="utf-8"
    )
    made = {
        PARENT: ScriptedProvider(
            [{"tool_calls": [task_call("slow", "Think hard", call_id="t1")]}, {"text": "It was stopped."}],
            model=PARENT,
        ),
        CHILD: ScriptedProvider([{"stall": 120}], model=CHILD),
    }
    builder = make_builder(workspace, lambda model: made[model])
    builder.config.agents.max_seconds = limits["max_seconds"]
    builder.config.agents.idle_seconds = limits["idle_seconds"]
    session = build(builder, PARENT)
    events = await run(session, "go")
    await session.aclose()
    task = next(e for e in events if isinstance(e, ev.ToolSucceeded) and e.name == "task")
    assert said in task.result
    ends = child_events(events, ev.TurnDone)
    assert ends and ends[-1].reason == "stopped"
    assert any(said in n.message for n in child_events(events, ev.Notice))
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "completed"
