"""The runaway guard (issue 33): the same call with the same result, over and over,
is pointed out at the third repeat and ends the turn at the fifth, successes included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runtime.support import collect, make_runtime, make_tool, of_type
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import ToolCallPart
from wyckoff_cli.runtime.guards import TurnState
from wyckoff_cli.runtime.loop import RuntimeSettings
from wyckoff_cli.runtime.repeats import RepeatGuard

NEVER = {"text": "never sent"}


def _call(name: str = "probe", **args: Any) -> ToolCallPart:
    return ToolCallPart(id=f"c{len(args)}", name=name, arguments=args or {"path": "a.txt"})


def _check(guard: RepeatGuard, call: ToolCallPart, text: str, refused_by: Any = None) -> Any:
    return guard.check_result(TurnState(), call, text, refused_by)


def test_the_third_repeat_is_pointed_out_once_and_the_fifth_ends_it() -> None:
    guard = RepeatGuard()
    verdicts = [_check(guard, _call(), "same") for _ in range(5)]
    assert verdicts[:2] == [None, None]
    assert verdicts[2] is not None and verdicts[2].note and "3 times in a row" in verdicts[2].note
    assert verdicts[3] is None  # told once
    assert verdicts[4] is not None and verdicts[4].stop and "probe was called 5 times" in verdicts[4].stop


@pytest.mark.parametrize(
    ("label", "second"),
    [
        ("other arguments", lambda: (_call(path="b.txt"), "same")),
        ("other tool", lambda: (_call("other"), "same")),
        ("other result", lambda: (_call(), "changed")),
        ("same arguments in another order", None),
    ],
)
def test_a_change_breaks_the_streak(label: str, second: Any) -> None:
    guard = RepeatGuard()
    if second is None:  # the canonical arguments: key order does not matter
        first = ToolCallPart(id="x", name="probe", arguments={"a": 1, "b": 2})
        again = ToolCallPart(id="y", name="probe", arguments={"b": 2, "a": 1})
        verdicts = [_check(guard, first if i % 2 else again, "r") for i in range(5)]
        assert verdicts[4] is not None and verdicts[4].stop
        return
    for _ in range(4):
        _check(guard, _call(), "same")
    call, text = second()
    assert _check(guard, call, text) is None, label
    assert _check(guard, _call(), "same") is None  # the streak starts again


def test_a_refusal_for_repeating_is_the_same_outcome_again() -> None:
    guard = RepeatGuard()
    _check(guard, _call(), "ok")
    _check(guard, _call(), "ok")
    verdicts = [_check(guard, _call(), "Refused: you called probe ...", "guard") for _ in range(3)]
    assert verdicts[0] is not None and verdicts[0].note
    assert verdicts[2] is not None and verdicts[2].stop


async def test_a_success_loop_ends_the_turn_at_the_fifth_repeat(workspace: Path) -> None:
    calls = [{"tool_calls": [{"name": "probe", "args": {"path": "a.txt"}}]} for _ in range(6)]
    runtime, provider = make_runtime(
        [*calls, NEVER],
        [make_tool("probe", lambda args, ctx: _ok())],
        workspace,
        # the doom-loop guard out of the way: every call runs and succeeds
        settings=RuntimeSettings(doom_loop_repeats=99),
    )
    events, history = await collect(runtime)
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "loop"
    assert len(of_type(events, ev.ToolSucceeded)) == 5
    assert len(provider.requests) == 5  # no model call after the fifth repeat
    notices = [n.message for n in of_type(events, ev.Notice)]
    assert any("probe was called 5 times in a row" in n for n in notices)
    results = [m for m in history if m.role == "tool"]
    assert "3 times in a row" in results[2].text and "3 times in a row" not in results[3].text


async def test_with_the_doom_loop_guard_the_fifth_identical_call_ends_it(workspace: Path) -> None:
    calls = [{"tool_calls": [{"name": "probe", "args": {"path": "a.txt"}}]} for _ in range(6)]
    runtime, provider = make_runtime(
        [*calls, NEVER], [make_tool("probe", lambda args, ctx: _ok())], workspace
    )
    events, _ = await collect(runtime)
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "loop"
    assert len(of_type(events, ev.ToolSucceeded)) == 2  # the third on were refused as a loop
    assert len(provider.requests) == 5


async def _ok() -> str:
    return "the same text"
