"""`/review` over ACP: the editor sends the command, the findings come back as the
agent's message."""

from __future__ import annotations

from pathlib import Path

import acp

from tests.acp.test_acp import Editor, wyckoff_acp
from tests.acp.test_acp_commands import say
from tests.runtime.review.support import make_repo, plant_bug, planted_bug_answers
from wyckoff_cli.testing.fake_server import FakeServer


async def test_review_works_over_acp(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    plant_bug(root)
    with FakeServer() as server:
        server.script(*planted_bug_answers(confirm=True))
        editor = Editor()
        async with wyckoff_acp(editor, server, root) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(root), mcp_servers=[])
            shown = await say(conn, editor, new.session_id, "/review")
    assert "average divides by len - 1" in shown and "calc.py:3" in shown
    assert server.pending == 0
