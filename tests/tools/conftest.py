"""Fixtures for the tool tests: a real workspace folder and a context to run tools in."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.tools.background import BackgroundTaskManager
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A workspace root (resolved, so comparisons with resolved paths hold)."""
    folder = tmp_path / "ws"
    folder.mkdir()
    return Path(os.path.realpath(folder))


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder next to the workspace, outside it."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    (folder / "secret.txt").write_text("top secret\n")
    return Path(os.path.realpath(folder))


@pytest.fixture
def ctx(root: Path, tmp_path: Path) -> ToolContext:
    return ToolContext(
        workspace=root,
        call_id="call-1",
        results_dir=tmp_path / "results",
        background=BackgroundTaskManager(),
    )


async def run_tool(tool: Tool, ctx: ToolContext, **args: Any) -> ToolOutcome:
    """Validate `args` against the tool's schema, run it and return a ToolOutcome."""
    tool.check_arguments(args)
    result = await tool.run(args, ctx)
    return result if isinstance(result, ToolOutcome) else ToolOutcome(result)


def write(root: Path, rel: str, text: str = "", *, mtime: float | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


Writer = Callable[..., Path]
