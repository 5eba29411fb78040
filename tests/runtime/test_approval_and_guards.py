"""Approval flow, loop guard and hooks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.runtime.support import assert_history_valid, collect, make_runtime, make_tool, of_type
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.errors import StopRun
from wyckoff_cli.core.events import ApprovalRequested
from wyckoff_cli.core.messages import ToolCallPart
from wyckoff_cli.runtime.expectation import resolve_turn_expectation
from wyckoff_cli.runtime.hooks import ModelRequest, RuntimeHooks
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy
from wyckoff_cli.tools.permissions.subject import command_subject

SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


class ScriptedApprover:
    def __init__(self, *decisions: ApprovalDecision) -> None:
        self.decisions = list(decisions)
        self.requests: list[ApprovalRequested] = []

    async def __call__(self, request: ApprovalRequested) -> ApprovalDecision:
        self.requests.append(request)
        return self.decisions.pop(0)


def shell_tool(ran: list[str]) -> Any:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(args["command"])
        return f"ran {args['command']}"

    def preview(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return {"kind": "command", "command": args["command"], "cwd": str(ctx.workspace)}

    return make_tool(
        "shell",
        run,
        schema=SCHEMA,
        requires_approval=True,
        kind="execute",
        preview=preview,
        subject_of=command_subject(),
    )


def calls(*commands: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "shell", "args": {"command": c}} for c in commands]}


async def test_allow_runs_the_call_and_the_request_carries_a_preview(workspace: Path) -> None:
    ran: list[str] = []
    approver = ScriptedApprover(ApprovalDecision.allow())
    runtime, _ = make_runtime([calls("ls"), {"text": "ok"}], [shell_tool(ran)], workspace, approver=approver)
    events, _ = await collect(runtime)
    assert ran == ["ls"]
    request = of_type(events, ev.ApprovalRequested)[0]
    assert request.preview == {
        "kind": "command",
        "command": "ls",
        "cwd": str(workspace.resolve()),
        "reason": "default mode asks before running commands",
    }
    assert request.rule == "shell(ls)"  # the narrowest rule: this command
    assert approver.requests[0].args == {"command": "ls"}
    assert of_type(events, ev.ApprovalDecided)[0].decision == "allow"


async def test_parallel_approvals_are_asked_one_after_another_and_always_is_remembered(
    workspace: Path,
) -> None:
    ran: list[str] = []
    approver = ScriptedApprover(ApprovalDecision.always(), ApprovalDecision.always())
    policy = ApprovalPolicy()
    runtime, _ = make_runtime(
        [calls("ls", "ls -la", "pwd"), {"text": "ok"}],
        [shell_tool(ran)],
        workspace,
        approver=approver,
        policy=policy,
    )
    events, _ = await collect(runtime)
    assert ran == ["ls", "ls -la", "pwd"]
    assert len(approver.requests) == 2  # `ls -la` was allowed by the remembered rule; `pwd` was asked
    decided = of_type(events, ev.ApprovalDecided)
    assert [(d.decision, d.rule) for d in decided] == [
        ("always", "shell(ls)"),
        ("auto_allow", None),
        ("always", "shell(pwd)"),
    ]
    assert policy.session_allow == ["shell(ls)", "shell(pwd)"]


async def test_edit_runs_the_edited_call_after_revalidation(workspace: Path) -> None:
    ran: list[str] = []
    approver = ScriptedApprover(
        ApprovalDecision.edit({"command": "ls -la"}), ApprovalDecision.edit({"cmd": 1})
    )
    runtime, provider = make_runtime(
        [calls("ls"), calls("rm x"), {"text": "ok"}], [shell_tool(ran)], workspace, approver=approver
    )
    events, history = await collect(runtime)
    assert ran == ["ls -la"]
    assert history[1].tool_calls[0].arguments == {"command": "ls"}  # what the model asked stays recorded
    failure = of_type(events, ev.ToolFailed)[0]
    assert "edited the arguments, but they are invalid" in failure.error
    assert "arguments.command is required" in failure.error
    assert_history_valid(history)


async def test_deny_feedback_reaches_the_model(workspace: Path) -> None:
    ran: list[str] = []
    approver = ScriptedApprover(ApprovalDecision.deny("use git status instead"))
    runtime, provider = make_runtime(
        [calls("git log"), {"text": "ok"}], [shell_tool(ran)], workspace, approver=approver
    )
    await collect(runtime)
    assert ran == []
    answer = provider.requests[1].messages[-1]
    assert answer.is_error and "denied" in answer.text and "use git status instead" in answer.text


async def test_without_an_approver_calls_needing_approval_are_denied(workspace: Path) -> None:
    ran: list[str] = []
    runtime, provider = make_runtime([calls("make"), {"text": "ok"}], [shell_tool(ran)], workspace)
    await collect(runtime)
    assert ran == []
    assert "no one to ask" in provider.requests[1].messages[-1].text


async def test_plan_mode_refuses_without_asking(workspace: Path) -> None:
    ran: list[str] = []
    approver = ScriptedApprover()
    runtime, provider = make_runtime(
        [calls("make"), {"text": "ok"}],
        [shell_tool(ran)],
        workspace,
        approver=approver,
        policy=ApprovalPolicy(mode="plan"),
    )
    events, _ = await collect(runtime)
    assert ran == [] and approver.requests == []
    assert "plan mode" in provider.requests[1].messages[-1].text
    assert of_type(events, ev.ApprovalDecided)[0].decision == "auto_deny"


# ------------------------------------------------------------------ loop guard


def read_tool() -> Any:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    return make_tool("read_file", schema=schema, kind="read", concurrency_safe=True)


async def test_mentioned_file_must_be_read_retry_then_success(workspace: Path) -> None:
    (workspace / "app.py").write_text("print(1)\n")
    rounds = [
        {"text": "It prints 1."},
        {"tool_calls": [{"name": "read_file", "args": {"path": "app.py"}}]},
        {"text": "It prints 1 (checked)."},
    ]
    runtime, provider = make_runtime(rounds, [read_tool()], workspace)
    events, history = await collect(runtime, "What does @app.py print?")
    retry = of_type(events, ev.RetryInjected)
    assert len(retry) == 1 and retry[0].missing_tools == ["read_file"]
    assert "app.py" in retry[0].message
    assert history[2].role == "user" and history[2].meta == {
        "synthetic": "loop_guard",
        "notice": retry[0].notice,
    }
    assert events[-1].reason == "completed"  # type: ignore[union-attr]


async def test_loop_guard_gives_up_after_two_retries_as_unreliable(workspace: Path) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    rounds = [{"text": "guess"}, {"text": "guess again"}, {"text": "still guessing"}]
    runtime, _ = make_runtime(rounds, [read_tool()], workspace)
    events, _ = await collect(runtime, "explain @app.py")
    assert len(of_type(events, ev.RetryInjected)) == 2
    notice = of_type(events, ev.Notice)[0]
    assert notice.level == "warning" and "unreliable" in notice.message
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "unreliable" and done.text == "still guessing"


async def test_claimed_edit_without_an_edit_call_is_challenged(workspace: Path) -> None:
    edit = make_tool("edit_file", kind="edit")
    rounds = [
        {"text": "I've updated `src/app.py` to fix the bug."},
        {"tool_calls": [{"name": "edit_file", "args": {"path": "src/app.py"}}]},
        {"text": "I've updated `src/app.py` to fix the bug."},
    ]
    runtime, _ = make_runtime(rounds, [edit], workspace, policy=ApprovalPolicy(mode="yolo"))
    events, _ = await collect(runtime, "fix it")
    assert of_type(events, ev.RetryInjected)[0].missing_tools == ["edit"]
    assert events[-1].reason == "completed"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("I've updated `app.py` with the fix.", ["edit"]),
        ("I have created the file config.toml.", ["edit"]),
        ("I ran `pytest` and all tests pass.", ["execute"]),
        ("You could update app.py to fix this.", []),
        ("Here is the plan: update the parser.", []),
        ("I have run out of ideas.", []),
    ],
)
def test_claim_detection(tmp_path: Path, text: str, kinds: list[str]) -> None:
    expectation = resolve_turn_expectation(
        "do it", tmp_path, tool_kinds={"edit_file": "edit", "run_shell": "execute"}
    )
    assert [r.kind for r in expectation.missing([], text)] == kinds


def test_required_tools_from_a_slash_command_and_unknown_mentions(tmp_path: Path) -> None:
    (tmp_path / "real.py").write_text("")
    expectation = resolve_turn_expectation(
        "look at @real.py and @missing.py, mail me@example.com",
        tmp_path,
        required_tools=["grep", "not_a_tool"],
        tool_kinds={"grep": "read", "read_file": "read"},
    )
    assert [(r.tool, r.path.name if r.path else None) for r in expectation.required] == [
        ("grep", None),
        ("read_file", "real.py"),
    ]
    done = [
        ToolCallPart("1", "grep", {}),
        ToolCallPart("2", "read_file", {"path": str(tmp_path / "real.py")}),
    ]
    assert expectation.missing(done, "") == []


# ------------------------------------------------------------------ hooks


async def test_hooks_can_rewrite_tool_arguments_and_results_and_see_every_event(workspace: Path) -> None:
    seen: list[str] = []

    class Hooks(RuntimeHooks):
        async def before_tool(self, call: ToolCallPart) -> ToolCallPart | None:
            return ToolCallPart(call.id, call.name, {**call.arguments, "safe": True})

        async def after_tool(self, call: ToolCallPart, result: str, is_error: bool) -> str | None:
            return result.upper()

        async def on_event(self, event: ev.RuntimeEvent) -> None:
            seen.append(event.type)

    runtime, provider = make_runtime(
        [{"tool_calls": [{"name": "t", "args": {"a": 1}}]}, {"text": "ok"}],
        [make_tool("t")],
        workspace,
        hooks=[Hooks()],
    )
    events, _ = await collect(runtime)
    assert provider.requests[1].messages[-1].text == "T OK [('A', 1), ('SAFE', TRUE)]"
    assert seen == [e.type for e in events]


async def test_a_hook_can_stop_the_run(workspace: Path) -> None:
    class Budget(RuntimeHooks):
        async def before_model_call(self, request: ModelRequest) -> ModelRequest | None:
            if request.round > 1:
                raise StopRun("budget exceeded")
            return None

    runtime, provider = make_runtime(
        [{"tool_calls": [{"name": "t", "args": {}}]}, {"text": "never"}],
        [make_tool("t")],
        workspace,
        hooks=[Budget()],
    )
    events, history = await collect(runtime)
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "stopped"
    assert "budget exceeded" in of_type(events, ev.Notice)[0].message
    assert len(provider.requests) == 1
    assert_history_valid(history)
