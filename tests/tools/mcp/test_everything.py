"""The reference "everything" MCP server from npm (`@modelcontextprotocol/server-everything`),
run as a user would, where node and npm exist: it registers `get-roots-list` only for a
client that declares roots, and its `simulate-research-query` runs only as an MCP task."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import stdio_spec
from wyckoff_cli.tools.base import ToolContext, ToolOutcome
from wyckoff_cli.tools.mcp.manager import TASK_ONLY

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
PACKAGE = "@modelcontextprotocol/server-everything"


SERVERS = Path(__file__).resolve().parents[3] / ".test-servers"  # scripts/install_test_servers.sh


@pytest.fixture(scope="module")
def everything() -> Path:
    """The server as `scripts/install_test_servers.sh` installed it (tests never download)."""
    if shutil.which("node") is None:
        pytest.skip("node is needed to run the reference MCP server")
    script = SERVERS / "node_modules" / PACKAGE / "dist" / "index.js"
    if not script.exists():
        pytest.skip(f"{PACKAGE} is not installed: run scripts/install_test_servers.sh")
    return script


async def test_roots_are_the_workspace_and_task_only_tools_are_not_offered(
    start: Any, everything: Path, tmp_path: Path
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    spec = stdio_spec("everything", command=shutil.which("node") or "node", args=(str(everything), "stdio"))
    started = start(spec, root=workspace)
    await started.manager.wait_ready()
    (status,) = started.manager.statuses()
    assert status.state == "connected", status.reason
    assert "mcp__everything__echo" in status.tools

    roots = started.registry.get("mcp__everything__get-roots-list")  # registered for clients with roots
    assert roots is not None
    result = await roots.run({}, ToolContext(workspace=workspace))
    assert isinstance(result, ToolOutcome)
    assert workspace.resolve().as_uri() in result.text

    assert started.registry.get("mcp__everything__simulate-research-query") is None
    said = [n for n in started.notices() if "simulate-research-query" in n]
    assert said == [f"MCP tool simulate-research-query of everything is not offered: {TASK_ONLY}"]
