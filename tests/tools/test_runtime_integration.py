"""The real tools and policy driven through AgentRuntime with the scripted provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tools.conftest import write
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.events import ApprovalRequested
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.approval import answer_approvals, deny_without_approver
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, PermissionMode


class Approver:
    def __init__(self, *decisions: ApprovalDecision) -> None:
        self.decisions = list(decisions)
        self.requests: list[ApprovalRequested] = []

    async def __call__(self, request: ApprovalRequested) -> ApprovalDecision:
        self.requests.append(request)
        return self.decisions.pop(0)


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "args": args}]}


async def run(
    root: Path,
    rounds: list[Any],
    *,
    approver: Approver | None = None,
    mode: PermissionMode = "default",
    extra: list[Tool] | None = None,
) -> tuple[list[ev.RuntimeEvent], AgentRuntime]:
    runtime = AgentRuntime(
        ScriptedProvider(rounds),
        default_registry(extra=extra or []),
        workspace=root,
        policy=ApprovalPolicy(mode=mode),
        results_dir=root.parent / "results",
    )
    turn = runtime.run_stream(Conversation(), "go")
    events = [e async for e in answer_approvals(turn, approver or deny_without_approver)]
    await runtime.close()
    return events, runtime


def of(events: list[ev.RuntimeEvent], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


async def test_edit_asks_with_a_diff_and_always_covers_the_next_edit(root: Path) -> None:
    write(root, "src/app.py", "a = 1\nb = 2\n")
    approver = Approver(ApprovalDecision.always())
    rounds = [
        call("edit_file", path="src/app.py", old="a = 1", new="a = 10"),
        call("edit_file", path="src/app.py", old="b = 2", new="b = 20"),
        {"text": "done"},
    ]
    events, runtime = await run(root, rounds, approver=approver)
    assert (root / "src/app.py").read_text() == "a = 10\nb = 20\n"
    (request,) = of(events, ev.ApprovalRequested)
    assert request.rule == "edit_file(src/app.py)"
    assert request.preview["rule"] == "edit_file(src/app.py)"
    assert "-a = 1\n+a = 10" in request.preview["diff"]
    assert request.preview["reason"] == "default mode asks before changing files"
    decisions = [(d.decision, d.rule) for d in of(events, ev.ApprovalDecided)]
    assert decisions == [("always", "edit_file(src/app.py)"), ("auto_allow", None)]
    assert runtime.policy.session_allow == ["edit_file(src/app.py)"]
    results = of(events, ev.ToolSucceeded)
    assert "diff" in results[0].display


async def test_outside_path_is_asked_about_by_name_then_usable(root: Path, outside: Path) -> None:
    approver = Approver(ApprovalDecision.allow())
    rounds = [call("read_file", path=str(outside / "secret.txt")), {"text": "done"}]
    events, _ = await run(root, rounds, approver=approver, mode="yolo")
    (request,) = of(events, ev.ApprovalRequested)
    assert request.preview["outside_paths"] == [str(outside / "secret.txt")]
    assert request.rule is None
    (result,) = of(events, ev.ToolSucceeded)
    assert "top secret" in result.result


async def test_denied_outside_path_is_not_read(root: Path, outside: Path) -> None:
    approver = Approver(ApprovalDecision.deny("no"))
    events, _ = await run(
        root, [call("read_file", path="../elsewhere/secret.txt"), {"text": "ok"}], approver=approver
    )
    (failure,) = of(events, ev.ToolFailed)
    assert "denied" in failure.error and "top secret" not in failure.error


async def test_edited_arguments_are_validated_and_evaluated_again(root: Path) -> None:
    approver = Approver(
        ApprovalDecision.edit({"command": "echo edited"}), ApprovalDecision.edit({"command": 3})
    )
    rounds = [call("run_shell", command="echo original"), call("run_shell", command="echo x"), {"text": "ok"}]
    events, _ = await run(root, rounds, approver=approver)
    (result,) = of(events, ev.ToolSucceeded)
    # the edited command ran, and the model is told so, with what really ran
    note = '[The user edited this call before it ran. It ran with these arguments: {"command":"echo edited"}]'
    assert result.result == note + "\nedited\n[exit code 0]"
    (failure,) = of(events, ev.ToolFailed)
    assert "invalid" in failure.error


async def test_plan_mode_refuses_with_a_message_for_the_model(root: Path) -> None:
    events, _ = await run(root, [call("write_file", path="a.txt", content="x"), {"text": "ok"}], mode="plan")
    (failure,) = of(events, ev.ToolFailed)
    assert "plan mode" in failure.error
    assert not (root / "a.txt").exists()
    assert of(events, ev.ApprovalRequested) == []


async def test_offloaded_result_is_read_back_in_pages_without_approval(root: Path) -> None:
    async def big(args: dict[str, Any], ctx: ToolContext) -> str:
        return "".join(f"line {i}\n" for i in range(5_000))

    tool = Tool(
        "big", "A tool with a big result, for the offload test.", {"type": "object"}, big, kind="read"
    )
    rounds: list[Any] = [call("big"), {"text": "placeholder"}]
    events, runtime = await run(root, rounds, extra=[tool])
    offloaded = of(events, ev.ToolSucceeded)[0].offloaded_path
    assert offloaded is not None
    events, _ = await run(root, [call("read_file", path=offloaded, offset=2_000), {"text": "ok"}])
    assert of(events, ev.ApprovalRequested) == []
    (result,) = of(events, ev.ToolSucceeded)
    assert result.offloaded_path is None
    assert "  2000\tline 1999" in result.result and "of 5,000" in result.result


async def test_background_shell_through_the_runtime(root: Path) -> None:
    rounds = [
        call("run_shell", command="echo from-bg", background=True),
        {"tool_calls": [{"name": "run_shell", "args": {"command": "sleep 0.3"}}]},
        {"text": "done"},
    ]
    events, runtime = await run(root, rounds, mode="yolo")
    started = of(events, ev.ToolSucceeded)[0]
    assert "task bg-1" in started.result and started.display["task_id"] == "bg-1"
    updates = of(events, ev.BackgroundTaskUpdate)
    assert [(u.task_id, u.status, u.exit_code) for u in updates if u.status != "running"] == [
        ("bg-1", "completed", 0)
    ]
    task = runtime.background.get("bg-1")
    assert task is not None and task.text_since(0)[0] == "from-bg\n"


async def test_a_read_deny_hides_the_file_from_grep_glob_and_list_dir(tmp_path: Path) -> None:
    """After `read_file(.env)` is denied, `grep(pattern=".")` must not show its lines,
    and the walking tools leave it out (issue 22: path denies covered only read_file)."""
    from tests.runtime.support import collect, make_runtime, of_type
    from wyckoff_cli.tools.builtin import default_registry

    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text("SECRET_VALUE=hunter2-in-dotenv\n")
    (root / "src" / "a.py").write_text("visible = 1\n")
    calls = [
        {"name": "grep", "args": {"pattern": "."}},
        {"name": "grep", "args": {"pattern": "hunter2", "output": "files"}},
        {"name": "glob", "args": {"pattern": "**/*"}},
        {"name": "list_dir", "args": {"path": "."}},
        {"name": "read_file", "args": {"path": ".env"}},
    ]
    tools = list(default_registry())
    runtime, _ = make_runtime(
        [{"tool_calls": calls}, {"text": "done"}],
        tools,
        root,
        policy=ApprovalPolicy(mode="yolo", deny=["read_file(.env)"]),
    )
    events, _ = await collect(runtime)
    results = [e.result for e in of_type(events, ev.ToolSucceeded)]
    errors = [e.error for e in of_type(events, ev.ToolFailed)]
    assert len(results) == 4 and len(errors) == 1
    assert "visible = 1" in results[0]
    assert all("SECRET_VALUE" not in r and ".env" not in r for r in results), results
    assert "No matches" in results[1]
    assert "deny rule read_file(.env)" in errors[0]
