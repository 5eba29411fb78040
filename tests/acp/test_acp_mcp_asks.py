"""`wyckoff acp` with an MCP server that asks for the model and the user during its
calls (tests/tools/mcp/asking_server.py, passed by the editor): each request is a
`session/request_permission`, checked against the ACP JSON schema, answered by the
editor through the ACP package's client side."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import schema
from acp.helpers import text_block

from tests.acp.test_acp import Editor, wyckoff_acp
from tests.tools.mcp.test_server_asks import ASKER
from wyckoff_cli.storage.permissions import list_rules
from wyckoff_cli.testing.fake_server import FakeServer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


class AskedEditor(Editor):
    """Answers from a script and records the options each request offered."""

    def __init__(self, answers: list[str]) -> None:
        super().__init__(answers)
        self.offered: list[list[str]] = []

    async def request_permission(
        self,
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        options: list[schema.PermissionOption],
        **kwargs: Any,
    ) -> schema.RequestPermissionResponse:
        self.permissions.append(tool_call)
        self.offered.append([o.option_id for o in options])
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=self.answers.pop(0))
        )


def asker() -> schema.McpServerStdio:
    return schema.McpServerStdio(name="asker", command=sys.executable, args=[str(ASKER)], env=[])


async def test_sampling_and_a_form_are_asked_over_acp(workspace: Path) -> None:
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "mcp__asker__ask_model", "args": {"question": "Say hello"}}]},
            {"text": "Hello from the model"},  # the sampling request
            {"text": "It answered."},
            {"tool_calls": [{"name": "mcp__asker__ask_user", "args": {}}]},
            {"text": "Cancelled."},
        )
        editor = AskedEditor(["allow", "always", "allow", "cancel"])
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=1, client_capabilities=schema.ClientCapabilities())
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[asker()])
            done = await conn.prompt(session_id=new.session_id, prompt=[text_block("ask the model")])
            assert done.stop_reason == "end_turn"
            done = await conn.prompt(session_id=new.session_id, prompt=[text_block("ask me")])
            assert done.stop_reason == "end_turn"
    tool, sampling, tool_again, form = editor.permissions
    assert tool.title is not None and tool.title.startswith("mcp__asker__ask_model")
    assert sampling.title == "The MCP server asker asks to use the model"
    assert sampling.raw_input is not None and sampling.raw_input["messages"] == [
        {"role": "user", "text": "Say hello"}
    ]
    assert editor.offered[1] == ["allow", "always", "deny", "never"]  # like a tool call's
    assert [r.rule for r in list_rules(workspace) if r.kind == "allow"] == ["McpSampling(asker)"]  # "always"
    assert form.title == "The MCP server asker asks: Tell me about you"
    listed = json.dumps([c.model_dump() for c in form.content or []], ensure_ascii=False)
    assert "Your name *: string" in listed and "Colour *: enum — one of red, green" in listed
    assert editor.offered[3] == ["decline", "cancel"]  # no "accept": a required field has no default
    bodies = [json.dumps(r.body) for r in server.requests]
    assert "said: Hello from the model" in bodies[2]
    last = json.dumps(server.requests[4].body["messages"][-1])  # the tool result of ask_user
    assert "action" in last and "cancel" in last and "accept" not in last


async def test_a_form_whose_defaults_fill_it_can_be_accepted_over_acp(workspace: Path) -> None:
    with FakeServer() as server:
        server.script({"tool_calls": [{"name": "mcp__asker__ask_default", "args": {}}]}, {"text": "Red."})
        editor = AskedEditor(["allow", "accept"])
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=1, client_capabilities=schema.ClientCapabilities())
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[asker()])
            done = await conn.prompt(session_id=new.session_id, prompt=[text_block("pick")])
            assert done.stop_reason == "end_turn"
    assert editor.offered[1] == ["accept", "decline", "cancel"]
    listed = json.dumps([c.model_dump() for c in editor.permissions[1].content or []])
    assert "(default red)" in listed
    last = json.dumps(server.requests[1].body["messages"][-1])
    assert "accept" in last and "red" in last
