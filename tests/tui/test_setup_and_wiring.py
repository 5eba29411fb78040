"""The setup screen stores a pasted key privately; `wyckoff chat` wiring works end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Input, OptionList, Static

from tests.tui.support import make_app
from tests.tui.test_chat_flows import send, settle
from tests.waiting import until
from wyckoff_cli.cli.sessions_cmd import export_text
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.credentials import load_credentials
from wyckoff_cli.tui.app import WyckoffApp
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.screens.setup import LIST_KEYS, PASTE_KEYS, SetupScreen
from wyckoff_cli.tui.widgets.entries import NoticeLine


async def test_pasted_key_is_saved_with_mode_0600_and_the_chat_opens(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [], model="anthropic:claude-sonnet-4-5")  # no key is set
    async with app.run_test(size=(100, 40)) as pilot:
        assert isinstance(app.screen, SetupScreen)
        await pilot.press("enter")  # the first provider: anthropic
        await pilot.press(*"sk-ant-test-0123456789")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)
        await pilot.pause()
        notices = [str(n.render()) for n in app.screen.query(NoticeLine)]
        assert any(f"Saved the anthropic key to {paths.credentials_file()} (mode 0600)" in n for n in notices)
    assert load_credentials() == {"anthropic": "sk-ant-test-0123456789"}
    assert paths.credentials_file().stat().st_mode & 0o777 == 0o600
    assert "sk-ant" not in paths.config_file().read_text() if paths.config_file().exists() else True


def _rendered(widget: Static) -> str:
    console = Console(width=100)
    with console.capture() as capture:
        console.print(widget.content)
    return capture.get()


def _screen_text(screen: SetupScreen) -> str:
    return "\n".join(str(w.render()) for w in screen.query(Static))


async def test_setup_names_the_model_asked_for_and_offers_its_provider_first(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [], model="gemini:gemini-2.5-flash")
    async with app.run_test(size=(110, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        options = screen.query_one(OptionList)
        first = options.get_option_at_index(0)
        assert first.id == "gemini" and "needed for gemini:gemini-2.5-flash" in str(first.prompt)
        text = _screen_text(screen) + "".join(
            str(options.get_option_at_index(i).prompt) for i in range(options.option_count)
        )
        assert "claude-sonnet-4-5" not in text  # no example names a model nobody asked for
        assert LIST_KEYS in text and "Enter paste its key" in text  # says what Enter does
        await pilot.press("enter")
        assert PASTE_KEYS in _screen_text(screen)
        await pilot.press("escape")  # back to the list, not out of the app
        assert app.screen is screen and not screen.has_class("-typing")
        assert LIST_KEYS in _screen_text(screen)


async def test_a_key_for_another_provider_is_saved_and_setup_stays_until_the_model_works(
    tmp_path: Path,
) -> None:
    app, _ = make_app(tmp_path, [], [], model="anthropic:claude-sonnet-4-5")
    async with app.run_test(size=(110, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        await pilot.press("down", "enter")  # the second entry: openai
        await pilot.press(*"sk-openai-key", "enter")
        await pilot.pause()
        assert app.screen is screen  # anthropic still has no key: a chat could only fail
        message = str(screen.query_one("#message", Static).render())
        assert f"Saved the openai key to {paths.credentials_file()}" in message
        assert "anthropic:claude-sonnet-4-5 still cannot start" in message
        table = _rendered(screen.query_one("#providers", Static))  # the table is current
        assert re.search(r"openai +OPENAI_API_KEY +set", table), table
        assert re.search(r"anthropic +ANTHROPIC_API_KEY +missing", table)
        await pilot.press("up", "enter", *"sk-ant-key", "enter")
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)
    assert load_credentials() == {"openai": "sk-openai-key", "anthropic": "sk-ant-key"}


@pytest.mark.parametrize("keys", [["escape"], ["ctrl+c"], ["ctrl+c", "ctrl+c", "ctrl+c"], ["ctrl+q"]])
async def test_leaving_setup_quits_with_how_to_set_the_key_and_no_toasts(
    tmp_path: Path, keys: list[str]
) -> None:
    app, _ = make_app(tmp_path, [], [], model="anthropic:claude-sonnet-4-5")
    async with app.run_test(size=(100, 40)) as pilot:
        assert isinstance(app.screen, SetupScreen)
        await pilot.press(*keys)
        await pilot.pause()
        assert not app._notifications  # Textual's "press ctrl+q to quit" never shows
        assert app.chat is None  # no chat that could only fail
    assert app.farewell is not None
    assert "export ANTHROPIC_API_KEY=" in app.farewell and "anthropic:claude-sonnet-4-5" in app.farewell


async def test_ctrl_c_in_the_paste_field_clears_it_first(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [], model="anthropic:claude-sonnet-4-5")
    async with app.run_test(size=(100, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, SetupScreen)
        await pilot.press("enter", *"sk-wrong")
        await pilot.press("ctrl+c")
        assert screen.query_one(Input).value == "" and app.screen is screen
        assert app.farewell is None


def test_a_responses_model_uses_the_key_pasted_for_openai(tmp_path: Path) -> None:
    from wyckoff_cli.session.models import check_model
    from wyckoff_cli.storage.config import Config
    from wyckoff_cli.storage.credentials import save_credential

    assert check_model("openai-responses:gpt-5", Config()) is not None
    save_credential("openai", "sk-openai")
    assert check_model("openai-responses:gpt-5", Config()) is None


async def test_chat_deps_from_config_run_a_turn_and_save_the_session(
    tmp_path: Path, workspace: Path, monkeypatch: object
) -> None:
    script = tmp_path / "s.json"
    script.write_text(
        json.dumps(
            {"rounds": [{"text": "hello from the app", "usage": {"input_tokens": 10, "output_tokens": 3}}]}
        )
    )
    builder = SessionBuilder(open_workspace(workspace), cwd=workspace)
    controller = ChatController(builder, model=f"scripted:{script}", exporter=export_text)
    app = WyckoffApp(controller)
    async with app.run_test(size=(100, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        await send(pilot, "hi there")
        await settle(pilot, screen)
        assert screen.router.last_done is not None and screen.router.last_done.text == "hello from the app"
        session_id = screen.controller.id
        assert session_id is not None
        assert "Wyckoff" in screen.controller.system_prompt  # the assembled coding-assistant prompt
    loaded = controller.store.load(session_id)
    assert [m.text for m in loaded.history][-1] == "hello from the app"
    history_file = controller.input_history_file
    assert history_file is not None and json.loads(history_file.read_text().splitlines()[-1]) == "hi there"


async def test_the_app_says_when_the_shell_sandbox_is_off(tmp_path: Path) -> None:
    from wyckoff_cli.providers.scripted import ScriptedProvider
    from wyckoff_cli.session.builder import SessionBuilder, open_workspace
    from wyckoff_cli.session.controller import ChatController
    from wyckoff_cli.storage.sessions import SessionStore
    from wyckoff_cli.tui.app import WyckoffApp
    from wyckoff_cli.tui.widgets.entries import NoticeLine

    workspace = open_workspace(tmp_path)
    workspace.sandbox = "off"
    provider = ScriptedProvider([{"text": "hi"}], model="scripted:test")
    builder = SessionBuilder(
        workspace, provider_factory=lambda _m: provider, manage_context=False, store=SessionStore()
    )
    app = WyckoffApp(ChatController(builder, model="scripted:test", mode="default"))
    async with app.run_test(size=(120, 30)) as pilot:
        await until(
            pilot, lambda: any("shell sandbox off" in str(n.render()) for n in app.screen.query(NoticeLine))
        )
        notices = [str(n.render()) for n in app.screen.query(NoticeLine)]
        assert any("shell sandbox off" in n and "credentials" in n for n in notices), notices
