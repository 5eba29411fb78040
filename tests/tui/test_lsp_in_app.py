"""Language servers in the app (Pilot, the real basedpyright): an edit's result carries
the diagnostics it introduced, the status bar shows `LSP basedpyright`, `/lsp` lists
the servers, and the lsp_* tools join the model's tools (from the next turn) once the server runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from tests.tools.lsp.servers_for_tests import basedpyright, pyright_manager
from tests.tui.test_chat_flows import chat, send
from tests.tui.test_mcp_in_app import status_text
from tests.waiting import until
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.storage.sessions import SessionStore
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.lsp.family import LspTools
from wyckoff_cli.tui.app import WyckoffApp

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        basedpyright() is None, reason="basedpyright is not installed (the test extra has it)"
    ),
]


async def test_an_edit_in_the_app_reports_its_type_error_and_the_bar_shows_lsp(tmp_path: Path) -> None:
    root = Path(os.path.realpath(tmp_path))
    rounds: list[Any] = [
        {
            "tool_calls": [
                {"name": "write_file", "args": {"path": "bad.py", "content": 'count: int = "many"\n'}}
            ]
        },
        {"text": "Written."},
        {"text": "Noted."},
    ]
    provider = ScriptedProvider(rounds, model="scripted:test")
    lsp = LspTools(pyright_manager(root, diagnostics_wait_ms=10_000, startup_wait_ms=60_000))
    builder = SessionBuilder(
        open_workspace(root),
        provider_factory=lambda _model: provider,
        tools_factory=default_registry,
        manage_context=False,
        fixed_prompt="SYSTEM",
        store=SessionStore(),
        extra_allow=["write_file"],
    )
    builder.lsp = lsp
    controller = ChatController(builder, model="scripted:test", mode="default")
    app = WyckoffApp(controller)
    async with app.run_test(size=(140, 40)) as pilot:  # wide: the bar drops nothing
        screen = chat(app)
        await send(pilot, "write it")
        await until(
            pilot,
            lambda: len(provider.requests) == 2 and "LSP basedpyright" in status_text(screen),
            observe=lambda: (len(provider.requests), status_text(screen)),
        )
        result = provider.requests[1].messages[-1]
        text = "".join(getattr(part, "text", "") for part in result.parts)
        assert "Diagnostics this change introduced (basedpyright):" in text
        assert 'bad.py:1:14: error: Type "Literal[\'many\']" is not assignable to declared type "int"' in text
        # a turn's tools are fixed when it starts (the prompt cache): they join the next turn
        assert "lsp_definition" not in [spec.name for spec in provider.requests[0].tools]
        await send(pilot, "and now?")
        await until(pilot, lambda: len(provider.requests) == 3)
        offered = [spec.name for spec in provider.requests[2].tools]
        assert {"lsp_definition", "lsp_references", "lsp_rename"} <= set(offered)
        await send(pilot, "/lsp")
        await until(pilot, lambda: bool(list(screen.query(Static).filter(".command-output"))))
        shown = "\n".join(str(s.render()) for s in screen.query(Static).filter(".command-output"))
        assert "basedpyright" in shown and "running" in shown and "1 file(s) open" in shown
    await lsp.manager.close()
    assert lsp.manager.running() == []
