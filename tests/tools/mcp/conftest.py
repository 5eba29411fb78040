"""Real MCP servers for the tests: the demo server over stdio and over streamable HTTP."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.tools.mcp.config import McpConfig, ServerSpec
from wyckoff_cli.tools.mcp.manager import McpEvent, McpManager, start_mcp
from wyckoff_cli.tools.mcp.trust import TrustStore
from wyckoff_cli.tools.registry import ToolRegistry

HERE = Path(__file__).resolve().parent
DEMO = HERE / "demo_server.py"


def stdio_spec(name: str = "demo", **changes: Any) -> ServerSpec:
    values: dict[str, Any] = {
        "name": name,
        "scope": "user",
        "source": Path("/config.toml"),
        "transport": "stdio",
        "command": sys.executable,
        "args": (str(DEMO), "stdio"),
        "startup_timeout": 20.0,
        "tool_timeout": 20.0,
    }
    values.update(changes)
    return ServerSpec(**values)


def http_spec(url: str, name: str = "web", **changes: Any) -> ServerSpec:
    values: dict[str, Any] = {
        "name": name,
        "scope": "user",
        "source": Path("/config.toml"),
        "transport": "http",
        "url": url,
        "startup_timeout": 20.0,
        "tool_timeout": 20.0,
    }
    values.update(changes)
    return ServerSpec(**values)


class Started:
    """A manager with its registry and the events it reported."""

    def __init__(self, manager: McpManager, registry: ToolRegistry, events: list[McpEvent]) -> None:
        self.manager = manager
        self.registry = registry
        self.events = events

    def notices(self) -> list[str]:
        return [e.message for e in self.events if e.kind == "notice"]


@pytest.fixture
async def start(tmp_path: Path) -> AsyncIterator[Callable[..., Started]]:
    """`start(*specs, project_file=None, **kwargs)` → a started manager (closed at the end)."""
    made: list[McpManager] = []

    def make(*specs: ServerSpec, project_file: Path | None = None, **kwargs: Any) -> Started:
        registry = kwargs.pop("registry", None) or ToolRegistry()
        events: list[McpEvent] = []
        kwargs.setdefault("env", {"PATH": os.environ.get("PATH", "")})
        kwargs.setdefault("trust", TrustStore(tmp_path / "trust.json"))
        manager = start_mcp(
            McpConfig(tuple(specs), project_file),
            root=kwargs.pop("root", tmp_path),
            registry=registry,
            on_event=events.append,
            **kwargs,
        )
        made.append(manager)
        return Started(manager, registry, events)

    yield make
    for manager in made:
        await manager.aclose()


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """`http_server(oauth=False, env={})` → the URL of a demo server on 127.0.0.1."""
    processes: list[subprocess.Popen[str]] = []

    def run(oauth: bool = False, env: dict[str, str] | None = None, sse: bool = False) -> str:
        command = [sys.executable, str(DEMO), "sse" if sse else "http", *(["--oauth"] if oauth else [])]
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=open(tmp_path / f"http-{len(processes)}.log", "w"),  # noqa: SIM115
            text=True,
            env={**os.environ, **(env or {})},
            cwd=HERE,
        )
        processes.append(process)
        assert process.stdout is not None
        port = process.stdout.readline().strip()
        assert port.isdigit(), f"the demo server did not start: {port!r}"
        return f"http://127.0.0.1:{port}/{'sse' if sse else 'mcp'}"

    yield run
    for process in processes:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
