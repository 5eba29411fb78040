"""The built-in tool set of a coding session.

Extra tools (such as the web tools of tools/web) are appended after the built-ins, so
the built-in part of the prompt stays byte-identical and cached.
"""

from __future__ import annotations

from collections.abc import Iterable

from wyckoff_cli.tools.base import Tool
from wyckoff_cli.tools.edit import edit_file
from wyckoff_cli.tools.files import read_file, write_file
from wyckoff_cli.tools.listing import glob, list_dir
from wyckoff_cli.tools.permissions.sandbox import ShellSettings
from wyckoff_cli.tools.plan import exit_plan
from wyckoff_cli.tools.registry import ToolRegistry
from wyckoff_cli.tools.search import grep
from wyckoff_cli.tools.shell import make_shell_tools, run_shell, task_output, task_stop
from wyckoff_cli.tools.todo import todo_write

BUILTIN_TOOLS: tuple[Tool, ...] = (
    read_file,
    list_dir,
    glob,
    grep,
    edit_file,
    write_file,
    run_shell,
    task_output,
    task_stop,
    todo_write,
    exit_plan,  # offered in plan mode only (tools/plan.py)
)


def default_registry(extra: Iterable[Tool] = (), shell: ShellSettings | None = None) -> ToolRegistry:
    """Every built-in tool, in a fixed order (the order is part of the prompt cache),
    then `extra`. `shell` configures the sandbox and environment of `run_shell`."""
    tools = list(BUILTIN_TOOLS)
    if shell is not None:
        shell_tool, _, _ = make_shell_tools(shell)
        tools[tools.index(run_shell)] = shell_tool
    return ToolRegistry([*tools, *extra])
