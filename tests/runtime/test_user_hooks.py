"""User hooks through the real runtime: real scripts in temp folders, every event with
each exit code and JSON field Claude Code documents."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.hook_support import group, hook_command, inputs, user_hooks
from tests.runtime.support import assert_history_valid, collect, make_runtime, make_tool, of_type
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.messages import Message
from wyckoff_cli.tools.base import ToolContext

SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string"}},
    "required": ["command"],
    "additionalProperties": False,
}


def shell(ran: list[str]) -> Any:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(args["command"])
        return f"ran {args['command']}"

    from wyckoff_cli.tools.shell import run_shell

    return make_tool(
        "run_shell",
        run,
        schema=SCHEMA,
        requires_approval=True,
        kind="execute",
        subject_of=run_shell.subject_of,
    )


def call(command: str = "ls", name: str = "run_shell") -> dict[str, Any]:
    return {"tool_calls": [{"id": "c1", "name": name, "args": {"command": command}}]}


class Approver:
    def __init__(self, decision: ApprovalDecision | None = None) -> None:
        self.decision = decision or ApprovalDecision.allow()
        self.asked: list[ev.ApprovalRequested] = []

    async def __call__(self, request: ev.ApprovalRequested) -> ApprovalDecision:
        self.asked.append(request)
        return self.decision


def tool_result(messages: list[Message]) -> Message:
    return next(m for m in messages if m.role == "tool")


# ---------------------------------------------------------------- PreToolUse


async def test_pre_tool_use_exit_0_runs_the_call_with_the_event_on_stdin(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    command, log = hook_command(tmp_path / "h", "pre")
    hooks = user_hooks(workspace, {"PreToolUse": [group(command, "run_shell")]})
    hooks.session_id = "s-1"
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call(), {"text": "done"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, messages = await collect(runtime)
    assert ran == ["ls"]
    (record,) = inputs(log)
    data = record["input"]
    assert data["hook_event_name"] == "PreToolUse"
    assert data["tool_name"] == "run_shell" and data["tool_input"] == {"command": "ls"}
    assert data["tool_use_id"] == "c1" and data["session_id"] == "s-1" and data["cwd"] == str(workspace)
    assert data["permission_mode"] == "default"
    assert record["project"] == record["claude_project"] == str(workspace)
    assert record["key"] is None  # the scrubbed environment
    assert record["cwd"] == str(workspace)
    (ran_event,) = of_type(events, ev.HookRan)
    assert (ran_event.hook_event, ran_event.outcome, ran_event.call_id) == ("PreToolUse", "ok", "c1")
    assert_history_valid(messages)


async def test_pre_tool_use_exit_2_refuses_the_call_and_the_model_sees_stderr(
    workspace: Path, tmp_path: Path
) -> None:
    command, _ = hook_command(tmp_path / "h", "pre", code=2, stderr="rm is not allowed here")
    hooks = user_hooks(workspace, {"PreToolUse": [group(command, "run_shell")]})
    ran: list[str] = []
    runtime, _ = make_runtime([call("rm -rf x"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks])
    events, messages = await collect(runtime)
    assert ran == []
    result = tool_result(messages)
    assert result.is_error and "rm is not allowed here" in result.text
    (hook,) = of_type(events, ev.HookRan)
    assert hook.outcome == "blocked" and hook.exit_code == 2 and hook.message == "rm is not allowed here"


async def test_pre_tool_use_other_exit_codes_are_shown_and_do_not_block(
    workspace: Path, tmp_path: Path
) -> None:
    command, _ = hook_command(tmp_path / "h", "pre", code=1, stderr="jq: not found")
    hooks = user_hooks(workspace, {"PreToolUse": [group(command)]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call(), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, _ = await collect(runtime)
    assert ran == ["ls"]
    (hook,) = of_type(events, ev.HookRan)
    assert hook.outcome == "error" and hook.exit_code == 1 and "jq: not found" in hook.message


async def test_permission_decision_deny_refuses_with_the_reason(workspace: Path, tmp_path: Path) -> None:
    output = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no network"}}
    command, _ = hook_command(tmp_path / "h", "pre", stdout=output)
    hooks = user_hooks(workspace, {"PreToolUse": [group(command)]})
    ran: list[str] = []
    runtime, _ = make_runtime([call("curl x"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks])
    events, messages = await collect(runtime)
    assert ran == [] and "no network" in tool_result(messages).text
    assert of_type(events, ev.HookRan)[0].outcome == "blocked"


async def test_permission_decision_allow_skips_the_question(workspace: Path, tmp_path: Path) -> None:
    output = {"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "safe"}}
    command, _ = hook_command(tmp_path / "h", "pre", stdout=output)
    hooks = user_hooks(workspace, {"PreToolUse": [group(command)]})
    ran: list[str] = []
    approver = Approver(ApprovalDecision.deny(None))
    runtime, _ = make_runtime(
        [call("ls"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=approver
    )
    await collect(runtime)
    assert ran == ["ls"] and approver.asked == []


async def test_allow_never_overrides_a_deny_rule_or_a_destructive_command(
    workspace: Path, tmp_path: Path
) -> None:
    from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

    output = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    command, _ = hook_command(tmp_path / "h", "pre", stdout=output)
    hooks = user_hooks(workspace, {"PreToolUse": [group(command)]})
    ran: list[str] = []
    approver = Approver(ApprovalDecision.deny(None))
    policy = ApprovalPolicy(deny=["run_shell(git push*)"])
    rounds = [call("git push origin"), call("rm -rf ~"), {"text": "ok"}]
    runtime, _ = make_runtime(
        rounds, [shell(ran)], workspace, hooks=[hooks], approver=approver, policy=policy
    )
    await collect(runtime)
    assert ran == []
    assert len(approver.asked) == 1 and approver.asked[0].args["command"] == "rm -rf ~"


async def test_permission_decision_ask_asks_where_the_policy_would_allow(
    workspace: Path, tmp_path: Path
) -> None:
    output = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check this"}}
    command, _ = hook_command(tmp_path / "h", "pre", stdout=output)
    hooks = user_hooks(workspace, {"PreToolUse": [group(command, "read_file")]})
    read = make_tool("read_file", schema=SCHEMA, concurrency_safe=True, kind="read")
    approver = Approver()
    runtime, _ = make_runtime(
        [call("x", "read_file"), {"text": "ok"}], [read], workspace, hooks=[hooks], approver=approver
    )
    await collect(runtime)
    assert len(approver.asked) == 1 and approver.asked[0].reason == "check this"


async def test_updated_input_runs_the_changed_arguments_after_validation(
    workspace: Path, tmp_path: Path
) -> None:
    output = {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}}
    command, _ = hook_command(tmp_path / "h", "pre", stdout=output)
    hooks = user_hooks(workspace, {"PreToolUse": [group(command)]})
    ran: list[str] = []
    runtime, _ = make_runtime([call("ls"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks])
    events, _ = await collect(runtime)
    assert ran == ["ls -la"]
    assert of_type(events, ev.ToolStarted)[0].args == {"command": "ls -la"}


async def test_invalid_updated_input_is_refused_with_the_schema_error(
    workspace: Path, tmp_path: Path
) -> None:
    output = {"hookSpecificOutput": {"updatedInput": {"command": 42}}}
    command, _ = hook_command(tmp_path / "h", "pre", stdout=output)
    hooks = user_hooks(workspace, {"PreToolUse": [group(command)]})
    ran: list[str] = []
    runtime, _ = make_runtime([call("ls"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks])
    _, messages = await collect(runtime)
    assert ran == []
    assert "A hook changed the arguments, but they are invalid" in tool_result(messages).text


async def test_deny_wins_over_allow_across_hooks(workspace: Path, tmp_path: Path) -> None:
    allow, _ = hook_command(
        tmp_path / "h", "allow", stdout={"hookSpecificOutput": {"permissionDecision": "allow"}}
    )
    deny, _ = hook_command(
        tmp_path / "h",
        "deny",
        stdout={"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "policy"}},
    )
    hooks = user_hooks(workspace, {"PreToolUse": [group(allow), group(deny)]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call(), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    _, messages = await collect(runtime)
    assert ran == [] and "policy" in tool_result(messages).text


async def test_legacy_decision_block_refuses(workspace: Path, tmp_path: Path) -> None:
    command, _ = hook_command(tmp_path / "h", "pre", stdout={"decision": "block", "reason": "old style"})
    hooks = user_hooks(workspace, {"PreToolUse": [group(command)]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call(), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    _, messages = await collect(runtime)
    assert ran == [] and "old style" in tool_result(messages).text


async def test_continue_false_stops_the_run(workspace: Path, tmp_path: Path) -> None:
    command, _ = hook_command(
        tmp_path / "h", "pre", stdout={"continue": False, "stopReason": "enough for today"}
    )
    hooks = user_hooks(workspace, {"PreToolUse": [group(command)]})
    ran: list[str] = []
    runtime, _ = make_runtime([call(), {"text": "never"}], [shell(ran)], workspace, hooks=[hooks])
    events, messages = await collect(runtime)
    assert ran == []
    assert events[-1].reason == "stopped"
    assert any("enough for today" in n.message for n in of_type(events, ev.Notice))
    assert_history_valid(messages)


@pytest.mark.parametrize(
    ("matcher", "tool", "runs"),
    [
        ("run_shell", "run_shell", True),
        ("Bash", "run_shell", True),  # Claude Code's name of the tool
        ("WebFetch", "web_fetch", True),
        ("WebFetch", "web_search", False),
        ("Edit|Write", "write_file", True),
        ("Edit|Write", "run_shell", False),
        ("mcp__github__.*", "mcp__github__list_issues", True),
        ("mcp__github__.*", "mcp__gitlab__list", False),
        ("*", "anything", True),
        ("", "anything", True),
        ("run", "run_shell", False),  # the whole name, not a prefix
    ],
)
async def test_matchers(workspace: Path, tmp_path: Path, matcher: str, tool: str, runs: bool) -> None:
    command, log = hook_command(tmp_path / "h", "pre")
    hooks = user_hooks(workspace, {"PreToolUse": [group(command, matcher)]})
    target = make_tool(tool, schema=SCHEMA)
    runtime, _ = make_runtime([call("x", tool), {"text": "ok"}], [target], workspace, hooks=[hooks])
    await collect(runtime)
    assert bool(inputs(log)) is runs


# ---------------------------------------------------------------- PostToolUse


async def test_post_tool_use_gets_the_result_and_exit_2_gives_stderr_to_the_model(
    workspace: Path, tmp_path: Path
) -> None:
    command, log = hook_command(tmp_path / "h", "post", code=2, stderr="lint failed: line 3")
    hooks = user_hooks(workspace, {"PostToolUse": [group(command, "run_shell")]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call(), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    _, messages = await collect(runtime)
    assert ran == ["ls"]
    result = tool_result(messages)
    assert result.text.startswith("ran ls") and "lint failed: line 3" in result.text
    assert inputs(log)[0]["input"]["tool_response"] == "ran ls"


async def test_post_tool_use_json_reason_and_additional_context(workspace: Path, tmp_path: Path) -> None:
    output = {
        "decision": "block",
        "reason": "format it",
        "hookSpecificOutput": {"additionalContext": "3 files"},
    }
    command, _ = hook_command(tmp_path / "h", "post", stdout=output)
    hooks = user_hooks(workspace, {"PostToolUse": [group(command)]})
    runtime, _ = make_runtime(
        [call(), {"text": "ok"}], [shell([])], workspace, hooks=[hooks], approver=Approver()
    )
    _, messages = await collect(runtime)
    text = tool_result(messages).text
    assert "format it" in text and "3 files" in text


async def test_post_tool_use_continue_false_keeps_the_result_and_stops(
    workspace: Path, tmp_path: Path
) -> None:
    command, _ = hook_command(tmp_path / "h", "post", stdout={"continue": False, "stopReason": "halt"})
    hooks = user_hooks(workspace, {"PostToolUse": [group(command)]})
    ran: list[str] = []
    runtime, provider = make_runtime(
        [call(), {"text": "never"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, messages = await collect(runtime)
    assert ran == ["ls"] and tool_result(messages).text == "ran ls"
    assert events[-1].reason == "stopped" and len(provider.requests) == 1


async def test_post_tool_use_is_not_run_for_refused_calls(workspace: Path, tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "post")
    hooks = user_hooks(workspace, {"PostToolUse": [group(command)]})
    runtime, _ = make_runtime([call(), {"text": "ok"}], [shell([])], workspace, hooks=[hooks])  # denied
    await collect(runtime)
    assert inputs(log) == []


# ---------------------------------------------------------------- UserPromptSubmit


async def test_user_prompt_submit_stdout_is_added_as_context(workspace: Path, tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "prompt", stdout="Branch: main, 2 files changed")
    hooks = user_hooks(workspace, {"UserPromptSubmit": [group(command)]})
    runtime, provider = make_runtime([{"text": "ok"}], [], workspace, hooks=[hooks])
    _, messages = await collect(runtime, "fix the bug")
    assert inputs(log)[0]["input"]["prompt"] == "fix the bug"
    sent = provider.requests[0].messages[-1]
    assert sent.text.startswith("fix the bug") and "Branch: main, 2 files changed" in sent.text
    assert messages[0].text == sent.text  # stored as sent


async def test_user_prompt_submit_additional_context(workspace: Path, tmp_path: Path) -> None:
    output = {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ticket ABC-1"}
    }
    command, _ = hook_command(tmp_path / "h", "prompt", stdout=output)
    hooks = user_hooks(workspace, {"UserPromptSubmit": [group(command)]})
    runtime, provider = make_runtime([{"text": "ok"}], [], workspace, hooks=[hooks])
    await collect(runtime, "go")
    assert "ticket ABC-1" in provider.requests[0].messages[-1].text


@pytest.mark.parametrize(
    ("code", "stdout", "stderr", "shown"),
    [
        (2, "", "no secrets in prompts", "no secrets in prompts"),
        (0, {"decision": "block", "reason": "off topic"}, "", "off topic"),
        (0, {"continue": False, "stopReason": "maintenance"}, "", "maintenance"),
    ],
)
async def test_user_prompt_submit_blocks_the_prompt(
    workspace: Path, tmp_path: Path, code: int, stdout: Any, stderr: str, shown: str
) -> None:
    command, _ = hook_command(tmp_path / "h", "prompt", code=code, stdout=stdout, stderr=stderr)
    hooks = user_hooks(workspace, {"UserPromptSubmit": [group(command)]})
    runtime, provider = make_runtime([{"text": "never"}], [], workspace, hooks=[hooks])
    events, messages = await collect(runtime, "my key is sk-123")
    assert provider.requests == [] and messages == []
    assert events[-1].reason == "stopped"
    assert any(shown in n.message for n in of_type(events, ev.Notice))


# ---------------------------------------------------------------- Stop / SubagentStop


async def test_stop_exit_2_makes_the_turn_go_on_with_the_reminder(workspace: Path, tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "stop", code=2, stderr="run the tests first")
    hooks = user_hooks(workspace, {"Stop": [group(command)]}, max_stop_reminders=1)
    runtime, provider = make_runtime([{"text": "done"}, {"text": "tests pass"}], [], workspace, hooks=[hooks])
    events, messages = await collect(runtime)
    assert len(provider.requests) == 2
    reminder = provider.requests[1].messages[-1]
    assert reminder.role == "user" and reminder.text == "run the tests first"
    assert reminder.meta.get("synthetic") == "stop_hook"
    assert events[-1].reason == "completed" and events[-1].text == "tests pass"
    assert [r["input"]["stop_hook_active"] for r in inputs(log)] == [False, True]
    assert any("1 times in a row" in n.message for n in of_type(events, ev.Notice))


async def test_stop_blocks_at_most_three_times_in_a_row(workspace: Path, tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "stop", stdout={"decision": "block", "reason": "keep going"})
    hooks = user_hooks(workspace, {"Stop": [group(command)]})
    rounds = [{"text": f"answer {n}"} for n in range(4)]
    runtime, provider = make_runtime(rounds, [], workspace, hooks=[hooks])
    events, _ = await collect(runtime)
    assert len(provider.requests) == 4  # the first answer and three reminders
    assert events[-1].text == "answer 3" and len(inputs(log)) == 4


async def test_stop_exit_0_ends_the_turn(workspace: Path, tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "stop")
    hooks = user_hooks(workspace, {"Stop": [group(command)]})
    runtime, provider = make_runtime([{"text": "done"}], [], workspace, hooks=[hooks])
    events, _ = await collect(runtime)
    assert len(provider.requests) == 1 and events[-1].reason == "completed"
    assert inputs(log)[0]["input"]["hook_event_name"] == "Stop"


async def test_a_sub_agent_runs_subagent_stop_instead_of_stop(workspace: Path, tmp_path: Path) -> None:
    stop, stop_log = hook_command(tmp_path / "h", "stop")
    sub, sub_log = hook_command(tmp_path / "h", "sub", code=2, stderr="check your work")
    hooks = user_hooks(
        workspace, {"Stop": [group(stop)], "SubagentStop": [group(sub)]}, subagent=True, max_stop_reminders=1
    )
    runtime, provider = make_runtime([{"text": "a"}, {"text": "b"}], [], workspace, hooks=[hooks])
    await collect(runtime)
    assert inputs(stop_log) == [] and len(inputs(sub_log)) == 2
    assert provider.requests[1].messages[-1].text == "check your work"


# ---------------------------------------------------------------- session events


async def test_session_start_context_goes_into_the_next_message_not_the_prompt(
    workspace: Path, tmp_path: Path
) -> None:
    startup, log = hook_command(tmp_path / "h", "start", stdout="Open issues: #12")
    resume, resume_log = hook_command(tmp_path / "h", "resume", stdout="resumed")
    hooks = user_hooks(workspace, {"SessionStart": [group(startup, "startup"), group(resume, "resume")]})
    await hooks.session_start("startup")
    assert inputs(log)[0]["input"]["source"] == "startup" and inputs(resume_log) == []
    runtime, provider = make_runtime([{"text": "ok"}, {"text": "ok"}], [], workspace, hooks=[hooks])
    events, _ = await collect(runtime, "hello", system_prompt="SYSTEM")
    request = provider.requests[0]
    assert request.system_prompt == "SYSTEM"
    assert "Open issues: #12" in request.messages[-1].text
    assert of_type(events, ev.HookRan)[0].hook_event == "SessionStart"  # shown with the turn
    await collect(runtime, "again", system_prompt="SYSTEM")
    assert "Open issues" not in provider.requests[1].messages[-1].text


async def test_session_end_and_notification_get_their_fields(workspace: Path, tmp_path: Path) -> None:
    end, end_log = hook_command(tmp_path / "h", "end")
    note, note_log = hook_command(tmp_path / "h", "note")
    hooks = user_hooks(workspace, {"SessionEnd": [group(end)], "Notification": [group(note)]})
    await hooks.session_end("exit")
    assert inputs(end_log)[0]["input"]["reason"] == "exit"
    assert [e.hook_event for e in hooks.take_events()] == ["SessionEnd"]
    runtime, _ = make_runtime(
        [call(), {"text": "ok"}], [shell([])], workspace, hooks=[hooks], approver=Approver()
    )
    await collect(runtime)
    await hooks.aclose()  # waits for the notification hooks still running
    assert inputs(note_log)[0]["input"]["message"] == "Wyckoff needs your permission to use run_shell"


async def test_pre_compact_runs_before_a_compaction(workspace: Path, tmp_path: Path) -> None:
    from wyckoff_cli.context.manager import ContextManager
    from wyckoff_cli.providers.scripted import ScriptedProvider

    command, log = hook_command(tmp_path / "h", "compact")
    hooks = user_hooks(workspace, {"PreCompact": [group(command, "manual")]})
    manager = ContextManager(context_window=100_000)
    manager.before_compact = hooks.pre_compact
    history = [Message.user("a"), Message.assistant("b")]
    await manager.compact(history, "SYSTEM", [], ScriptedProvider([{"text": "summary"}]), focus="the API")
    (record,) = inputs(log)
    assert record["input"]["trigger"] == "manual" and record["input"]["custom_instructions"] == "the API"


# ---------------------------------------------------------------- running


async def test_a_hook_past_its_timeout_is_killed_and_does_not_block(workspace: Path, tmp_path: Path) -> None:
    # an hour-long hook: were it waited for, the test's own timeout would fail the test
    command, log = hook_command(tmp_path / "h", "slow", sleep=3600, code=2, stderr="blocked")
    hooks = user_hooks(workspace, {"PreToolUse": [group(command, timeout=0.5)]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call(), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, _ = await collect(runtime)
    assert ran == ["ls"]
    (hook,) = of_type(events, ev.HookRan)
    assert hook.outcome == "timeout" and hook.exit_code is None
    pid = inputs(log)[0]["pid"]
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or "State:\tZ" in status.read_text()  # killed (a zombie at most)


RENDEZVOUS = """\
import json, pathlib, sys, time
json.load(sys.stdin)
folder = pathlib.Path({folder!r})
(folder / {me!r}).write_text("here")
with open({log!r}, "a", encoding="utf-8") as handle:
    handle.write("{{}}\\n")
deadline = time.monotonic() + 60
while not (folder / {other!r}).exists():
    if time.monotonic() > deadline:
        sys.stderr.write("the other hook never started: hooks ran one after the other")
        sys.exit(2)
    time.sleep(0.01)
"""


def rendezvous_hook(folder: Path, me: str, other: str) -> tuple[str, Path]:
    """A hook that finishes only once the `other` hook has started: run one after the other, the
    first of them blocks (exit 2) after a minute; run together, both pass at once."""
    folder.mkdir(parents=True, exist_ok=True)
    script, log = folder / f"{me}.py", folder / f"{me}.log"
    script.write_text(RENDEZVOUS.format(folder=str(folder), me=me, other=other, log=str(log)))
    return f"{sys.executable} {script}", log


async def test_matching_hooks_run_concurrently_and_once_per_command(workspace: Path, tmp_path: Path) -> None:
    first, first_log = rendezvous_hook(tmp_path / "h", "one", "two")
    second, _ = rendezvous_hook(tmp_path / "h", "two", "one")
    hooks = user_hooks(workspace, {"PreToolUse": [group(first), group(second), group(first, "run_shell")]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call(), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, _ = await collect(runtime)
    assert [hook.outcome for hook in of_type(events, ev.HookRan)] == ["ok", "ok"] and ran == ["ls"]
    assert len(first_log.read_text().splitlines()) == 1


async def test_a_missing_hook_program_is_a_shown_error(workspace: Path) -> None:
    hooks = user_hooks(workspace, {"PreToolUse": [group("/no/such/hook-program")]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call(), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, _ = await collect(runtime)
    assert ran == ["ls"]
    assert of_type(events, ev.HookRan)[0].outcome == "error"
