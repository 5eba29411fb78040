"""`session/load` replays exactly what the person saw, driven through the package's
client side: what they typed (not the mode note sent before it), every answer — each
apart from the one before it, and a cancelled turn's partial text — and the edits with
their diffs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import acp
import pytest
from acp import schema
from acp.helpers import text_block

from tests.acp.test_acp import Editor, wyckoff_acp
from wyckoff_cli.testing.fake_server import FakeServer


def agent_text(editor: Editor) -> str:
    return "".join(u.content.text for u in editor.of(schema.AgentMessageChunk))


@pytest.mark.slow
async def test_load_replays_what_the_person_saw(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("old line\n", encoding="utf-8")
    (workspace / "code.py").write_text("y = 2\n", encoding="utf-8")
    with FakeServer() as server:
        server.script(
            {
                "text": "Writing.",
                "tool_calls": [
                    {"name": "write_file", "args": {"path": "notes.txt", "content": "new line\n"}}
                ],
            },
            {"text": "Wrote it."},
            {
                "tool_calls": [
                    {"name": "edit_file", "args": {"path": "code.py", "old": "y = 2", "new": "y = 3"}}
                ]
            },
            {"text": "Edited."},
            {"text": "A long answer " * 400, "chunk_size": 20, "chars_per_second": 200},
        )
        editor = Editor()
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            sid = new.session_id
            await conn.set_session_mode(
                mode_id="auto-edit", session_id=sid
            )  # a note goes with the next message
            await conn.prompt(session_id=sid, prompt=[text_block("write it")])
            await conn.prompt(session_id=sid, prompt=[text_block("edit it")])
            live = agent_text(editor)
            assert "Writing.\n\nWrote it." in live  # the second answer apart from the first
            editor.first_chunk.clear()
            turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("a long one")]))
            await asyncio.wait_for(editor.first_chunk.wait(), 20)
            await until_text(editor, "A long answer")
            await conn.cancel(session_id=sid)
            cancelled = await asyncio.wait_for(turn, 20)
            assert cancelled.stop_reason == "cancelled"
            # the cut stream reported no usage: the turn says what it estimates it used
            usage = cancelled.usage
            assert usage is not None and usage.field_meta == {"estimated": True}
            assert usage.input_tokens > 0 and usage.output_tokens >= len("A long answer") // 4
        sent = str(server.requests[0].body["messages"][0]["content"])
        assert "system-reminder" in sent  # the model was told of the mode; the person never typed it

        loader = Editor()
        async with wyckoff_acp(loader, server, workspace) as conn2:
            await conn2.initialize(protocol_version=acp.PROTOCOL_VERSION)
            await conn2.load_session(cwd=str(workspace), session_id=sid, mcp_servers=[])
    users = [u.content.text for u in loader.of(schema.UserMessageChunk)]
    assert users == ["write it", "edit it", "a long one"]
    replayed = agent_text(loader)
    assert "Writing.\n\nWrote it." in replayed and "Edited." in replayed
    assert "A long answer" in replayed and replayed.rstrip().endswith("> Interrupted.")
    finals = [u for u in loader.of(schema.ToolCallProgress) if u.status == "completed"]
    assert len(finals) == 2
    overwrite = finals[0].content[0]  # type: ignore[index]
    assert isinstance(overwrite, schema.ContentToolCallContent)
    assert "-old line" in overwrite.content.text and "+new line" in overwrite.content.text  # type: ignore[union-attr]
    (edit,) = finals[1].content or []
    assert isinstance(edit, schema.FileEditToolCallContent)
    assert (edit.old_text, edit.new_text) == ("y = 2", "y = 3")
    assert finals[0].raw_output == {"output": finals[0].raw_output["output"], "diff": overwrite.content.text}  # type: ignore[index,union-attr]


async def until_text(editor: Editor, text: str) -> None:
    from tests.waiting import eventually

    await eventually(lambda: text in agent_text(editor), 20)
