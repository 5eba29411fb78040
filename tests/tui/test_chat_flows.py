"""The chat app driven with Pilot and the scripted provider."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea
from textual.worker import WorkerState

from tests.tui.support import make_app
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.storage.permissions import list_rules
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.permissions.subject import command_subject
from wyckoff_cli.tui import typing_guard
from wyckoff_cli.tui.app import WyckoffApp
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.prompt_input import PromptInput
from wyckoff_cli.tui.widgets.status_bar import render_status
from wyckoff_cli.tui.widgets.thinking import ThinkingPane
from wyckoff_cli.tui.widgets.tool_call import ToolCallView, plain_text

SIZE = (100, 40)


@pytest.fixture(autouse=True)
def short_typing_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """The dialogs' typing pause is 1 s; these tests do not type, 0.3 s will do
    (test_approval_dialog.py tests the real pause)."""
    monkeypatch.setattr(typing_guard, "PAUSE_SECONDS", 0.3)


def shell_tool(ran: list[dict[str, Any]]) -> Tool:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        ran.append(args)
        ctx.emit_output("line 1\nline 2\n")
        return f"ran {args['command']}"

    def preview(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        return {"kind": "command", "command": args["command"], "cwd": str(ctx.workspace)}

    schema = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
    return Tool(
        "run_shell",
        "Run a command.",
        schema,
        run,
        requires_approval=True,
        kind="execute",
        preview=preview,
        editable_fields=("command",),
        subject_of=command_subject(),
    )


def chat(app: WyckoffApp) -> ChatScreen:
    assert isinstance(app.screen, ChatScreen)
    return app.screen


async def send(pilot: Pilot[None], text: str) -> None:
    prompt = pilot.app.screen.query_one(PromptInput)
    prompt.load_text(text)
    prompt.focus()
    await pilot.press("enter")


def working(app: WyckoffApp) -> list[str]:
    """The app's workers that have not finished (a turn, a command, a session swap…)."""
    return [
        f"{w.group}:{w.name}" for w in app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)
    ]


async def settle(pilot: Pilot[None], screen: ChatScreen) -> None:
    """Wait until the turn (and any command or other worker) has ended, then refresh."""
    await until(
        pilot,
        lambda: not screen.busy and not working(screen.app),
        what="the turn and every worker to end",
        observe=lambda: (
            f"busy={screen.busy}, working={working(screen.app)}, top screen {type(screen.app.screen).__name__}"
        ),
    )
    await pilot.pause()


def keys_work(app: Any) -> bool:
    """The top screen is a dialog whose typing pause is over (and that no longer shows it)."""
    guard = getattr(app.screen, "guard", None)
    if not isinstance(guard, typing_guard.TypingGuard) or guard.paused:
        return False
    indicator = app.screen.query("#paused")
    return not (indicator and indicator.first().display)


async def past_pause(pilot: Pilot[None]) -> None:
    """Wait until a dialog's keys work (the typing pause is shortened in these tests)."""
    await until(
        pilot,
        lambda: keys_work(pilot.app),
        what="a dialog whose keys work (past its typing pause)",
    )


async def wait_for_screen(pilot: Pilot[None], kind: type) -> Any:
    return await until(
        pilot,
        lambda: pilot.app.screen if isinstance(pilot.app.screen, kind) else None,
        what=f"{kind.__name__} to appear",
    )


async def test_streaming_answer_thinking_and_status(tmp_path: Path) -> None:
    rounds = [
        {
            "thinking": "Consider the question.",
            "text": "The answer is **42**.",
            "chunk_size": 3,
            "usage": {"input_tokens": 1000, "output_tokens": 50, "cache_read_tokens": 800},
        }
    ]
    app, provider = make_app(tmp_path, rounds, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "What is it?")
        await settle(pilot, screen)
        assert [w.text for w in screen.query(UserMessage)] == ["What is it?"]
        pane = screen.query_one(ThinkingPane)
        assert not pane.live and pane.text == "Consider the question."
        answer_text = screen.router.last_done.text if screen.router.last_done else ""
        assert answer_text == "The answer is **42**."
        status = screen.status
        assert (status.input_tokens, status.output_tokens, status.cache_read_tokens) == (1000, 50, 800)
        assert status.state == "idle"
        assert abs(status.cost - (1000 * 3e-6 + 50 * 15e-6)) < 1e-12
        assert status.context_percent == 100 * 1050 / 200_000
        assert provider.requests[0].system_prompt == "SYSTEM"


async def test_tool_call_with_allow_and_streamed_output(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [{"tool_calls": [{"name": "run_shell", "args": {"command": "make test"}}]}, {"text": "Done."}]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "run the tests")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        assert modal.request.preview["command"] == "make test"
        await past_pause(pilot)  # past the typing pause
        await pilot.press("y")
        await settle(pilot, screen)
        assert ran == [{"command": "make test"}]
        view = screen.query_one(ToolCallView)
        assert view.status == "ok" and view.result == "ran make test" and "line 2" in view.output


async def test_keys_typed_during_the_grace_period_are_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a pause no loaded machine can outlast between the dialog opening and the key
    monkeypatch.setattr(typing_guard, "PAUSE_SECONDS", 30.0)
    ran: list[dict[str, Any]] = []
    rounds = [{"tool_calls": [{"name": "run_shell", "args": {"command": "rm -rf build"}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "clean")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await pilot.press("y")  # typed ahead: must not approve
        await pilot.pause()
        assert pilot.app.screen is modal and ran == []
        await pilot.press("escape")  # denying works even while paused
        await settle(pilot, chat(app))
        assert ran == []


async def test_deny_with_feedback_reaches_the_model(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [
        {"tool_calls": [{"name": "run_shell", "args": {"command": "git push"}}]},
        {"text": "Understood."},
    ]
    app, provider = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "ship it")
        await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("n")
        await pilot.press(*"not yet")
        await pilot.press("enter")
        await settle(pilot, chat(app))
        assert ran == []
        answer = provider.requests[1].messages[-1]
        assert answer.is_error and "not yet" in answer.text


async def test_edit_runs_the_edited_arguments(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [{"tool_calls": [{"name": "run_shell", "args": {"command": "pytest"}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "test")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("e")
        await pilot.press("ctrl+r")  # all the arguments as JSON
        editor = modal.query_one("#json", TextArea)
        editor.load_text('{"command": "pytest -x"}')
        await pilot.press("ctrl+s")
        await settle(pilot, chat(app))
        assert ran == [{"command": "pytest -x"}]


async def test_invalid_edit_is_refused_in_the_modal(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [{"tool_calls": [{"name": "run_shell", "args": {"command": "pytest"}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "test")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("e", "ctrl+r")
        modal.query_one("#json", TextArea).load_text('{"cmd": 1}')
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert pilot.app.screen is modal
        assert "arguments.command is required" in str(modal.query_one("#edit-error").render())
        await pilot.press("escape", "escape")
        await settle(pilot, chat(app))
        assert ran == []


async def test_always_allows_the_next_call_and_is_saved(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [
        {"tool_calls": [{"name": "run_shell", "args": {"command": "ls"}}]},
        {"tool_calls": [{"name": "run_shell", "args": {"command": "ls"}}]},
        {"text": "ok"},
    ]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "look")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        assert modal.request.rule
        await past_pause(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert pilot.app.screen is modal and ran == []  # a letter alone saves nothing
        await pilot.press("enter")
        await settle(pilot, chat(app))
        saved = [r.rule for r in list_rules(tmp_path) if r.kind == "allow"]
        assert len(ran) == 2 and saved == [modal.request.rule]


async def test_escape_interrupts_a_running_turn(tmp_path: Path) -> None:
    rounds = [[{"text": "Working on it"}, {"sleep": 30}]]
    app, provider = make_app(tmp_path, rounds, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "long task")
        await until(pilot, lambda: screen.router.answer_text)
        await pilot.press("escape")
        await settle(pilot, screen)
        assert screen.router.last_done is not None and screen.router.last_done.reason == "aborted"
        assert any(n.kind == "aborted" for n in screen.query(NoticeLine))
        assert provider.closed_streams == 1


async def test_messages_typed_while_busy_are_queued_then_sent(tmp_path: Path) -> None:
    rounds: list[Any] = [[{"text": "first"}, {"sleep": 1.0}], {"text": "second answer"}]
    app, provider = make_app(tmp_path, rounds, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "one")
        await until(pilot, lambda: screen.router.answer_text == "first")  # the first turn is running
        await send(pilot, "two")
        assert screen.queued == ["two"]
        await until(pilot, lambda: len(provider.requests) == 2 and not screen.busy)
        await settle(pilot, screen)
        assert screen.queued == []
        assert provider.requests[1].messages[-1].text == "two"


async def test_shift_tab_cycles_permission_modes(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        seen = []
        for _ in range(5):
            await pilot.press("shift+tab")
            seen.append(screen.status.mode)
        assert seen == ["plan", "auto-edit", "auto", "yolo", "default"]


async def test_slash_commands(tmp_path: Path) -> None:
    rounds = [{"text": "hi", "usage": {"input_tokens": 10, "output_tokens": 5}}]
    app, _ = make_app(tmp_path, rounds, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "/help")
        await send(pilot, "/mode plan")
        assert screen.status.mode == "plan"
        await send(pilot, "/mode nonsense")
        await send(pilot, "hello")
        await settle(pilot, screen)
        await send(pilot, "/cost")
        await send(pilot, "/model scripted:other")
        await until(pilot, lambda: screen.status.model == "scripted:other")
        assert screen.status.model == "scripted:other"
        await send(pilot, "/nope")
        notices = [n.message for n in screen.query(NoticeLine)]
        assert any("Unknown mode 'nonsense'" in n for n in notices)
        assert any("Unknown command /nope" in n for n in notices)
        await send(pilot, "/quit")
        await pilot.pause()
    assert app.return_value is None


async def test_tool_widgets_show_diffs_todos_and_errors(tmp_path: Path) -> None:
    async def edit(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        return ToolOutcome("edited", {"diff": "--- a/x\n+++ b/x\n-old\n+new\n"})

    async def todo(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        return ToolOutcome(
            "plan saved",
            {
                "todos": [
                    {"content": "read", "status": "completed"},
                    {"content": "fix", "status": "in_progress"},
                ]
            },
        )

    tools = [
        Tool("edit_file", "e", {"type": "object"}, edit),
        Tool("todo_write", "t", {"type": "object"}, todo),
    ]
    rounds = [
        {
            "tool_calls": [
                {"name": "edit_file", "args": {"path": "x"}},
                {"name": "todo_write", "args": {}},
                {"name": "missing", "args": {}},
            ]
        },
        {"text": "ok"},
    ]
    app, _ = make_app(tmp_path, rounds, tools)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "go")
        await settle(pilot, screen)
        views = {v.tool_name: v for v in screen.query(ToolCallView)}
        assert views["edit_file"].display_data == {"diff": "--- a/x\n+++ b/x\n-old\n+new\n"}
        assert "☑ read\n◐ fix" in plain_text(views["todo_write"].render_call())
        assert "+new" in plain_text(views["edit_file"].render_call())
        assert views["missing"].status == "error" and views["missing"].has_class("-error")


async def test_resume_restores_the_transcript_and_history(tmp_path: Path) -> None:
    rounds = [{"text": "first answer"}]
    app, _ = make_app(tmp_path, rounds, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "remember this")
        await settle(pilot, screen)
        session_id = screen.controller.id
    assert session_id is not None
    loaded = app.controller.store.load(session_id)
    resumed, provider = make_app(tmp_path, [{"text": "second"}], [], loaded=loaded)
    async with resumed.run_test(size=SIZE) as pilot:
        screen = chat(resumed)
        await pilot.pause()
        assert screen.status.input_tokens == 100  # the resumed session's totals
        assert screen.status.context_tokens == 120  # the context its last call left: the ctx %
        assert [w.text for w in screen.query(UserMessage)] == ["remember this"]
        await send(pilot, "and now?")
        await settle(pilot, screen)
        assert [m.text for m in provider.requests[0].messages] == [
            "remember this",
            "first answer",
            "and now?",
        ]


async def test_fallback_notice_drops_partial_text(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        router = screen.router
        router.handle(ev.ModelStart(1, "a:x"))
        router.handle(ev.TextDelta("partial"))
        await pilot.pause()
        answer = router.answer
        fallback = ev.FallbackSwitched("a:x", "b:y", "overloaded", "partial")
        screen.status.observe(fallback)  # as the controller does before the screen sees it
        router.handle(fallback)
        await pilot.pause()
        assert answer is not None and not answer.is_attached  # type: ignore[attr-defined]
        assert screen.status.fallback_model == "b:y"
        assert any(n.kind == "fallback" for n in screen.query(NoticeLine))
        await asyncio.sleep(0)


async def test_retry_and_server_tool_events_are_shown(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        router = screen.router
        router.handle(ev.ModelStart(1, "a:x"))
        router.handle(ev.TextDelta("partial"))
        await pilot.pause()
        answer = router.answer
        router.handle(ev.Retrying("a:x", 2, 3, 1.5, "overloaded", "partial"))
        router.handle(
            ev.ServerToolUsed(
                "web_search",
                "searched the web: tides",
                "anthropic",
                [{"url": "https://t.example", "title": "Tides"}],
            )
        )
        await pilot.pause()
        assert answer is not None and not answer.is_attached  # type: ignore[attr-defined]
        messages = {n.kind: n.message for n in screen.query(NoticeLine)}
        assert messages["retry"] == "a:x failed (overloaded); retrying in 1.5 s (attempt 2 of 3)"
        assert messages["info"] == "searched the web: tides\n  • Tides — https://t.example"
        await asyncio.sleep(0)


async def test_server_search_shows_the_query_and_linked_sources(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        sources = [
            {"url": "https://peps.python.org/pep-0758/", "title": "PEP 758"},
            {"url": "https://docs.python.org/3.14/", "title": ""},
        ]
        screen.router.handle(
            ev.ServerToolUsed("web_search", "searched the web: python 3.14", "anthropic", sources)
        )
        await pilot.pause()
        notice = [n for n in screen.query(NoticeLine) if "searched the web" in n.message][0]
        assert notice.message.splitlines() == [
            "searched the web: python 3.14",
            "  • PEP 758 — https://peps.python.org/pep-0758/",
            "  • https://docs.python.org/3.14/",
        ]


async def test_cost_counts_and_prices_server_side_searches(tmp_path: Path) -> None:
    from textual.widgets import Static

    from wyckoff_cli.core.usage import Usage
    from wyckoff_cli.models.costs import cost_of
    from wyckoff_cli.models.facts import resolve_model_facts

    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)

        def price(model: str, usage: ev.UsageReported) -> tuple[float, float] | None:
            cost = cost_of(usage.usage, resolve_model_facts(model).prices)
            return None if cost is None else (cost.total, cost.saved)

        screen.status.price = price
        usage = Usage(1000, 100, web_searches=3)
        screen.status.observe(ev.UsageReported.from_usage("anthropic:claude-sonnet-4-5", usage))
        totals = screen.status.per_model["anthropic:claude-sonnet-4-5"]
        assert totals.web_searches == 3
        assert totals.cost == pytest.approx(1000 * 3 / 1e6 + 100 * 15 / 1e6 + 3 * 10 / 1000)
        await send(pilot, "/cost")
        shown = [plain_text(w.content, 160) for w in screen.query(Static) if w.has_class("command-output")]
        assert shown and "searches" in shown[-1]
        assert "$0.0345" in shown[-1]


def test_fetch_approval_shows_the_url_and_its_domain() -> None:
    from wyckoff_cli.tui.screens.approval import render_preview

    preview = {
        "kind": "fetch",
        "url": "https://docs.python.org/3/library/json.html",
        "host": "docs.python.org",
        "rule": "web_fetch(domain:docs.python.org)",
        "reason": "default mode asks before using web_fetch",
    }
    args = {"url": "https://Docs.Python.org/3/library/json.html", "prompt": "JSONDecodeError"}
    request = ev.ApprovalRequested("c1", "web_fetch", args, preview, preview["rule"])
    shown = plain_text(render_preview(request))
    assert "GET https://docs.python.org/3/library/json.html" in shown
    assert "domain docs.python.org" in shown and "looking for: JSONDecodeError" in shown


async def test_a_resumed_session_shows_its_context_and_each_agents_share(tmp_path: Path) -> None:
    rounds = [{"text": "done", "usage": {"input_tokens": 50_000, "output_tokens": 2_000}}]
    app, _ = make_app(tmp_path, rounds, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "look around")
        await settle(pilot, screen)
        recorder = screen.controller._recorder
        assert recorder is not None  # a sub-agent's call, as the task tool reports it
        child = ev.UsageReported("scripted:test", 10_000, 500)
        recorder.record(ev.SubagentEvent("agent-1", "explore", "call_1", child))
        live = render_status(screen.status, 200).plain
        session_id = screen.controller.id
    assert session_id is not None
    loaded = app.controller.store.load(session_id)
    resumed, _ = make_app(tmp_path, [], [], loaded=loaded)
    async with resumed.run_test(size=SIZE) as pilot:
        screen = chat(resumed)
        await pilot.pause()
        bar = render_status(screen.status, 200).plain
        assert "ctx 26%" in live and "ctx 26%" in bar  # 52,000 of 200,000, not 0% after a resume
        assert screen.status.per_agent["explore"].input_tokens == 10_000
        assert "explore $0.0375" in bar and "main $0.1800" in bar
