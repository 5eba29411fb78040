"""A published server run as a user would: `mcp-server-time` from PyPI in a scratch venv."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import stdio_spec
from wyckoff_cli.tools.base import ToolContext, ToolOutcome

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def time_server(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("time-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "mcp-server-time"],
        capture_output=True,
        text=True,
        timeout=480,
    )
    if pip.returncode != 0:
        pytest.skip(f"cannot install mcp-server-time from the package index: {pip.stderr.strip()[-300:]}")
    return venv / "bin" / "mcp-server-time"


async def test_mcp_server_time(start: Any, time_server: Path, tmp_path: Path) -> None:
    started = start(stdio_spec("time", command=str(time_server), args=("--local-timezone", "UTC")))
    await started.manager.wait_ready()
    (status,) = started.manager.statuses()
    assert status.state == "connected", status.reason
    assert set(status.tools) >= {"mcp__time__get_current_time", "mcp__time__convert_time"}
    tool = started.registry.get("mcp__time__get_current_time")
    assert tool is not None
    tool.check_arguments({"timezone": "Europe/Warsaw"})
    result = await tool.run({"timezone": "Europe/Warsaw"}, ToolContext(workspace=tmp_path))
    assert isinstance(result, ToolOutcome)
    assert json.loads(result.text)["timezone"] == "Europe/Warsaw"
    convert = started.registry.get("mcp__time__convert_time")
    assert convert is not None
    converted = await convert.run(
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        ToolContext(workspace=tmp_path),
    )
    assert isinstance(converted, ToolOutcome)
    assert "21:00" in converted.text
