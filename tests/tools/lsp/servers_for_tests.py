"""Helpers for the language-server tests: the real basedpyright of the test extra
(installed beside the test interpreter, as pip installs it for a user), a manager over
a workspace, and a context to run tools in."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from wyckoff_cli.storage.lsp_config import LspConfig, LspServerConfig
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.lsp.family import LspTools
from wyckoff_cli.tools.lsp.manager import LspManager
from wyckoff_cli.tools.lsp.servers import resolve_servers


def basedpyright() -> str | None:
    found = Path(sys.executable).parent / "basedpyright-langserver"
    return str(found) if found.is_file() else None


def manager_for(root: Path, servers: dict[str, LspServerConfig], **settings: Any) -> LspManager:
    config = LspConfig(servers=servers, **settings)
    return LspManager(root, config, resolve_servers(root, servers, path_env=""))


def pyright_manager(root: Path, **settings: Any) -> LspManager:
    command = basedpyright()
    assert command is not None, "basedpyright is in the test extra: pip install -e '.[test]'"
    return manager_for(root, {"basedpyright": LspServerConfig(command=command)}, **settings)


def context(root: Path, call_id: str = "call-1") -> ToolContext:
    return ToolContext(workspace=root, call_id=call_id)


def tool(tools: LspTools, name: str) -> Tool:
    found = next((t for t in tools.tools if t.name == name), None)
    assert found is not None, name
    return found


async def run(target: Tool, args: dict[str, Any], ctx: ToolContext) -> str:
    target.check_arguments(args)
    result = await target.run(args, ctx)
    return result.text if isinstance(result, ToolOutcome) else result


async def until(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Wait for `condition`, failing loudly with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)
