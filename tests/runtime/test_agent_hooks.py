"""`agent` hooks: a read-only sub-agent reads the workspace, then answers ok/reason."""

from __future__ import annotations

from pathlib import Path

from tests.runtime.support import collect, make_runtime, of_type
from tests.runtime.test_claude_hooks import claude_hooks
from tests.runtime.test_user_hooks import Approver, call, shell, tool_result
from wyckoff_cli.core import events as ev
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.agent_hooks import agent_judge
from wyckoff_cli.tools.builtin import default_registry

RULE = "Refuse the command unless CONTRIBUTING.md allows it. The event: $ARGUMENTS"


def agent_hook(matcher: str = "Bash") -> dict[str, object]:
    return {"matcher": matcher, "hooks": [{"type": "agent", "prompt": RULE, "timeout": 60}]}


def read_call(path: str) -> dict[str, object]:
    return {"tool_calls": [{"id": "r1", "name": "read_file", "args": {"path": path}}]}


async def test_an_agent_hook_reads_the_workspace_then_refuses(workspace: Path) -> None:
    (workspace / "CONTRIBUTING.md").write_text("Never run make deploy from an agent.\n")
    hooks = claude_hooks(workspace, {"PreToolUse": [agent_hook()]})
    child = ScriptedProvider(
        [
            read_call("CONTRIBUTING.md"),
            {"text": '{"ok": false, "reason": "CONTRIBUTING.md forbids make deploy"}'},
        ]
    )
    hooks.agent_judge = agent_judge(child, default_registry, workspace)
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call("make deploy"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, messages = await collect(runtime)
    assert ran == []
    assert "CONTRIBUTING.md forbids make deploy" in tool_result(messages).text
    second = child.requests[1]  # the child saw the file it read
    assert any("Never run make deploy" in m.text for m in second.messages if m.role == "tool")
    assert sorted(t.name for t in child.requests[0].tools) == ["glob", "grep", "list_dir", "read_file"]
    assert of_type(events, ev.HookRan)[0].outcome == "blocked"


async def test_an_agent_hook_cannot_write(workspace: Path) -> None:
    hooks = claude_hooks(workspace, {"PreToolUse": [agent_hook()]})
    write = {"tool_calls": [{"id": "w1", "name": "write_file", "args": {"path": "x.txt", "content": "x"}}]}
    child = ScriptedProvider([write, {"text": '{"ok": true}'}])
    hooks.agent_judge = agent_judge(child, default_registry, workspace)
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call("ls"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    await collect(runtime)
    assert ran == ["ls"] and not (workspace / "x.txt").exists()


async def test_without_a_model_an_agent_hook_is_a_shown_error(workspace: Path) -> None:
    hooks = claude_hooks(workspace, {"PreToolUse": [agent_hook()]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call("ls"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, _ = await collect(runtime)
    assert ran == ["ls"] and "agent hooks need a model" in of_type(events, ev.HookRan)[0].message
