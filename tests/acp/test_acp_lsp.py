"""Language servers over ACP (issue 31): an edit made in an ACP session ends with the
diagnostics it introduced, from the real basedpyright of the test extra, as in the app
and headless."""

from __future__ import annotations

import json
from pathlib import Path

import acp
import pytest

from tests.acp.test_acp import Editor, wyckoff_acp
from tests.acp.test_acp_commands import say
from tests.tools.lsp.servers_for_tests import basedpyright
from wyckoff_cli.storage import paths
from wyckoff_cli.testing.fake_server import FakeServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        basedpyright() is None, reason="basedpyright is not installed (the test extra has it)"
    ),
]


async def test_an_edit_over_acp_returns_the_diagnostics_it_introduced(workspace: Path) -> None:
    paths.config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.config_file().write_text(
        f"[lsp]\nstartup_wait_ms = 60000\ndiagnostics_wait_ms = 10000\n\n"
        f"[lsp.servers.basedpyright]\ncommand = {json.dumps(basedpyright())}\n",
        encoding="utf-8",
    )
    (workspace / "pyrightconfig.json").write_text('{"typeCheckingMode": "standard"}\n', encoding="utf-8")
    with FakeServer() as server:
        server.script(
            {
                "tool_calls": [
                    {"name": "write_file", "args": {"path": "count.py", "content": 'n: int = "many"\n'}}
                ]
            },
            {"text": "Wrote count.py."},
        )
        editor = Editor()
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            await conn.set_session_mode(mode_id="auto-edit", session_id=new.session_id)
            assert "Wrote count.py." in await say(conn, editor, new.session_id, "write count.py")
        sent_back = json.dumps(server.requests[-1].body["messages"][-1])
    assert "Diagnostics this change introduced (basedpyright)" in sent_back
    assert "count.py:1:" in sent_back
