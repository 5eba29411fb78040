"""Slash commands over ACP, driven through the agent-client-protocol package's client
side: `/diff`, `/undo`, `/redo` and `/rewind` work on a real work tree (real
checkpoints), and ACP advertises exactly the commands of the table it offers, each of
which answers without "not available"."""

from __future__ import annotations

import subprocess
from pathlib import Path

import acp
import pytest
from acp import schema
from acp.helpers import text_block

from tests.acp.test_acp import Editor, until, wyckoff_acp
from wyckoff_cli.session.commands import ACP, offered_by
from wyckoff_cli.testing.fake_server import FakeServer


async def say(conn: object, editor: Editor, session_id: str, text: str) -> str:
    """Send one prompt; the agent's message text it produced."""
    before = len(editor.updates)
    done = await conn.prompt(session_id=session_id, prompt=[text_block(text)])  # type: ignore[attr-defined]
    assert done.stop_reason == "end_turn"
    return "".join(
        u.content.text for _, u in editor.updates[before:] if isinstance(u, schema.AgentMessageChunk)
    )


@pytest.mark.slow
async def test_undo_redo_diff_and_rewind_work_over_acp(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "kept.txt").write_text("kept\n", encoding="utf-8")
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "write_file", "args": {"path": "b.txt", "content": "new line\n"}}]},
            {"text": "Wrote b.txt."},
            {"text": "Hello again."},
        )
        editor = Editor()
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            sid = new.session_id
            await conn.set_session_mode(mode_id="auto-edit", session_id=sid)
            assert "Wrote b.txt." in await say(conn, editor, sid, "write b.txt")
            assert (workspace / "b.txt").read_text(encoding="utf-8") == "new line\n"

            diff = await say(conn, editor, sid, "/diff")
            assert "+new line" in diff and "b.txt" in diff

            undone = await say(conn, editor, sid, "/undo")
            assert "Undo done" in undone and "b.txt" in undone  # the preview, then what was done
            assert not (workspace / "b.txt").exists()
            assert (workspace / "kept.txt").read_text(encoding="utf-8") == "kept\n"

            redone = await say(conn, editor, sid, "/redo")
            assert "Redo done" in redone and (workspace / "b.txt").exists()

            rewound = await say(conn, editor, sid, "/rewind 1 both")
            assert "Conversation rewound" in rewound and "Code restored" in rewound
            assert not (workspace / "b.txt").exists()

            # /undo right after /rewind takes the rewind's code change back (not "Nothing to undo")
            unrewound = await say(conn, editor, sid, "/undo")
            assert (
                "Undo done" in unrewound and (workspace / "b.txt").read_text(encoding="utf-8") == "new line\n"
            )
            again = await say(conn, editor, sid, "/undo")  # then the steps as they stood before it
            assert "Undo done" in again and not (workspace / "b.txt").exists()

            assert "Hello again." in await say(conn, editor, sid, "hello")
        # the rewound message is gone from what the model sees next
        last = str(server.requests[-1].body["messages"])
        assert "hello" in last and "write b.txt" not in last


@pytest.mark.slow
async def test_acp_advertises_exactly_the_commands_that_work_over_it(workspace: Path) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "write_file", "args": {"path": "AGENTS.md", "content": "# Agents\n"}}]},
            {"text": "Wrote AGENTS.md."},
            {"when": "Review the ", "text": "Reported 0 findings."},  # /review's reviewer (docs/REVIEW.md)
        )
        editor = Editor()
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            sid = new.session_id
            await conn.set_session_mode(mode_id="auto-edit", session_id=sid)
            await until(lambda: bool(editor.of(schema.AvailableCommandsUpdate)))
            advertised = [c.name for c in editor.of(schema.AvailableCommandsUpdate)[0].available_commands]
            assert advertised == [c.name for c in offered_by(ACP)]
            answers: dict[str, str] = {}
            for name in advertised:
                answers[name] = answer = await say(conn, editor, sid, f"/{name}")
                assert answer.strip(), f"/{name} answered nothing"
                for refusal in ("not available", "not a command", "Unknown command"):
                    assert refusal not in answer, f"/{name}: {answer}"
            assert "Wrote AGENTS.md." in answers["init"]  # a turn
            assert "Conversation rewound" in answers["rewind"]  # back to before /init: AGENTS.md goes
            assert answers["cost"].startswith("No model calls") and "Exported to" in answers["export"]
            assert (
                "Review of the uncommitted changes" in answers["review"]
            )  # what the commands before it left
            for name in ("quit", "help", "clear", "resume", "top"):  # not offered: said so, nothing sent
                assert "is not available here" in await say(conn, editor, sid, f"/{name}")
        assert len(server.requests) == 3  # only /init (two rounds) and /review called the model
        assert "Review the uncommitted changes" in str(server.requests[2].body["messages"])
