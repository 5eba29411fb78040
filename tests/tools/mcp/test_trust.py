"""Trust: project servers wait for a trusted `.mcp.json`; changed tool definitions are
withheld until accepted."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import DEMO, stdio_spec
from wyckoff_cli.tools.mcp.config import read_project_file
from wyckoff_cli.tools.mcp.trust import TrustStore

pytestmark = pytest.mark.timeout(90)


def write_project(root: Path, **env: str) -> Path:
    path = root / ".mcp.json"
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(DEMO), "stdio"], "startup_timeout": 20}
    if env:
        entry["env"] = env
    path.write_text(json.dumps({"mcpServers": {"proj": entry}}))
    return path


async def test_project_servers_wait_for_trust(start: Any, tmp_path: Path) -> None:
    path = write_project(tmp_path)
    (spec,) = read_project_file(path)
    started = start(spec, project_file=path, root=tmp_path)
    await started.manager.wait_ready()
    (status,) = started.manager.statuses()
    assert status.state == "needs_trust"
    assert started.manager.status_text() == "MCP 0/1"
    prompt = started.manager.trust_prompt()
    assert prompt is not None and f"{sys.executable} {DEMO} stdio" in prompt
    started.manager.trust_project_file()
    await started.manager.wait_ready()
    assert started.manager.statuses()[0].state == "connected"
    assert "mcp__proj__echo" in started.registry


async def test_trust_flag_and_a_changed_file_asks_again(start: Any, tmp_path: Path) -> None:
    trust = TrustStore(tmp_path / "trust.json")
    path = write_project(tmp_path)
    (spec,) = read_project_file(path)
    first = start(spec, project_file=path, root=tmp_path, trust=trust, trust_project=True)
    await first.manager.wait_ready()
    assert first.manager.statuses()[0].state == "connected"
    await first.manager.aclose()
    assert trust.project_trusted(path)

    write_project(tmp_path, EXTRA="1")  # the file changes: a new command line, a new question
    assert not trust.project_trusted(path)
    (spec,) = read_project_file(path)
    second = start(spec, project_file=path, root=tmp_path, trust=trust)
    await second.manager.wait_ready()
    assert second.manager.statuses()[0].state == "needs_trust"


async def test_changed_tool_definitions_are_withheld_until_accepted(start: Any, tmp_path: Path) -> None:
    trust = TrustStore(tmp_path / "trust.json")
    first = start(stdio_spec(), trust=trust)
    await first.manager.wait_ready()
    assert "mcp__demo__echo" in first.registry
    await first.manager.aclose()

    # the same server now describes echo differently (a "rug pull")
    changed = start(stdio_spec(env={"DEMO_VARIANT": "changed"}), trust=trust)
    await changed.manager.wait_ready()
    (status,) = changed.manager.statuses()
    assert status.state == "changed"
    assert "changed: echo" in status.reason
    assert [n for n in changed.registry.names() if n.startswith("mcp__")] == []
    assert any("withheld" in n and "wyckoff mcp trust demo" in n for n in changed.notices())
    changed.manager.accept_changes("demo")
    assert changed.manager.statuses()[0].state == "connected"
    assert "mcp__demo__echo" in changed.registry
    await changed.manager.aclose()

    # accepted: the next session uses it without asking
    later = start(stdio_spec(env={"DEMO_VARIANT": "changed"}), trust=trust)
    await later.manager.wait_ready()
    assert later.manager.statuses()[0].state == "connected"


def test_trust_file_is_private(tmp_path: Path) -> None:
    import stat

    path = write_project(tmp_path)
    store = TrustStore(tmp_path / "data" / "trust.json")
    store.trust_project(path, {"proj": "python demo"})
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert store.project_trusted(path)
