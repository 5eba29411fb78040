"""`wyckoff acp` driven through the agent-client-protocol package's own client side.

The agent runs as a subprocess (as an editor starts it) with the fake vendor server
behind it; every notification arrives as the package's schema models (it validates
them), and the test checks their shape and order.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import acp
import pytest
from acp import schema
from acp.helpers import text_block

from tests.acp.wire_check import WireCheck
from tests.waiting import eventually
from wyckoff_cli.testing.fake_server import FakeServer

KEY = "fake-key-for-the-fake-server"
MODEL = "anthropic:claude-sonnet-4-5"

MODES_IN_ORDER = ("default", "plan", "auto-edit", "auto", "yolo")


class Editor:
    """A test ACP client: records updates, answers permissions from a script, and can
    offer its own files and terminals."""

    def __init__(self, answers: list[str] | None = None, buffers: dict[str, str] | None = None) -> None:
        self.answers = list(answers or [])
        self.updates: list[tuple[str, Any]] = []
        self.permissions: list[schema.ToolCallUpdate] = []
        self.buffers = buffers if buffers is not None else {}
        self.written: dict[str, str] = {}
        self.terminals: dict[str, subprocess.CompletedProcess[str]] = {}
        self.first_chunk = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        return None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        if isinstance(update, schema.AgentMessageChunk):
            self.first_chunk.set()

    async def request_permission(
        self,
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        options: list[schema.PermissionOption],
        **kwargs: Any,
    ) -> schema.RequestPermissionResponse:
        self.permissions.append(tool_call)
        kinds = ["allow_once", "allow_always", "reject_once", "reject_always"]
        if tool_call.title and tool_call.title.startswith("mcp__"):  # always for the tool, for the server
            kinds += ["allow_always", "allow_always"]
        assert [o.kind for o in options] == kinds
        answer = self.answers.pop(0)
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> schema.ReadTextFileResponse:
        if path not in self.buffers:
            raise acp.RequestError.invalid_params({"message": f"no such file {path}"})
        return schema.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> None:
        self.written[path] = content
        self.buffers[path] = content

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        cwd: str | None = None,
        **kwargs: Any,
    ) -> schema.CreateTerminalResponse:
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = subprocess.run(
            [command, *(args or [])], cwd=cwd, capture_output=True, text=True, timeout=30
        )
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.WaitForTerminalExitResponse:
        return schema.WaitForTerminalExitResponse(exit_code=self.terminals[terminal_id].returncode)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> schema.TerminalOutputResponse:
        done = self.terminals[terminal_id]
        return schema.TerminalOutputResponse(output=done.stdout + done.stderr, truncated=False)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        return None

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> None:
        return None

    def of(self, cls: type) -> list[Any]:
        return [u for _, u in self.updates if isinstance(u, cls)]


def agent_env(server: FakeServer) -> dict[str, str]:
    env = dict(os.environ)
    env["ANTHROPIC_BASE_URL"] = server.url
    env["ANTHROPIC_API_KEY"] = KEY
    return env


@contextlib.asynccontextmanager
async def wyckoff_acp(editor: Editor, server: FakeServer, workspace: Path) -> AsyncIterator[Any]:
    """`wyckoff acp` started as an editor starts it, with `editor` as the client; every
    message it sends is checked against the ACP JSON schema (tests/acp/wire_check.py)."""
    wire = WireCheck()
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
        observers=[wire],
    ) as (conn, _process):
        yield conn
    wire.assert_clean()


async def until(predicate: Any, timeout: float = 20) -> None:
    await eventually(predicate, timeout)


@pytest.mark.slow
async def test_initialize_prompt_with_permissions_cancel_and_load(workspace: Path) -> None:
    with FakeServer() as server:
        server.script(
            {
                "text": "Running it.",
                "tool_calls": [{"name": "run_shell", "args": {"command": "echo allowed"}}],
            },
            {"tool_calls": [{"name": "run_shell", "args": {"command": "touch denied.txt"}}]},
            {"text": "One ran, one was refused.", "usage": {"input_tokens": 900, "output_tokens": 12}},
            {"text": "A long answer " * 400, "chunk_size": 20, "chars_per_second": 200},
        )
        editor = Editor(answers=["allow", "deny"])
        async with wyckoff_acp(editor, server, workspace) as conn:
            init = await conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=schema.ClientCapabilities()
            )
            assert init.protocol_version == acp.PROTOCOL_VERSION
            assert init.agent_capabilities is not None and init.agent_capabilities.load_session
            assert init.agent_info is not None and init.agent_info.name == "wyckoff"
            assert {m.id for m in init.auth_methods or []} >= {"anthropic", "openai", "gemini"}
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            assert new.modes is not None and new.modes.current_mode_id == "default"
            assert [m.id for m in new.modes.available_modes] == list(MODES_IN_ORDER)
            (model_option,) = new.config_options or []
            assert model_option.current_value == MODEL and model_option.category == "model"
            await until(lambda: bool(editor.of(schema.AvailableCommandsUpdate)))
            names = [c.name for c in editor.of(schema.AvailableCommandsUpdate)[0].available_commands]
            assert "compact" in names and "model" in names and "quit" not in names

            done = await conn.prompt(session_id=new.session_id, prompt=[text_block("run two commands")])
            assert done.stop_reason == "end_turn"
            assert done.usage is not None and done.usage.input_tokens >= 900
            assert [p.title for p in editor.permissions] == [
                "run_shell: echo allowed",
                "run_shell: touch denied.txt",
            ]
            assert all(p.kind == "execute" for p in editor.permissions)
            starts = editor.of(schema.ToolCallStart)
            assert [s.kind for s in starts] == ["execute", "execute"] and starts[0].status == "pending"
            finals = [u for u in editor.of(schema.ToolCallProgress) if u.status in ("completed", "failed")]
            assert [u.status for u in finals] == ["completed", "failed"]
            assert "allowed" in finals[0].content[0].content.text  # type: ignore[index,union-attr]
            assert not (workspace / "denied.txt").exists()
            text = "".join(u.content.text for u in editor.of(schema.AgentMessageChunk))
            assert "Running it." in text and "One ran, one was refused." in text
            assert editor.of(schema.UsageUpdate)

            editor.first_chunk.clear()
            turn = asyncio.ensure_future(
                conn.prompt(session_id=new.session_id, prompt=[text_block("a long one")])
            )
            await asyncio.wait_for(editor.first_chunk.wait(), 20)
            await conn.cancel(session_id=new.session_id)
            cancelled = await asyncio.wait_for(turn, 20)
            assert cancelled.stop_reason == "cancelled"
            session_id = new.session_id

        editor2 = Editor()
        async with wyckoff_acp(editor2, server, workspace) as conn2:
            await conn2.initialize(protocol_version=acp.PROTOCOL_VERSION)
            loaded = await conn2.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
            assert loaded is not None and loaded.modes is not None
            users = [u.content.text for u in editor2.of(schema.UserMessageChunk)]
            assert users == ["run two commands", "a long one"]
            replayed = editor2.of(schema.ToolCallStart)
            assert [s.title for s in replayed] == ["run_shell: echo allowed", "run_shell: touch denied.txt"]
            assert all(sid == session_id for sid, _ in editor2.updates)


@pytest.mark.slow
async def test_files_and_terminals_go_through_the_client(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("on disk\n", encoding="utf-8")
    unsaved = str(workspace / "notes.txt")
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "read_file", "args": {"path": "notes.txt"}}]},
            {
                "tool_calls": [
                    {"name": "write_file", "args": {"path": "new.txt", "content": "from the agent\n"}}
                ]
            },
            {"tool_calls": [{"name": "run_shell", "args": {"command": "echo in-the-editor-terminal"}}]},
            {"text": "Done."},
        )
        editor = Editor(answers=["allow", "allow"], buffers={unsaved: "unsaved buffer text\n"})
        async with wyckoff_acp(editor, server, workspace) as conn:
            capabilities = schema.ClientCapabilities(
                fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
            )
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=capabilities)
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            done = await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
            assert done.stop_reason == "end_turn"
        second_request = server.requests[1].body
    read_result = str(second_request["messages"][-1]["content"])
    assert "unsaved buffer text" in read_result and "on disk" not in read_result
    assert editor.written == {str(workspace / "new.txt"): "from the agent\n"}
    assert not (workspace / "new.txt").exists()  # the editor owns the write
    diffs = [
        c
        for u in editor.of(schema.ToolCallProgress)
        for c in (u.content or [])
        if isinstance(c, schema.FileEditToolCallContent)
    ]
    assert diffs and diffs[0].new_text == "from the agent\n"
    terminal_refs = [
        c
        for u in editor.of(schema.ToolCallProgress)
        for c in (u.content or [])
        if isinstance(c, schema.TerminalToolCallContent)
    ]
    assert terminal_refs and terminal_refs[0].terminal_id == "term-1"
    assert "in-the-editor-terminal" in editor.terminals["term-1"].stdout
    # the model got the terminal's output as the call's result
    assert "in-the-editor-terminal" in str(server.requests[3].body["messages"][-1]["content"])


def test_nothing_but_protocol_reaches_stdout(workspace: Path) -> None:
    request = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n'
    done = subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "acp"],
        input=request,
        capture_output=True,
        cwd=workspace,
        timeout=60,
    )
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(b'{"jsonrpc":"2.0","id":1,"result":')


@pytest.mark.slow
async def test_a_sub_agents_permission_request_reaches_the_editor(workspace: Path) -> None:
    task = {"agent": "general", "description": "write notes", "prompt": "Write notes.txt saying hi."}
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "task", "args": task, "id": "toolu_task"}]},
            {
                "tool_calls": [
                    {"name": "write_file", "args": {"path": "notes.txt", "content": "hi"}, "id": "toolu_w"}
                ]
            },
            {"text": "Wrote it."},
            {"text": "The agent wrote notes.txt."},
        )
        editor = Editor(answers=["allow"])
        async with wyckoff_acp(editor, server, workspace) as conn:
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(workspace), mcp_servers=[])
            done = await conn.prompt(session_id=new.session_id, prompt=[text_block("write notes")])
    assert done.stop_reason == "end_turn"
    assert [p.title for p in editor.permissions] == ["general agent: write_file: notes.txt"]
    # the child's call shows as a call of its own, nested under the `task` call
    assert [p.tool_call_id for p in editor.permissions] == ["toolu_task/toolu_w"]
    nested = [s for s in editor.of(schema.ToolCallStart) if s.tool_call_id == "toolu_task/toolu_w"]
    assert [(s.title, s.field_meta) for s in nested] == [
        ("general agent: write_file: notes.txt", {"parentToolCallId": "toolu_task"})
    ]
    finished = [
        u.status
        for u in editor.of(schema.ToolCallProgress)
        if u.tool_call_id in ("toolu_task/toolu_w", "toolu_task")
    ]
    assert finished[-2:] == ["completed", "completed"]  # the child's write, then the task
    assert (workspace / "notes.txt").read_text() == "hi"
    text = "".join(u.content.text for u in editor.of(schema.AgentMessageChunk))
    assert "The agent wrote notes.txt." in text
