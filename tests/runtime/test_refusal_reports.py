"""A refusal the answer reports is the truth (issue 28): a call blocked by a hook, the
policy, a person or a run with no one to ask is not run, and an answer that says so is
accepted without asking the model again. The retry notice says what was sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runtime.hook_support import group, hook_command, user_hooks
from tests.runtime.support import collect, make_runtime, make_tool, of_type
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.runtime.approval import deny_without_approver
from wyckoff_cli.runtime.claims import admits_failure, reports_refusal
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
SHELL_CALL = {"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "rm -rf build"}}]}
EDIT_CALL = {
    "tool_calls": [{"id": "c1", "name": "edit_file", "args": {"path": "calc.py", "old": "-", "new": "+"}}]
}


def shell_tool(ran: list[str]) -> Any:
    async def run(args: dict[str, Any], ctx: object) -> str:
        ran.append(args["command"])
        return "ran"

    return make_tool("run_shell", run, schema=SCHEMA, requires_approval=True, kind="execute")


def edit_tool() -> Any:
    return make_tool("edit_file", kind="edit", requires_approval=True)


def blocking_hooks(workspace: Path, tmp_path: Path) -> Any:
    command, _ = hook_command(tmp_path / "h", "pre", code=2, stderr="rm is not allowed here")
    return user_hooks(workspace, {"PreToolUse": [group(command, "run_shell")]})


# The answers people and models give after a refusal, and who refused.
REPORTS = [
    ("The hook blocked my command.", {"hook"}),
    ("A PreToolUse hook stops rm here, so build/ is still there.", {"hook"}),
    ("The policy rejected the edit; calc.py is unchanged.", {"policy"}),
    ("Plan mode keeps files read-only, so here is the plan instead.", {"policy"}),
    ("You declined the edit, so I left calc.py alone.", {"user"}),
    ("The edit needs approval, which this run cannot give.", {"no_approver"}),
    ("I was repeating the same call, so I stopped.", {"guard"}),
    ("钩子阻止了这个命令。", {"hook"}),
]


@pytest.mark.parametrize(("text", "refusers"), REPORTS)
def test_the_refusal_wording_table(text: str, refusers: set[str]) -> None:
    assert admits_failure(text) or reports_refusal(text, refusers)


@pytest.mark.parametrize(
    ("text", "refusers"),
    [
        ("All done, build/ is gone.", {"hook"}),
        ("The tests now pass.", {"policy"}),
        ("Here you go.", {"user"}),
        ("Fixed: add() now adds.", {"no_approver"}),
    ],
)
def test_answers_that_do_not_report_it(text: str, refusers: set[str]) -> None:
    assert not admits_failure(text) and not reports_refusal(text, refusers)


async def test_a_hook_block_that_the_answer_reports_is_not_asked_again(
    workspace: Path, tmp_path: Path
) -> None:
    ran: list[str] = []
    rounds = [SHELL_CALL, {"text": "The hook blocked my command."}, {"text": "never asked"}]
    runtime, provider = make_runtime(
        rounds, [shell_tool(ran)], workspace, hooks=[blocking_hooks(workspace, tmp_path)]
    )
    events, _ = await collect(runtime, "clean the build folder")
    assert ran == []
    assert of_type(events, ev.RetryInjected) == []
    assert not [n for n in of_type(events, ev.Notice) if "unreliable" in n.message]
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "completed"
    assert done.text == "The hook blocked my command."
    assert len(provider.requests) == 2  # no second answer was paid for


async def test_an_answer_naming_the_hook_without_a_failure_word_is_accepted(
    workspace: Path, tmp_path: Path
) -> None:
    rounds = [SHELL_CALL, {"text": "A PreToolUse hook stops rm here, so build/ is still there."}]
    runtime, _ = make_runtime(
        rounds, [shell_tool([])], workspace, hooks=[blocking_hooks(workspace, tmp_path)]
    )
    events, _ = await collect(runtime, "clean the build folder")
    assert of_type(events, ev.RetryInjected) == []
    assert events[-1].reason == "completed"  # type: ignore[union-attr]


async def test_naming_the_hook_while_claiming_the_command_ran_is_still_challenged(
    workspace: Path, tmp_path: Path
) -> None:
    rounds = [
        SHELL_CALL,
        {"text": "The hook ran and I ran the command, the tests now pass."},
        {"text": "The hook ran and I ran the command, the tests now pass."},
    ]
    runtime, _ = make_runtime(
        rounds, [shell_tool([])], workspace, hooks=[blocking_hooks(workspace, tmp_path)]
    )
    events, _ = await collect(runtime, "run it")
    (retry,) = of_type(events, ev.RetryInjected)
    assert retry.reason == "untruthful"
    assert retry.notice == (
        "Asked the model to answer again, truthfully: run_shell(command=rm -rf build) did not succeed "
        "and its answer did not say so (retry 1 of 2)"
    )
    assert "Reminded the model to call" not in retry.notice
    assert "truthfully" in retry.message  # the notice names what the message asks
    assert events[-1].reason == "unreliable"  # type: ignore[union-attr]


async def test_a_plan_mode_refusal_is_reported_and_the_notice_does_not_say_call_edit(workspace: Path) -> None:
    rounds = [EDIT_CALL, {"text": "Sure."}, {"text": "Plan mode keeps files read-only, so here is the plan."}]
    runtime, _ = make_runtime(rounds, [edit_tool()], workspace, policy=ApprovalPolicy(mode="plan"))
    events, _ = await collect(runtime, "fix calc.py")
    (retry,) = of_type(events, ev.RetryInjected)
    assert retry.notice.startswith("Asked the model to answer again, truthfully: edit_file(path=calc.py")
    assert "call edit" not in retry.notice
    assert events[-1].reason == "completed"  # type: ignore[union-attr]


async def test_a_person_who_declined_is_reported(workspace: Path) -> None:
    async def decline(request: ev.ApprovalRequested) -> ApprovalDecision:
        return ApprovalDecision.deny()

    rounds = [EDIT_CALL, {"text": "You declined the edit, so calc.py stays as it was."}]
    runtime, _ = make_runtime(rounds, [edit_tool()], workspace, approver=decline)
    events, _ = await collect(runtime, "fix calc.py")
    assert of_type(events, ev.RetryInjected) == []


async def test_a_run_with_no_one_to_ask_is_reported(workspace: Path) -> None:
    rounds = [EDIT_CALL, {"text": "The edit needs approval, which this run cannot give."}]
    runtime, _ = make_runtime(rounds, [edit_tool()], workspace, approver=deny_without_approver)
    events, messages = await collect(runtime, "fix calc.py")
    assert of_type(events, ev.RetryInjected) == []
    result = next(m for m in messages if m.role == "tool")
    assert "The user denied" not in result.text and "no one to ask" in result.text


async def test_a_failure_is_not_a_refusal_naming_the_hook_does_not_excuse_it(workspace: Path) -> None:
    async def broken(args: dict[str, Any], ctx: object) -> str:
        from wyckoff_cli.core.errors import ToolError

        raise ToolError("exit status 1")

    tool = make_tool("run_shell", broken, schema=SCHEMA, kind="execute")
    rounds = [SHELL_CALL, {"text": "The hook is happy."}, {"text": "It failed with exit status 1."}]
    runtime, _ = make_runtime(rounds, [tool], workspace, policy=ApprovalPolicy(mode="yolo"))
    events, _ = await collect(runtime, "run it")
    assert len(of_type(events, ev.RetryInjected)) == 1
    assert events[-1].reason == "completed"  # type: ignore[union-attr]


async def test_the_missing_tools_notice_names_tools_in_words(workspace: Path) -> None:
    edit = make_tool("edit_file", kind="edit")
    rounds = [
        {"text": "I've updated `app.py` to fix the bug."},
        {"tool_calls": [{"name": "edit_file", "args": {"path": "app.py"}}]},
        {"text": "I've updated `app.py` to fix the bug."},
    ]
    runtime, _ = make_runtime(rounds, [edit], workspace, policy=ApprovalPolicy(mode="yolo"))
    events, _ = await collect(runtime, "fix it")
    (retry,) = of_type(events, ev.RetryInjected)
    assert retry.reason == "missing_tools"
    assert retry.notice == "Reminded the model to call a tool that changes files (retry 1 of 2)"


@pytest.mark.parametrize(
    ("rule", "preview", "says", "never"),
    [
        ("edit_file(calc.py)", {"kind": "diff"}, "--allow 'edit_file(calc.py)'", "The user"),
        ("run_shell(pytest*)", {"kind": "command"}, "--permission-mode yolo", "The user"),
        (None, {"kind": "command"}, "only a person can approve it", "--allow"),
    ],
)
def test_the_unattended_denial_says_how_to_allow_the_call(
    rule: str | None, preview: dict[str, Any], says: str, never: str
) -> None:
    from wyckoff_cli.runtime.approval import unattended_denial

    request = ev.ApprovalRequested("c1", "run_shell", {}, preview, rule, "a destructive command")
    text = unattended_denial(request)
    assert text.startswith("Not run: denied without asking:") and "no one to ask" in text
    assert says in text and never not in text and len(text) <= 300
