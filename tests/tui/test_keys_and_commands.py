"""Keys and slash commands of the chat screen."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat, send, settle, wait_for_screen
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.session.controller import INIT_PROMPT
from wyckoff_cli.storage.permissions import save_rule
from wyckoff_cli.storage.sessions import SessionStore
from wyckoff_cli.tui.screens.sessions import SessionPicker
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.prompt_input import PromptInput
from wyckoff_cli.tui.widgets.thinking import ThinkingPane


def notices(screen: Any) -> list[str]:
    return [n.message for n in screen.query(NoticeLine)]


async def test_up_edits_a_queued_message_and_walks_history(tmp_path: Path) -> None:
    rounds: list[Any] = [[{"text": "busy"}, {"sleep": 1.5}], {"text": "ok"}]
    app, provider = make_app(tmp_path, rounds, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        prompt = screen.query_one(PromptInput)
        await send(pilot, "first")
        await until(pilot, lambda: screen.router.answer_text == "busy")  # the first turn is running
        await send(pilot, "second with a typo")
        assert screen.queued == ["second with a typo"]
        await pilot.press("up")
        assert prompt.text == "second with a typo" and screen.queued == []
        prompt.load_text("second, fixed")
        await pilot.press("enter")
        assert screen.queued == ["second, fixed"]
        await until(pilot, lambda: len(provider.requests) == 2 and not screen.busy)
        await settle(pilot, screen)
        assert provider.requests[1].messages[-1].text == "second, fixed"
        prompt.load_text("")
        await pilot.press("up")
        assert prompt.text == "second, fixed"
        await pilot.press("up")
        assert prompt.text == "second with a typo"
        await pilot.press("down", "down")
        assert prompt.text == ""


async def test_at_path_completion_is_fuzzy_and_respects_gitignore(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "parser.py").write_text("")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "parser.py").write_text("")
    (tmp_path / ".gitignore").write_text("build/\n")
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        prompt = screen.query_one(PromptInput)
        prompt.focus()
        await pilot.press(*"look at @prs")
        await pilot.pause()
        assert [m[0] for m in prompt._matches] == ["@src/parser.py "]
        await pilot.press("tab")
        assert prompt.text == "look at @src/parser.py "
        prompt.load_text("")
        await pilot.press("/", "c", "o")
        await pilot.pause()
        assert [m[0].strip() for m in prompt._matches] == ["/compact", "/cost"]


async def test_ctrl_o_toggles_thinking_and_ctrl_d_quits(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [{"thinking": "deep thoughts", "text": "ok"}], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "think")
        await settle(pilot, screen)
        pane = screen.query_one(ThinkingPane)
        assert not pane.expanded
        await pilot.press("ctrl+o")
        assert pane.expanded
        await pilot.press("ctrl+o")
        assert not pane.expanded
        await pilot.press("ctrl+d")
        await pilot.pause()
    assert not app.is_running


async def test_ctrl_c_clears_then_asks_then_quits(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        prompt = screen.query_one(PromptInput)
        prompt.load_text("draft")
        await pilot.press("ctrl+c")
        assert prompt.text == "" and app.is_running
        await pilot.press("ctrl+c")
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert not app.is_running


async def test_clear_export_and_resume_commands(tmp_path: Path) -> None:
    exported: list[tuple[str, str]] = []

    def export(store: SessionStore, session_id: str, fmt: str) -> str:
        exported.append((session_id, fmt))
        return f"# session {session_id}\n"

    app, _ = make_app(tmp_path, [{"text": "one"}, {"text": "two"}], [], exporter=export)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "first session")
        await settle(pilot, screen)
        first_id = screen.controller.id
        await send(pilot, "/export notes.md")
        await settle(pilot, screen)
        assert exported == [(first_id, "md")]
        assert (tmp_path / "notes.md").read_text() == f"# session {first_id}\n"
        await send(pilot, "/clear")
        await settle(pilot, screen)
        assert screen.controller.id is None and not list(screen.query(UserMessage))
        await send(pilot, "second session")
        await settle(pilot, screen)
        assert screen.controller.id != first_id
        await send(pilot, "/resume")
        picker = await wait_for_screen(pilot, SessionPicker)
        assert picker.query_one("OptionList").option_count == 2
        await pilot.press("escape")
        await send(pilot, f"/resume {first_id}")
        await settle(pilot, screen)
        assert screen.controller.id == first_id
        assert [w.text for w in screen.query(UserMessage)] == ["first session"]


async def test_compact_memory_permissions_and_init(tmp_path: Path) -> None:
    compacted: list[str | None] = []
    save_rule("run_shell(pytest*)", root=tmp_path)
    app, provider = make_app(
        tmp_path,
        [{"text": "hi"}, {"text": "I wrote AGENTS.md."}, {"text": "I wrote AGENTS.md."}, {"text": "done"}],
        [],
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "/compact")
        assert "Nothing to compact yet" in notices(screen)
        await send(pilot, "hello")
        await settle(pilot, screen)

        async def fake_compact(
            conversation: Any, system_prompt: str, focus: str | None = None
        ) -> ev.Compacted:
            compacted.append(focus)
            return ev.Compacted(4, 2, 1000, 200)

        screen.controller.session.runtime.compact = fake_compact  # type: ignore[method-assign]
        await send(pilot, "/compact keep the API notes")
        await settle(pilot, screen)
        assert compacted == ["keep the API notes"]
        assert any("Context summarised: 4 → 2 messages" in n for n in notices(screen))
        await send(pilot, "/memory tabs")
        await send(pilot, "/permissions remove run_shell(pytest*)")
        assert "Removed run_shell(pytest*) from 1 list(s)" in notices(screen)
        await send(pilot, "/permissions")
        await send(pilot, "/init")
        await settle(pilot, screen)
        sent = provider.requests[-1].messages[-1]
        assert sent.role == "user" and sent.text == INIT_PROMPT
        assert [w.text for w in screen.query(UserMessage)][-1] == "/init"
        assert screen.router.last_done is not None and screen.router.last_done.text == "I wrote AGENTS.md."


async def test_resume_refuses_a_session_another_process_writes(tmp_path: Path) -> None:
    import subprocess
    import sys

    app, _ = make_app(tmp_path, [{"text": "one"}, {"text": "two"}], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "first session")
        await settle(pilot, screen)
        first_id = screen.controller.id
        assert first_id is not None
        directory = screen.controller.store.find(first_id).directory
        await send(pilot, "/clear")
        await settle(pilot, screen)
        hold = (
            "import sys, time\nfrom pathlib import Path\n"
            "from wyckoff_cli.storage.session_lock import SessionLock\n"
            "lock = SessionLock.acquire(Path(sys.argv[1]), 'x', command='wyckoff run --continue go')\n"
            "print('held', flush=True)\ntime.sleep(60)\n"
        )
        holder = subprocess.Popen(
            [sys.executable, "-c", hold, str(directory)], stdout=subprocess.PIPE, text=True
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            await send(pilot, f"/resume {first_id}")
            await settle(pilot, screen)
            assert screen.controller.id != first_id  # not resumed
            assert any(
                f"is in use by another Wyckoff process (pid {holder.pid}: wyckoff run --continue go" in n
                for n in notices(screen)
            )
            assert app.is_running
        finally:
            holder.kill()
            holder.communicate(timeout=30)
