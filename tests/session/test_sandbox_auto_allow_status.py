"""Issue 27: the status bar and `/permissions` say when sandbox auto-allow is on."""

from __future__ import annotations

from pathlib import Path

import pytest

from wyckoff_cli.core import events as ev
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.sessions import SessionStore
from wyckoff_cli.tools.permissions.sandbox import probe

pytestmark = pytest.mark.skipif(probe() is not None, reason=f"the sandbox cannot start here: {probe()}")


def controller(workspace: Path, mode: str) -> ChatController:
    provider = ScriptedProvider([{"text": "ok"}])
    builder = SessionBuilder(
        open_workspace(workspace), provider_factory=lambda _m: provider, manage_context=False,
        fixed_prompt="SYSTEM", store=SessionStore(),
    )  # fmt: skip
    return ChatController(builder, model="scripted:none", mode=mode)


async def permissions_text(chat: ChatController) -> str:
    events = [e async for e in chat.handle(rq.Permissions())]
    return "\n".join(e.text or "" for e in events if isinstance(e, ev.CommandOutput))


async def test_auto_allow_from_config_shows_in_the_status_bar_and_permissions(workspace: Path) -> None:
    paths.config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.config_file().write_text("[shell]\nauto_allow = true\n")
    chat = controller(workspace, "default")
    assert "Sandbox auto-allow: on (mode default)" in await permissions_text(chat)  # before the session
    assert chat.session is not None
    assert chat.status.auto_allow == "sandbox auto-allow"
    assert ("mode", "default · sandbox auto-allow") in chat.status.segments()
    chat.handle_now(rq.SetMode("plan"))
    assert chat.status.auto_allow == "" and ("mode", "plan") in chat.status.segments()
    assert "Sandbox auto-allow: off" in await permissions_text(chat)
    await chat.aclose()


async def test_the_auto_mode_turns_it_on(workspace: Path) -> None:
    chat = controller(workspace, "default")
    assert chat.session is not None
    assert chat.status.auto_allow == ""
    assert "Sandbox auto-allow: off" in await permissions_text(chat)
    chat.handle_now(rq.SetMode("auto"))
    assert chat.status.auto_allow == "sandbox auto-allow"
    assert "Sandbox auto-allow: on (mode auto)" in await permissions_text(chat)
    await chat.aclose()
