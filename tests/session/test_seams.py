"""The seams, end to end: the conversation's observers record exactly what happened,
resume repairs reach the model once, an edited call is told to the model, and the
builder and controller are the one path every host takes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.storage.sessions_support import SummarizingContext, make_runtime, read_lines, run_turn
from tests.waiting import until_sync
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.messages import Message, ToolCallPart
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.runtime.approval import answer_approvals
from wyckoff_cli.runtime.hooks import RuntimeHooks
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.storage.redact import Redactor
from wyckoff_cli.storage.sessions import SessionStore
from wyckoff_cli.testing.fake_server import FakeServer

KEY = "fake-key-for-the-fake-server"


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions", redactor=Redactor())


def kinds(chat_log: Path) -> list[str]:
    return [
        r["kind"] if r["kind"] != "message" else f"message:{r['message']['role']}"
        for r in read_lines(chat_log)
    ]


# ------------------------------------------------------------------ observers


async def test_compaction_and_rewind_are_recorded_exactly_and_reload_to_the_same_state(
    store: SessionStore, workspace: Path
) -> None:
    recorder = store.create(workspace, model="scripted:test")
    context = SummarizingContext()
    context.recorder = recorder
    runtime, provider = make_runtime(
        [{"text": "first"}, {"text": "second"}, {"text": "third"}], recorder, workspace, context
    )
    await run_turn(runtime, recorder, "one")
    context.armed = True
    await run_turn(runtime, recorder, "two")  # compacted before its model call
    await run_turn(runtime, recorder, "three")
    third = next(m for m in recorder.conversation if m.text == "three")
    recorder.conversation.truncate_to(third.id)  # a rewind to before "three"
    expected = recorder.conversation.messages
    recorder.close()
    chat_log = recorder.directory / "chat.jsonl"
    assert kinds(chat_log) == [
        "header",
        "message:user",
        "message:assistant",
        "turn_end",
        "message:user",
        "compaction",  # written when the conversation was replaced: after "two", before its answer
        "message:assistant",
        "turn_end",
        "message:user",
        "message:assistant",
        "turn_end",
        "rewind",
    ]
    records = read_lines(chat_log)
    compaction = next(r for r in records if r["kind"] == "compaction")
    assert [m["parts"][0]["text"] for m in compaction["history"]] == [
        "Summary: we echoed and read a big file.",
        "two",
    ]
    assert compaction["replaced"] == 2 and compaction["archive"].startswith("archive/")
    rewind = records[-1]
    assert rewind["to"] == third.id and rewind["removed"] == 2
    loaded = store.load(recorder.id)
    assert [m.to_dict() for m in loaded.history] == [m.to_dict() for m in expected]
    assert [m.text for m in loaded.history] == ["Summary: we echoed and read a big file.", "two", "second"]
    # the model saw the compacted history, never the archived messages again
    assert [m.text for m in provider.requests[1].messages] == [
        "Summary: we echoed and read a big file.",
        "two",
    ]


async def test_resume_repairs_go_through_the_conversation_once(store: SessionStore, workspace: Path) -> None:
    recorder = store.create(workspace, model="scripted:test")
    call = ToolCallPart("toolu_9", "shell", {})
    recorder.conversation.append(Message.user("run it"))
    recorder.conversation.append(Message("assistant", (call,)))
    recorder.close()  # as a crash leaves it: the call has no result
    resumed = store.reopen(store.load(recorder.id))
    repairs = [m for m in resumed.conversation if m.role == "tool"]
    assert [m.tool_call_id for m in repairs] == ["toolu_9"]
    runtime, provider = make_runtime([{"text": "resumed"}], resumed, workspace)
    await run_turn(runtime, resumed, "go on")
    resumed.close()
    sent = provider.requests[0].messages
    assert [m.tool_call_id for m in sent if m.role == "tool"] == ["toolu_9"]
    logged = [r for r in read_lines(recorder.directory / "chat.jsonl") if r["kind"] == "message"]
    assert [r["message"].get("tool_call_id") for r in logged].count("toolu_9") == 1


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.mark.slow
def test_a_session_killed_mid_tool_call_resumes_with_the_repair_sent_once(
    workspace: Path, isolated_environment: Path
) -> None:
    env = dict(os.environ)
    env["ANTHROPIC_API_KEY"] = KEY
    model = ["--model", "anthropic:claude-sonnet-4-5"]
    with FakeServer() as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        server.script(
            {"tool_calls": [{"name": "run_shell", "args": {"command": "sleep 30"}, "id": "toolu_kill"}]},
            {"text": "Picked up where we left off."},
        )
        first = subprocess.Popen(
            [sys.executable, "-m", "wyckoff_cli", "run", *model, "--permission-mode", "yolo", "wait"],
            cwd=workspace,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        sessions = isolated_environment / "data" / "sessions"

        def logged_call() -> Path | None:
            logs = list(sessions.glob("*/*/chat.jsonl"))
            return logs[0] if logs and '"toolu_kill"' in logs[0].read_text(encoding="utf-8") else None

        chat_log: Path | None = until_sync(logged_call, what="the first run to log its tool call")
        pad = chat_log.parent / "scratchpad.jsonl"
        until_sync(lambda: '"tool_start"' in pad.read_text(encoding="utf-8"), what="the shell call to start")
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        assert chat_log is not None, "the first run never logged its tool call"
        second = subprocess.run(
            [
                sys.executable,
                "-m",
                "wyckoff_cli",
                "run",
                *model,
                "--continue",
                "--output-format",
                "json",
                "go on",
            ],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 0, second.stderr
        assert json.loads(second.stdout.splitlines()[-1])["text"] == "Picked up where we left off."
        resumed_request = server.requests[-1].body
    answers = [block for block in _tool_results(resumed_request) if block["tool_use_id"] == "toolu_kill"]
    assert len(answers) == 1 and answers[0]["is_error"] is True


# ------------------------------------------------------------------ approvals


async def test_an_edited_call_is_told_to_the_model_with_what_ran(workspace: Path) -> None:
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "run_shell", "args": {"command": "echo proposed"}, "id": "toolu_e"}]},
            {"text": "Noted."},
        )
        spec = ModelSpec("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key=KEY)
        builder = SessionBuilder(
            open_workspace(workspace), provider_factory=lambda _m: build_provider(spec), manage_context=False
        )
        session = builder.build(model="anthropic:claude-sonnet-4-5", mode="default")
        requests: list[ev.ApprovalRequested] = []

        async def edit(request: ev.ApprovalRequested) -> ApprovalDecision:
            requests.append(request)
            assert request.validate({"command": 3}) is not None  # the host checks before accepting
            return ApprovalDecision.edit({**request.args, "command": "echo edited"})

        turn = session.runtime.run_stream(session.conversation, "run it")
        events = [e async for e in answer_approvals(turn, edit)]
        await session.aclose()
        second = server.requests[1].body
    (request,) = requests
    assert request.editable_fields == ["command"] and request.rule
    (result,) = [b for b in _tool_results(second) if b["tool_use_id"] == "toolu_e"]
    text = result["content"] if isinstance(result["content"], str) else result["content"][0]["text"]
    assert text.startswith(
        '[The user edited this call before it ran. It ran with these arguments: {"command":"echo edited"}]\n'
    )
    assert "edited" in text.splitlines()[1] and "proposed" not in text
    decided = [e for e in events if isinstance(e, ev.ApprovalDecided)]
    assert decided[0].decision == "edit" and decided[0].args == {"command": "echo edited"}
    tool_message = next(m for m in session.conversation if m.role == "tool")
    assert tool_message.meta["edited"] == {
        "proposed": {"command": "echo proposed"},
        "ran": {"command": "echo edited"},
    }


# ------------------------------------------------------------------ builder and controller


def test_the_prompt_lists_the_tools_of_the_registry_the_runtime_uses(workspace: Path) -> None:
    from tests.runtime.support import make_tool
    from wyckoff_cli.tools.builtin import default_registry

    def tools() -> Any:
        registry = default_registry()
        registry.add(make_tool("deploy"))
        return registry

    builder = SessionBuilder(open_workspace(workspace), tools_factory=tools)
    session = builder.build(model="scripted:none", mode="default", provider=_scripted())
    assert session.context is not None and session.context.prompt is not None
    assert session.context.prompt.tool_names == tuple(session.runtime.tools.names())
    assert "deploy" in session.context.prompt.tool_names and "remember" in session.context.prompt.tool_names


def _scripted() -> Any:
    from wyckoff_cli.providers.scripted import ScriptedProvider

    return ScriptedProvider([{"text": "summary"}, {"text": "ok"}])


async def test_compact_goes_through_the_hooks_the_recorder_and_the_status(workspace: Path) -> None:
    seen: list[str] = []

    class Watch(RuntimeHooks):
        async def on_event(self, event: ev.RuntimeEvent) -> None:
            seen.append(event.type)

    from wyckoff_cli.providers.scripted import ScriptedProvider

    provider = ScriptedProvider([{"text": f"answer {i}"} for i in range(3)] + [{"text": "The summary."}])
    builder = SessionBuilder(
        open_workspace(workspace), provider_factory=lambda _m: provider, hooks=[Watch()], store=SessionStore()
    )
    controller = ChatController(builder, model="scripted:none")
    for i in range(3):
        async for _event in controller.handle(rq.Turn(f"question {i}")):
            pass
    seen.clear()
    events = [e async for e in controller.handle(rq.Compact())]
    assert "compaction" in [e.type for e in events] and "compaction" in seen
    session_id = controller.id
    assert session_id is not None
    await controller.aclose()
    log = read_lines(controller.store.find(session_id).directory / "chat.jsonl")
    assert [r["kind"] for r in log].count("compaction") == 1


async def test_always_rules_survive_a_new_session(workspace: Path) -> None:
    """A rule "always" saved is in force in the next session of the same app run."""
    from tests.tui.support import make_controller

    controller, _ = make_controller(workspace, [{"text": "ok"}])
    controller._save_rule("run_shell(ls)")
    [_ async for _ in controller.handle(rq.Clear())]
    assert "run_shell(ls)" in controller.session.policy.allow
    await controller.aclose()


def test_sessions_show_says_what_an_edited_call_ran(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from wyckoff_cli.cli.main import main
    from wyckoff_cli.session.store import build_session_store

    recorder = build_session_store().create(workspace, model="scripted:test")
    call = ToolCallPart("c1", "run_shell", {"command": "rm -rf build"})
    recorder.conversation.append(Message.user("clean up"))
    recorder.conversation.append(Message("assistant", (call,)))
    edited = {"proposed": {"command": "rm -rf build"}, "ran": {"command": "rm -rf build/tmp"}}
    recorder.conversation.append(Message.tool_result("c1", "run_shell", "[exit code 0]", edited=edited))
    recorder.close()
    assert main(["sessions", "show", recorder.id]) == 0
    out = capsys.readouterr().out
    assert 'edited by you before it ran; ran with {"command": "rm -rf build/tmp"}' in out
