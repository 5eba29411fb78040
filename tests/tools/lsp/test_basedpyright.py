"""Against the real basedpyright (from PyPI, in the test extra): an edit that
introduces a type error returns it with its line, a fix clears it; definition,
references and rename across two files; a server killed mid-session is restarted,
then disabled after a second crash. One server is shared by the module's tests."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.lsp.family import LspTools
from wyckoff_cli.tools.lsp.report import status_segment
from wyckoff_cli.tools.registry import ToolRegistry

from .servers_for_tests import basedpyright, context, pyright_manager, run, tool, until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(
        basedpyright() is None, reason="basedpyright is not installed (the test extra has it)"
    ),
]

GREETING = """def greet(name: str) -> str:
    return "hello " + name
"""
CALLER = """from greeting import greet


def welcome() -> str:
    return greet("world")


def again() -> str:
    return greet("you")
"""


class Workspace:
    def __init__(self, root: Path, tools: LspTools, registry: ToolRegistry) -> None:
        self.root, self.tools, self.registry = root, tools, registry
        self.events: list[object] = []

    def ctx(self, call_id: str = "call-1"):  # type: ignore[no-untyped-def]
        ctx = context(self.root, call_id)
        ctx.emit_event = self.events.append
        return ctx


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ws(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Workspace]:
    root = Path(os.path.realpath(tmp_path_factory.mktemp("lsp-ws")))
    (root / "greeting.py").write_text(GREETING)
    (root / "caller.py").write_text(CALLER)
    (root / "pyrightconfig.json").write_text('{"typeCheckingMode": "standard"}\n')
    tools = LspTools(pyright_manager(root, diagnostics_wait_ms=10_000, startup_wait_ms=60_000))
    registry = tools.wrap(default_registry())
    yield Workspace(root, tools, registry)
    await tools.manager.close()


async def _read(ws: Workspace, name: str) -> str:
    read = ws.registry.get("read_file")
    assert read is not None
    return await run(read, {"path": name}, ws.ctx())


async def test_lsp_tools_are_offered_only_once_the_server_runs(ws: Workspace) -> None:
    assert not any(name.startswith("lsp_") for name in ws.registry.names())
    await _read(ws, "caller.py")  # meeting a Python file starts the server
    await until(lambda: ws.tools.manager.running() != [], "basedpyright to run", timeout=60)
    assert {
        "lsp_definition",
        "lsp_references",
        "lsp_hover",
        "lsp_symbols",
        "lsp_diagnostics",
        "lsp_rename",
    } <= set(ws.registry.names())


async def test_an_edit_that_breaks_a_type_returns_the_error_and_a_fix_clears_it(ws: Workspace) -> None:
    edit = ws.registry.get("edit_file")
    assert edit is not None
    await _read(ws, "greeting.py")
    broken = await run(
        edit, {"path": "greeting.py", "old": 'return "hello " + name', "new": "return 42"}, ws.ctx()
    )
    assert "Diagnostics this change introduced (basedpyright):" in broken
    error_lines = [line for line in broken.splitlines() if line.startswith("greeting.py:2:")]
    assert error_lines == [
        'greeting.py:2:12: error: Type "Literal[42]" is not assignable to return type "str" '
        '"Literal[42]" is not assignable to "str" [reportReturnType]'
    ], broken
    fixed = await run(
        edit, {"path": "greeting.py", "old": "return 42", "new": 'return "hello " + name'}, ws.ctx()
    )
    assert "Diagnostics" not in fixed, fixed
    diagnostics = await run(ws.registry.get("lsp_diagnostics"), {"path": "greeting.py"}, ws.ctx())  # type: ignore[arg-type]
    assert diagnostics == "No errors or warnings in greeting.py."


async def test_diagnostics_that_were_there_before_are_not_repeated(ws: Workspace) -> None:
    write = ws.registry.get("write_file")
    assert write is not None
    first = await run(write, {"path": "legacy.py", "content": 'x: int = "a"\n'}, ws.ctx())
    assert "legacy.py:1:" in first
    second = await run(write, {"path": "legacy.py", "content": 'x: int = "a"\ny: str = 1\n'}, ws.ctx())
    introduced = [line for line in second.splitlines() if line.startswith("legacy.py:")]
    assert [line.split(":")[1] for line in introduced] == ["2"], second
    (ws.root / "legacy.py").unlink()


async def test_definition_and_references_across_two_files(ws: Workspace) -> None:
    definition = await run(
        tool(ws.tools, "lsp_definition"), {"path": "caller.py", "line": 5, "symbol": "greet"}, ws.ctx()
    )
    assert definition == "greeting.py:1:5: def greet(name: str) -> str:"
    references = await run(
        tool(ws.tools, "lsp_references"), {"path": "greeting.py", "line": 1, "symbol": "greet"}, ws.ctx()
    )
    assert references.splitlines() == [
        "caller.py:1:22: from greeting import greet",
        'caller.py:5:12: return greet("world")',
        'caller.py:9:12: return greet("you")',
        "greeting.py:1:5: def greet(name: str) -> str:",
    ]


async def test_hover_and_symbols(ws: Workspace) -> None:
    hover = await run(tool(ws.tools, "lsp_hover"), {"path": "caller.py", "line": 5, "column": 12}, ws.ctx())
    assert "def greet(name: str) -> str" in hover
    outline = await run(tool(ws.tools, "lsp_symbols"), {"path": "caller.py"}, ws.ctx())
    assert "function welcome (line 4)" in outline and "function again (line 8)" in outline


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"path": "caller.py", "line": 99, "column": 1}, "line 99 is outside caller.py (it has 9 lines)"),
        ({"path": "caller.py", "line": 5, "column": 80}, "column 80 is outside line 5 of caller.py"),
        ({"path": "caller.py", "line": 5, "symbol": "nowhere"}, "'nowhere' is not on line 5 of caller.py"),
        ({"path": "missing.py", "line": 1, "column": 1}, "missing.py does not exist"),
        ({"path": "caller.py", "line": 5}, "give `column` or `symbol`"),
        ({"path": "notes.txt", "line": 1, "column": 1}, "no language server for notes.txt"),
    ],
)
async def test_bad_positions_are_clear_tool_errors(
    ws: Workspace, args: dict[str, object], message: str
) -> None:
    (ws.root / "notes.txt").write_text("plain\n")
    with pytest.raises(ToolError) as caught:
        await run(tool(ws.tools, "lsp_definition"), args, ws.ctx())
    assert message in caught.value.message


async def test_a_file_changed_by_a_shell_command_is_resynced_before_the_next_query(ws: Workspace) -> None:
    await _read(ws, "caller.py")
    (ws.root / "caller.py").write_text(CALLER.replace("def again", "def once_more"))  # as `sed -i` would
    outline = await run(tool(ws.tools, "lsp_symbols"), {"path": "caller.py"}, ws.ctx())
    assert "function once_more (line 8)" in outline
    (ws.root / "caller.py").write_text(CALLER)


async def test_rename_across_two_files_is_one_planned_edit(ws: Workspace) -> None:
    rename = tool(ws.tools, "lsp_rename")
    args = {"path": "greeting.py", "line": 1, "symbol": "greet", "new_name": "salute"}
    ctx = ws.ctx("call-rename")
    plan = await ws.tools.plans.plan("call-rename", args, ws.root)  # what the runtime hook does
    preview = rename.preview(args, ctx)  # type: ignore[misc]
    assert preview["path"] == "caller.py, greeting.py"
    assert (
        '+    return salute("world")' in preview["diff"]
        and "+def salute(name: str) -> str:" in preview["diff"]
    )
    assert len(plan.changes) == 2
    result = await run(rename, args, ctx)
    assert result == "Renamed to 'salute' in 2 file(s): caller.py, greeting.py."
    expected_caller = CALLER.replace("import greet", "import salute").replace("greet(", "salute(")
    assert (ws.root / "caller.py").read_text() == expected_caller
    assert (ws.root / "greeting.py").read_text() == GREETING.replace("def greet", "def salute")
    definition = await run(
        tool(ws.tools, "lsp_definition"), {"path": "caller.py", "line": 9, "symbol": "salute"}, ws.ctx()
    )
    assert definition.startswith("greeting.py:1:5:")


async def test_rename_through_the_runtime_is_one_approval_with_the_whole_diff(ws: Workspace) -> None:
    from tests.runtime.support import collect, make_runtime, of_type
    from tests.runtime.test_approval_and_guards import ScriptedApprover
    from wyckoff_cli.core.approval import ApprovalDecision
    from wyckoff_cli.session.lsp import RenamePlanning

    approver = ScriptedApprover(ApprovalDecision.allow())
    call = {
        "name": "lsp_rename",
        "args": {"path": "caller.py", "line": 5, "symbol": "salute", "new_name": "hail"},
    }
    runtime, _ = make_runtime(
        [{"tool_calls": [call]}, {"text": "renamed"}],
        list(ws.registry),
        ws.root,
        approver=approver,
        hooks=[RenamePlanning(ws.tools, ws.root)],
    )
    events, _ = await collect(runtime)
    (request,) = approver.requests
    assert request.preview["path"] == "caller.py, greeting.py"
    assert '+    return hail("world")' in request.preview["diff"]
    assert "+def hail(name: str) -> str:" in request.preview["diff"]
    (done,) = of_type(events, ev.ToolSucceeded)
    assert done.name == "lsp_rename"
    assert "def hail(" in (ws.root / "greeting.py").read_text()
    assert "import hail" in (ws.root / "caller.py").read_text()


async def test_a_tool_added_later_that_names_a_file_gets_its_diagnostics(ws: Workspace) -> None:
    """An MCP server's write tool (connected mid-session, kind `external`) that names the
    file it changes: its result ends with the diagnostics the change introduced too."""
    from wyckoff_cli.tools.base import Tool

    async def write(args: dict[str, object], ctx: object) -> str:
        (ws.root / str(args["path"])).write_text(str(args["content"]), encoding="utf-8")
        return "Successfully wrote to " + str(args["path"])

    schema = {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}
    ws.registry.add(Tool("mcp__fs__write_file", "Write a file.", schema, write, kind="external"))
    wrapped = ws.registry.get("mcp__fs__write_file")
    assert wrapped is not None
    result = await run(wrapped, {"path": "remote.py", "content": 'count: int = "many"\n'}, ws.ctx())
    assert result.startswith("Successfully wrote to remote.py")
    assert "Diagnostics this change introduced (basedpyright):" in result
    assert any(line.startswith("remote.py:1:") for line in result.splitlines()), result
    outside = await run(wrapped, {"path": "../elsewhere.txt", "content": "x"}, ws.ctx())
    assert outside == "Successfully wrote to ../elsewhere.txt"  # outside the workspace: not checked
    (ws.root / "remote.py").unlink()
    (ws.root.parent / "elsewhere.txt").unlink()
    ws.registry.remove("mcp__fs__write_file")


async def test_a_sub_agent_s_file_tools_report_diagnostics_too(ws: Workspace) -> None:
    from wyckoff_cli.runtime.agent_files import AgentDefinition
    from wyckoff_cli.runtime.subagents import child_registry

    child = child_registry(ws.registry, AgentDefinition(name="fixer", description="fixes", prompt="fix"))
    write = child.get("write_file")
    assert write is not None and write.run is ws.registry.get("write_file").run  # type: ignore[union-attr]
    assert "lsp_diagnostics" in child  # the server runs: the child is offered the lsp_* tools
    result = await run(write, {"path": "child.py", "content": 'n: int = "x"\n'}, ws.ctx())
    assert any(line.startswith("child.py:1:") for line in result.splitlines()), result
    (ws.root / "child.py").unlink()


async def test_a_killed_server_is_restarted_once_then_disabled_with_one_notice(ws: Workspace) -> None:
    manager = ws.tools.manager
    (slot,) = manager.running()
    assert slot.client is not None and slot.client.process is not None
    first = slot.client.process
    os.killpg(first.pid, signal.SIGKILL)
    await until(lambda: first.returncode is not None, "the killed server to exit")
    outline = await run(tool(ws.tools, "lsp_symbols"), {"path": "caller.py"}, ws.ctx())
    assert "function welcome (line 4)" in outline  # answered by the restarted server
    assert slot.restarts == 1 and slot.client is not None and slot.client.process is not first
    second = slot.client.process
    assert second is not None
    os.killpg(second.pid, signal.SIGKILL)
    await until(lambda: second.returncode is not None, "the second server to exit")
    with pytest.raises(ToolError):
        await run(tool(ws.tools, "lsp_symbols"), {"path": "caller.py"}, ws.ctx())
    assert slot.state == "disabled"
    assert status_segment(manager) == "LSP !"
    read = ws.registry.get("read_file")
    assert read is not None
    await run(read, {"path": "caller.py"}, ws.ctx())
    await run(read, {"path": "greeting.py"}, ws.ctx())
    notices = [e.message for e in ws.events if isinstance(e, ev.Notice) and "crashed" in e.message]
    assert notices == ["Language server basedpyright crashed again and is disabled for this session."]
