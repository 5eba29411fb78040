"""The built-in registry, its schemas and descriptions; todo_write."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from tests.tools.conftest import run_tool
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.todo import todo_write

EXPECTED = [
    "read_file",
    "list_dir",
    "glob",
    "grep",
    "edit_file",
    "write_file",
    "run_shell",
    "task_output",
    "task_stop",
    "todo_write",
    "exit_plan",
]
TOOLS_DIR = Path(__file__).resolve().parents[2] / "wyckoff_cli" / "tools"


def test_registry_order_and_flags() -> None:
    registry = default_registry()
    assert registry.names() == EXPECTED
    by_name = {tool.name: tool for tool in registry}
    assert {n for n, t in by_name.items() if t.requires_approval} == {
        "edit_file",
        "write_file",
        "run_shell",
        "exit_plan",
    }
    assert {n for n, t in by_name.items() if t.concurrency_safe} == {
        "read_file",
        "list_dir",
        "glob",
        "grep",
        "task_output",
    }
    assert {n: t.kind for n, t in by_name.items()} == {
        "read_file": "read",
        "list_dir": "read",
        "glob": "read",
        "grep": "read",
        "edit_file": "edit",
        "write_file": "edit",
        "run_shell": "execute",
        "task_output": "read",
        "task_stop": "other",
        "todo_write": "other",
        "exit_plan": "other",
    }
    assert default_registry().specs() == registry.specs()  # stable: the prompt cache holds


def test_schemas_and_descriptions() -> None:
    for tool in default_registry():
        schema = tool.parameters
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema.get("required", [])) <= set(schema["properties"])
        assert set(tool.path_args) <= set(schema["properties"])
        assert tool.summary_arg is None or tool.summary_arg in schema["properties"]
        assert 150 < len(tool.description) < 2_500, tool.name


def test_extra_tools_come_last() -> None:
    from wyckoff_cli.storage.web_config import WebConfig
    from wyckoff_cli.tools.web import web_tools

    registry = default_registry(extra=web_tools(WebConfig(), {}))
    assert registry.names() == [*EXPECTED, "web_fetch"]


def test_tools_import_no_ui_provider_or_storage_code() -> None:
    for path in TOOLS_DIR.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            # the MCP client keeps its trust records and OAuth tokens through storage
            # (tools → storage is allowed by the levels in test_import_contracts.py)
            mcp = path.parent.name == "mcp"
            for name in names:
                assert not name.startswith(
                    (
                        "wyckoff_cli.providers",
                        "wyckoff_cli.tui",
                        *(() if mcp else ("wyckoff_cli.storage",)),
                        "wyckoff_cli.cli",
                        "textual",
                    )
                ), (path.name, name)
                if name.startswith("wyckoff_cli.runtime"):
                    assert name in (
                        "wyckoff_cli.core.errors",
                        "wyckoff_cli.core.messages",
                        "wyckoff_cli.core.events",
                    ), (path.name, name)


def test_modules_stay_small() -> None:
    for path in TOOLS_DIR.rglob("*.py"):
        assert len(path.read_text().splitlines()) < 600, path.name


async def test_todo_write(ctx: ToolContext) -> None:
    items = [
        {"content": "Read the config loader", "status": "completed"},
        {"content": "Add the --json flag", "status": "in_progress", "active_form": "Adding the --json flag"},
        {"content": "Run the tests", "status": "pending"},
    ]
    outcome = await run_tool(todo_write, ctx, items=items)
    assert outcome.text.splitlines() == [
        "Plan updated: 1 completed, 1 in progress, 1 pending.",
        "[x] Read the config loader",
        "[>] Add the --json flag",
        "[ ] Run the tests",
    ]
    assert outcome.display == {"todos": items}


@pytest.mark.parametrize(
    "items",
    [
        [{"content": "x", "status": "done"}],
        [{"content": "x"}],
        [{"content": "", "status": "pending"}],
    ],
)
async def test_todo_write_rejects_bad_items(ctx: ToolContext, items: list[dict[str, Any]]) -> None:
    with pytest.raises(ToolError):
        await run_tool(todo_write, ctx, items=items)
