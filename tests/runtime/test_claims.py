"""The loop guard against false claims: the wording table, and decisions from what the
turn's calls did (refused or failed edits and commands)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.support import collect, make_runtime, make_tool, of_type
from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime.claims import admits_failure, claims_edit, claims_run
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

EDIT_CLAIMS = [
    "Fixed: add() now adds.",
    "Fixed! add() returns a + b now.",
    "**Fixed:** the sign in `add`.",
    "Done — updated calc.py so add() adds.",
    "Done: I changed the return statement.",
    "I've made the change.",
    "I have made the changes you asked for.",
    "I’ve updated `calc.py` to fix the bug.",
    "I fixed the bug in calc.py.",
    "I just rewrote the parser module.",
    "I have now also removed the unused import.",
    "Updated calc.py: add() now returns a + b.",
    "Changed add() to return a + b.",
    "calc.py has been updated.",
    "The bug has been fixed.",
    "The file has now been modified as requested.",
    "The bug is now fixed.",
    "The fix is in place.",
    "已修复：add() 现在是加法。",
    "我已经修改了 calc.py。",
    "修改完成。",
]
NOT_EDIT_CLAIMS = [
    "I could not edit calc.py: the edit was refused.",
    "Here is the change you can apply:\n\n    return a + b",
    "I wasn't able to modify the file.",
    "I have not changed any files.",
    "You could update app.py to fix this.",
    "To fix it, change `a - b` to `a + b` in calc.py.",
    "Should I update calc.py?",
    "I would change line 2 of calc.py.",
    "Here is the plan: update the parser.",
    "The bug is in add(): it subtracts.",
    "It will be fixed once you apply this patch.",
    "我无法修改 calc.py。",
    "需要把 a - b 改成 a + b。",
]
RUN_CLAIMS = [
    "The tests now pass.",
    "All tests pass.",
    "All 12 tests passed.",
    "Tests are passing now.",
    "pytest passes.",
    "I ran `pytest` and all tests pass.",
    "I've run the test suite.",
    "I executed the script.",
    "测试已通过。",
    "我运行了测试。",
]
NOT_RUN_CLAIMS = [
    "Run `pytest` to check.",
    "The tests should pass once you apply this.",
    "The tests will pass after the fix.",
    "I have run out of ideas.",
    "I could not run the tests: run_shell was refused.",
    "测试应该会通过。",
]
ADMISSIONS = [
    "I could not edit calc.py: the edit was refused.",
    "I couldn't apply the change because it needs approval.",
    "I was unable to run the tests.",
    "The edit was denied, so nothing was changed.",
    "I didn't change anything.",
    "Here is the change you can apply:\n\n    return a + b",
    "Please apply this yourself.",
    "我无法修改这个文件。",
    "修改被拒绝了。",
    "Understood, I won't change calc.py.",
    "OK, I'll leave calc.py as it is.",
    "calc.py is unchanged; the fix is to return a + b.",
    "In plan mode I only describe the change: return a + b.",
]
NOT_ADMISSIONS = [
    "Fixed: add() now adds.",
    "Done — updated calc.py.",
    "I've made the change.",
    "The tests now pass.",
    "已修复。",
]


@pytest.mark.parametrize("text", EDIT_CLAIMS)
def test_edit_claims_are_detected(text: str) -> None:
    assert claims_edit(text)


@pytest.mark.parametrize("text", NOT_EDIT_CLAIMS)
def test_not_edit_claims(text: str) -> None:
    assert not claims_edit(text)


@pytest.mark.parametrize("text", RUN_CLAIMS)
def test_run_claims_are_detected(text: str) -> None:
    assert claims_run(text)


@pytest.mark.parametrize("text", NOT_RUN_CLAIMS)
def test_not_run_claims(text: str) -> None:
    assert not claims_run(text)


@pytest.mark.parametrize("text", ADMISSIONS)
def test_admissions_are_detected(text: str) -> None:
    assert admits_failure(text)


@pytest.mark.parametrize("text", NOT_ADMISSIONS)
def test_claims_are_not_admissions(text: str) -> None:
    assert not admits_failure(text)


# ------------------------------------------------------------------ decided from what happened


def edit_tool() -> object:
    return make_tool("edit_file", kind="edit", requires_approval=True)


def shell_tool() -> object:
    return make_tool("run_shell", kind="execute", requires_approval=True)


REFUSED_EDIT = {"tool_calls": [{"name": "edit_file", "args": {"path": "calc.py", "old": "-", "new": "+"}}]}


async def test_a_refused_edit_then_a_claim_gets_one_truthful_retry(workspace: Path) -> None:
    rounds = [
        REFUSED_EDIT,
        {"text": "Fixed: add() now adds."},
        {"text": "I could not edit calc.py: refused."},
    ]
    runtime, provider = make_runtime(rounds, [edit_tool()], workspace)  # default mode, no approver
    events, history = await collect(runtime, "fix the bug")
    retries = of_type(events, ev.RetryInjected)
    assert len(retries) == 1 and retries[0].missing_tools == ["edit"]
    assert "edit_file(path=calc.py" in retries[0].message and "truthfully" in retries[0].message
    assert "denied" in retries[0].message  # the reason each call failed is named
    assert history[-2].meta == {"synthetic": "loop_guard", "notice": retries[0].notice}
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "completed"
    assert done.text == "I could not edit calc.py: refused."
    assert len(provider.requests) == 3


async def test_a_claim_that_survives_the_retry_ends_unreliable(workspace: Path) -> None:
    rounds = [REFUSED_EDIT, {"text": "Fixed: add() now adds."}, {"text": "Done — updated calc.py."}]
    runtime, _ = make_runtime(rounds, [edit_tool()], workspace)
    events, _ = await collect(runtime, "fix the bug")
    assert len(of_type(events, ev.RetryInjected)) == 1  # asked once, not twice
    warning = of_type(events, ev.Notice)[-1]
    assert warning.level == "warning" and "unreliable" in warning.message and "edit_file" in warning.message
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "unreliable"


async def test_a_refused_command_counts_too(workspace: Path) -> None:
    rounds = [
        {"tool_calls": [{"name": "run_shell", "args": {"command": "pytest"}}]},
        {"text": "The tests now pass."},
        {"text": "The tests now pass."},
    ]
    runtime, _ = make_runtime(rounds, [shell_tool()], workspace)
    events, _ = await collect(runtime, "run the tests")
    assert of_type(events, ev.RetryInjected)[0].missing_tools == ["execute"]
    assert events[-1].reason == "unreliable"  # type: ignore[union-attr]


async def test_an_answer_that_admits_the_refusal_is_accepted_at_once(workspace: Path) -> None:
    rounds = [REFUSED_EDIT, {"text": "I couldn't edit calc.py (the edit needs approval). Change - to +."}]
    runtime, _ = make_runtime(rounds, [edit_tool()], workspace)
    events, _ = await collect(runtime, "fix the bug")
    assert of_type(events, ev.RetryInjected) == []
    assert events[-1].reason == "completed"  # type: ignore[union-attr]


async def test_a_failed_edit_followed_by_a_successful_one_needs_no_retry(workspace: Path) -> None:
    calls = {"n": 0}

    async def flaky(args: dict[str, object], ctx: object) -> str:
        from wyckoff_cli.core.errors import ToolError

        calls["n"] += 1
        if calls["n"] == 1:
            raise ToolError("old text not found")
        return "edited"

    rounds = [REFUSED_EDIT, REFUSED_EDIT, {"text": "Fixed: add() now adds."}]
    tool = make_tool("edit_file", flaky, kind="edit")
    runtime, _ = make_runtime(rounds, [tool], workspace, policy=ApprovalPolicy(mode="yolo"))
    events, _ = await collect(runtime, "fix the bug")
    assert of_type(events, ev.RetryInjected) == []
    assert events[-1].reason == "completed"  # type: ignore[union-attr]


async def test_a_failed_edit_is_named_as_failed(workspace: Path) -> None:
    async def broken(args: dict[str, object], ctx: object) -> str:
        from wyckoff_cli.core.errors import ToolError

        raise ToolError("old text not found in calc.py")

    rounds = [REFUSED_EDIT, {"text": "I've updated calc.py."}, {"text": "I've updated calc.py."}]
    tool = make_tool("edit_file", broken, kind="edit")
    runtime, _ = make_runtime(rounds, [tool], workspace, policy=ApprovalPolicy(mode="yolo"))
    events, _ = await collect(runtime, "fix the bug")
    retry = of_type(events, ev.RetryInjected)
    assert len(retry) == 1 and "old text not found in calc.py" in retry[0].message
    assert events[-1].reason == "unreliable"  # type: ignore[union-attr]


async def test_with_no_retries_allowed_the_turn_is_unreliable_at_once(workspace: Path) -> None:
    from wyckoff_cli.runtime.loop import RuntimeSettings

    rounds = [REFUSED_EDIT, {"text": "Fixed: add() now adds."}]
    runtime, _ = make_runtime(
        rounds, [edit_tool()], workspace, settings=RuntimeSettings(loop_guard_retries=0)
    )
    events, _ = await collect(runtime, "fix the bug")
    assert of_type(events, ev.RetryInjected) == []
    assert events[-1].reason == "unreliable"  # type: ignore[union-attr]
