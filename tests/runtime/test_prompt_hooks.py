"""`prompt` hooks: the model decides with Claude Code's JSON answer (`ok`, `reason`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runtime.support import collect, make_runtime, of_type
from tests.runtime.test_claude_hooks import claude_hooks
from tests.runtime.test_user_hooks import Approver, call, shell, tool_result
from wyckoff_cli.core import events as ev
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.prompt_hooks import provider_judge, read_verdict

RULE = "Refuse any shell command that uses grep; rg must be used instead. The event: $ARGUMENTS"


def prompt_hook(matcher: str = "Bash", prompt: str = RULE) -> dict[str, object]:
    return {"matcher": matcher, "hooks": [{"type": "prompt", "prompt": prompt, "timeout": 30}]}


async def test_a_prompt_hook_refuses_the_call_when_the_model_says_not_ok(workspace: Path) -> None:
    hooks = claude_hooks(workspace, {"PreToolUse": [prompt_hook()]})
    judge = ScriptedProvider(
        [{"text": '{"ok": false, "reason": "use rg instead of grep"}'}, {"text": '{"ok": true}'}]
    )
    hooks.judge = provider_judge(judge)
    ran: list[str] = []
    rounds = [call("grep -r x ."), call("rg x"), {"text": "done"}]
    runtime, _ = make_runtime(rounds, [shell(ran)], workspace, hooks=[hooks], approver=Approver())
    events, messages = await collect(runtime)
    assert ran == ["rg x"]
    assert "use rg instead of grep" in tool_result(messages).text
    asked = judge.requests[0]
    assert asked.tools == ()  # one side call, no tools
    text = asked.messages[0].text
    assert text.startswith("Refuse any shell command") and "$ARGUMENTS" not in text
    event = json.loads(text.split("The event: ", 1)[1])
    assert event["tool_name"] == "Bash" and event["tool_input"] == {"command": "grep -r x ."}
    assert [e.outcome for e in of_type(events, ev.HookRan)] == ["blocked", "ok"]


async def test_a_stop_prompt_hook_makes_the_turn_go_on(workspace: Path) -> None:
    hooks = claude_hooks(
        workspace, {"Stop": [prompt_hook("", "Has the assistant run the tests? $ARGUMENTS")]}
    )
    hooks.judge = provider_judge(
        ScriptedProvider(
            [{"text": 'Sure: {"ok": false, "reason": "run the tests first"}'}, {"text": '{"ok": true}'}]
        )
    )
    runtime, provider = make_runtime(
        [{"text": "finished"}, {"text": "tests ran"}], [], workspace, hooks=[hooks]
    )
    _, messages = await collect(runtime)
    assert any("run the tests first" in m.text for m in messages if m.role == "user")
    assert messages[-1].text == "tests ran"


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("I think it is fine", "did not answer with JSON"),
        ("{ok: yes}", "not valid JSON"),
        ('{"verdict": "fine"}', 'neither "ok" nor "decision"'),
    ],
)
async def test_an_unreadable_answer_is_a_shown_error_and_does_not_block(
    workspace: Path, answer: str, problem: str
) -> None:
    hooks = claude_hooks(workspace, {"PreToolUse": [prompt_hook()]})
    hooks.judge = provider_judge(ScriptedProvider([{"text": answer}]))
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call("grep x"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, _ = await collect(runtime)
    assert ran == ["grep x"]
    (hook,) = of_type(events, ev.HookRan)
    assert hook.outcome == "error" and problem in hook.message


async def test_without_a_model_a_prompt_hook_is_a_shown_error(workspace: Path) -> None:
    hooks = claude_hooks(workspace, {"PreToolUse": [prompt_hook()]})
    ran: list[str] = []
    runtime, _ = make_runtime(
        [call("grep x"), {"text": "ok"}], [shell(ran)], workspace, hooks=[hooks], approver=Approver()
    )
    events, _ = await collect(runtime)
    assert ran == ["grep x"]
    assert "need a model" in of_type(events, ev.HookRan)[0].message


def test_claude_codes_older_decision_answer_is_read() -> None:
    assert read_verdict('{"decision": "approve"}') == {}
    assert read_verdict('{"decision": "block", "reason": "no"}') == {"decision": "block", "reason": "no"}
