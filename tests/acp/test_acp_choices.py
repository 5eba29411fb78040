"""Modes and models over ACP, through the package's client side: `/mode` and `/model`
answer; `/mode X` and `/model X` typed as commands tell the client
(`current_mode_update`, `config_option_update`); what was chosen survives
`session/load` in another connection; `usage_update.size` is the catalogue's window."""

from __future__ import annotations

from pathlib import Path

import acp
import pytest
from acp import schema

from tests.acp.test_acp import MODEL, Editor, wyckoff_acp
from tests.acp.test_acp_commands import say
from wyckoff_cli.testing.fake_server import FakeServer

OTHER = "anthropic:claude-haiku-4-5"


@pytest.mark.slow
async def test_mode_and_model_commands_tell_the_client_and_survive_a_load(workspace: Path) -> None:
    with FakeServer() as server:
        server.script({"text": "Hello."})
        editor = Editor()
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            sid = new.session_id
            assert "Permission mode: default" in await say(conn, editor, sid, "/mode")
            assert f"Model: {MODEL}" in await say(conn, editor, sid, "/model")

            await say(conn, editor, sid, "/mode plan")
            assert [u.current_mode_id for u in editor.of(schema.CurrentModeUpdate)] == ["plan"]
            await say(conn, editor, sid, f"/model {OTHER}")
            (changed,) = editor.of(schema.ConfigOptionUpdate)
            assert [o.current_value for o in changed.config_options] == [OTHER]
            assert OTHER in [o.value for o in changed.config_options[0].options]  # type: ignore[union-attr]

            await say(conn, editor, sid, "hi")
            assert editor.of(schema.UsageUpdate)[-1].size == 200_000  # the catalogue's, not a default
        assert server.requests[-1].body["model"] == "claude-haiku-4-5"

        loader = Editor()
        async with wyckoff_acp(loader, server, workspace) as conn2:
            await conn2.initialize(protocol_version=acp.PROTOCOL_VERSION)
            loaded = await conn2.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    assert loaded.modes is not None and loaded.modes.current_mode_id == "plan"
    (option,) = loaded.config_options or []
    assert option.current_value == OTHER


@pytest.mark.slow
async def test_modes_set_by_the_client_survive_a_load_too(workspace: Path) -> None:
    with FakeServer() as server:
        editor = Editor()
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            sid = (await conn.new_session(cwd=str(workspace), mcp_servers=[])).session_id
            await conn.set_session_mode(mode_id="auto-edit", session_id=sid)
            await conn.set_config_option(config_id="model", session_id=sid, value=OTHER)
            assert [u.current_mode_id for u in editor.of(schema.CurrentModeUpdate)] == ["auto-edit"]
        loader = Editor()
        async with wyckoff_acp(loader, server, workspace) as conn2:
            await conn2.initialize(protocol_version=acp.PROTOCOL_VERSION)
            loaded = await conn2.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
            refused = await say(conn2, loader, sid, "/mode nonsense")  # a clear answer, no change
            assert "nonsense" in refused and not loader.of(schema.CurrentModeUpdate)
    assert loaded.modes is not None and loaded.modes.current_mode_id == "auto-edit"
    assert (loaded.config_options or [])[0].current_value == OTHER


@pytest.mark.slow
async def test_session_new_offers_every_configured_model(workspace: Path) -> None:
    from wyckoff_cli.storage import paths

    config = paths.config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        f'fallbacks = ["{OTHER}"]\n\n[models.quick]\nprovider = "anthropic"\nmodel = "claude-haiku-4-5"\n',
        encoding="utf-8",
    )
    with FakeServer() as server:
        editor = Editor()
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    (option,) = new.config_options or []
    assert option.current_value == MODEL
    assert [o.value for o in option.options] == [MODEL, OTHER, "quick"]  # type: ignore[union-attr]
