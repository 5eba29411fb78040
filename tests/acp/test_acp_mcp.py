"""`wyckoff acp`: MCP servers the editor passes with `session/new` are started and waited
for, so the model's first request has their tools; their calls ask the editor."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import acp
import pytest
from acp import schema
from acp.helpers import text_block

from tests.acp.test_acp import MODEL, Editor, agent_env, wyckoff_acp
from tests.tools.mcp.conftest import DEMO
from wyckoff_cli.testing.fake_server import FakeServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


async def test_editor_mcp_servers_join_the_session(workspace: Path) -> None:
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "mcp__demo__add", "args": {"a": 40, "b": 2}}]},
            {"text": "The sum is 42."},
        )
        editor = Editor(answers=["allow"])
        async with acp.spawn_agent_process(
            lambda _agent: editor,
            sys.executable,
            "-m",
            "wyckoff_cli",
            "acp",
            "--model",
            MODEL,
            env=agent_env(server),
            cwd=workspace,
        ) as (conn, _process):
            await conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=schema.ClientCapabilities()
            )
            demo = schema.McpServerStdio(
                name="demo",
                command=sys.executable,
                args=[str(DEMO), "stdio"],
                env=[schema.EnvVariable(name="DEMO_OWN", value="from the editor")],
            )
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[demo])
            done = await conn.prompt(session_id=new.session_id, prompt=[text_block("add 40 and 2")])
            assert done.stop_reason == "end_turn"
    first, second = (r.body for r in server.requests)
    assert "mcp__demo__add" in [t["name"] for t in first["tools"]]
    assert '"sum": 42' in json.dumps(second) or '\\"sum\\": 42' in json.dumps(second)
    assert [p.title for p in editor.permissions][0].startswith("mcp__demo__add")


async def test_a_servers_prompts_and_resources_expand_over_acp(workspace: Path) -> None:
    with FakeServer() as server:
        server.script({"text": "Reviewed."}, {"text": "Read."})
        editor = Editor()
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            demo = schema.McpServerStdio(
                name="demo", command=sys.executable, args=[str(DEMO), "stdio"], env=[]
            )
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[demo])
            sid = new.session_id
            for text in ("/mcp__demo__review app.py style", "summarise @demo:demo://readme"):
                done = await conn.prompt(session_id=sid, prompt=[text_block(text)])
                assert done.stop_reason == "end_turn"
            await conn.prompt(session_id=sid, prompt=[text_block("/mcp__demo__nothing")])
    first, second = (json.dumps(r.body["messages"]) for r in server.requests)
    assert "Please review app.py, looking for style." in first
    assert "This is the demo resource." in second
    said = "".join(u.content.text for u in editor.of(schema.AgentMessageChunk))
    assert "no MCP prompt /mcp__demo__nothing" in said  # and nothing was sent for it


async def test_always_for_an_mcp_tool_and_for_its_server(workspace: Path) -> None:
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "mcp__demo__add", "args": {"a": 1, "b": 2}}]},
            {
                "tool_calls": [{"name": "mcp__demo__add", "args": {"a": 3, "b": 4}}]
            },  # other arguments: not asked
            {"tool_calls": [{"name": "mcp__demo__env", "args": {"name": "HOME"}}]},
            {
                "tool_calls": [{"name": "mcp__demo__image", "args": {}}]
            },  # another tool of the server: not asked
            {"text": "Done."},
        )
        editor = Editor(answers=["always_tool", "always_server"])
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            demo = schema.McpServerStdio(
                name="demo", command=sys.executable, args=[str(DEMO), "stdio"], env=[]
            )
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[demo])
            done = await conn.prompt(session_id=new.session_id, prompt=[text_block("use the tools")])
    assert done.stop_reason == "end_turn"
    assert [p.title for p in editor.permissions] == ["mcp__demo__add", "mcp__demo__env"]
    finals = [u.status for u in editor.of(schema.ToolCallProgress) if u.status in ("completed", "failed")]
    assert finals == ["completed"] * 4
    saved = (workspace / ".wyckoff" / "config.toml").read_text(encoding="utf-8")
    assert '"mcp__demo__add"' in saved and '"mcp__demo__*"' in saved
