"""MCP: how long a server takes to be ready, and what one tool call costs.

Starts the tests' demo server (the SDK's MCPServer) over stdio and over streamable HTTP
on 127.0.0.1, times `start_mcp` → ready (spawn, initialize, list tools/resources/prompts)
and N calls of its read-only `echo` tool through the proxy Tool (what the runtime runs).
Optionally a published server given by its command (`--command mcp-server-time`).

    python bench/mcp_calls.py [--calls 200] [--repeat 3] [--command PATH ...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.mcp.config import McpConfig, ServerSpec
from wyckoff_cli.tools.mcp.manager import start_mcp
from wyckoff_cli.tools.mcp.trust import TrustStore
from wyckoff_cli.tools.registry import ToolRegistry

DEMO = Path(__file__).resolve().parents[1] / "tests" / "tools" / "mcp" / "demo_server.py"


async def measure(
    spec: ServerSpec, calls: int, tool: str, args: dict[str, object], trust: Path
) -> tuple[float, float]:
    registry = ToolRegistry()
    started = time.perf_counter()
    manager = start_mcp(
        McpConfig((spec,), None),
        root=Path.cwd(),
        env=dict(os.environ),
        registry=registry,
        trust=TrustStore(trust),
    )
    await manager.wait_ready()
    ready = time.perf_counter() - started
    proxy = registry.get(tool)
    assert proxy is not None, manager.statuses()
    context = ToolContext(workspace=Path.cwd())
    started = time.perf_counter()
    for _ in range(calls):
        await proxy.run(dict(args), context)
    per_call = (time.perf_counter() - started) / calls
    await manager.aclose()
    return ready, per_call


def report(name: str, results: list[tuple[float, float]]) -> None:
    ready = statistics.median(r for r, _ in results)
    call = statistics.median(c for _, c in results)
    print(f"{name:<22} ready {ready * 1000:7.0f} ms   per call {call * 1000:6.2f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--command", nargs="+", help="a published server, e.g. mcp-server-time")
    args = parser.parse_args()
    trust = Path(os.environ.get("TMPDIR", "/tmp")) / f"wyckoff-bench-trust-{os.getpid()}.json"
    stdio = ServerSpec("demo", "user", Path("-"), "stdio", command=sys.executable, args=(str(DEMO), "stdio"))
    runs = [
        await measure(stdio, args.calls, "mcp__demo__echo", {"text": "hi"}, trust) for _ in range(args.repeat)
    ]
    report("demo over stdio", runs)
    server = subprocess.Popen(
        [sys.executable, str(DEMO), "http"], stdout=subprocess.PIPE, text=True, cwd=DEMO.parent
    )
    try:
        assert server.stdout is not None
        port = server.stdout.readline().strip()
        http = ServerSpec("web", "user", Path("-"), "http", url=f"http://127.0.0.1:{port}/mcp")
        runs = [
            await measure(http, args.calls, "mcp__web__echo", {"text": "hi"}, trust)
            for _ in range(args.repeat)
        ]
        report("demo over HTTP", runs)
    finally:
        server.terminate()
        server.wait(5)
    if args.command:
        spec = ServerSpec(
            "time", "user", Path("-"), "stdio", command=args.command[0], args=tuple(args.command[1:])
        )
        tool, call = "mcp__time__get_current_time", {"timezone": "UTC"}
        runs = [await measure(spec, args.calls, tool, call, trust) for _ in range(args.repeat)]
        report(Path(args.command[0]).name, runs)
    trust.unlink(missing_ok=True)


if __name__ == "__main__":
    asyncio.run(main())
