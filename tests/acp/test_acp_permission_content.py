"""`session/request_permission` shows what is approved: an edit's or a write's diff
(`content` of type `diff`, with the file's absolute path, the old and the new text) and
a command's text, driven through the package's client side."""

from __future__ import annotations

from pathlib import Path

import acp
import pytest
from acp import schema
from acp.helpers import text_block

from tests.acp.test_acp import Editor, wyckoff_acp
from wyckoff_cli.testing.fake_server import FakeServer


def diffs(call: schema.ToolCallUpdate) -> list[schema.FileEditToolCallContent]:
    return [c for c in call.content or [] if isinstance(c, schema.FileEditToolCallContent)]


def texts(call: schema.ToolCallUpdate) -> str:
    return "\n".join(
        c.content.text
        for c in call.content or []
        if isinstance(c, schema.ContentToolCallContent) and isinstance(c.content, schema.TextContentBlock)
    )


@pytest.mark.slow
async def test_edits_writes_and_commands_are_approved_with_what_they_do(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("old line\nkeep\n", encoding="utf-8")
    (workspace / "code.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "write_file", "args": {"path": "notes.txt", "content": "new line\n"}}]},
            {
                "tool_calls": [
                    {"name": "edit_file", "args": {"path": "code.py", "old": "y = 2", "new": "y = 3"}}
                ]
            },
            {"tool_calls": [{"name": "write_file", "args": {"path": "fresh.txt", "content": "hello\n"}}]},
            {"tool_calls": [{"name": "run_shell", "args": {"command": "echo one && echo two"}}]},
            {"text": "All done."},
        )
        editor = Editor(answers=["allow", "allow", "deny", "allow"])
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            done = await conn.prompt(session_id=new.session_id, prompt=[text_block("change things")])
    assert done.stop_reason == "end_turn"
    write, edit, fresh, shell = editor.permissions

    (written,) = diffs(write)
    assert written.path == str(workspace.resolve() / "notes.txt")
    assert (written.old_text, written.new_text) == ("old line\nkeep\n", "new line\n")

    (edited,) = diffs(edit)
    assert edited.path == str(workspace.resolve() / "code.py")
    assert (edited.old_text, edited.new_text) == ("y = 2", "y = 3")

    (created,) = diffs(fresh)
    assert created.old_text is None and created.new_text == "hello\n"
    assert not (workspace / "fresh.txt").exists()  # denied

    assert not diffs(shell) and "echo one && echo two" in texts(shell)
    assert str(workspace.resolve()) in texts(shell)  # where it runs

    # the completed write shows the text it replaced, not the file after it
    completed = [
        c
        for u in editor.of(schema.ToolCallProgress)
        if u.status == "completed"
        for c in (u.content or [])
        if isinstance(c, schema.FileEditToolCallContent)
    ]
    assert [(c.old_text, c.new_text) for c in completed] == [
        ("old line\nkeep\n", "new line\n"),
        ("y = 2", "y = 3"),
    ]
