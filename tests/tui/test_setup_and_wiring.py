"""The setup screen stores a pasted key privately; `wyckoff chat` wiring works end to end."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tui.support import make_app
from tests.tui.test_chat_flows import send, settle
from wyckoff_cli.cli.sessions_cmd import export_text
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.credentials import load_credentials
from wyckoff_cli.tui.app import WyckoffApp
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.screens.setup import SetupScreen


async def test_pasted_key_is_saved_with_mode_0600_and_the_chat_opens(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [], model="anthropic:claude-sonnet-4-5")  # no key is set
    async with app.run_test(size=(100, 40)) as pilot:
        assert isinstance(app.screen, SetupScreen)
        await pilot.press("enter")  # the first provider: anthropic
        await pilot.press(*"sk-ant-test-0123456789")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ChatScreen)
    assert load_credentials() == {"anthropic": "sk-ant-test-0123456789"}
    assert paths.credentials_file().stat().st_mode & 0o777 == 0o600
    assert "sk-ant" not in paths.config_file().read_text() if paths.config_file().exists() else True


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
        await pilot.pause(0.2)
        notices = [str(n.render()) for n in app.screen.query(NoticeLine)]
        assert any("shell sandbox off" in n and "credentials" in n for n in notices), notices
