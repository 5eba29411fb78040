"""The MCP SDK imported in a worker thread, once, before the first connection.

Importing `mcp` builds some 550 pydantic models: about 1 s of CPU on our reference
machine (3 s under load). Done inside the first connection, on the event loop, it
held the app's first paint and the first typed keys for that long whenever a server
was configured (bench/mcp_launch.py). Every connection awaits `sdk_ready()` first:
the first call starts the import in a thread, the others wait for the same import;
the loop keeps drawing meanwhile.
"""

from __future__ import annotations

import asyncio
import importlib

__all__ = ["SDK_MODULES", "sdk_ready"]

SDK_MODULES = (
    "anyio",
    "mcp.types",
    "mcp.shared.exceptions",
    "mcp.client.session",
    "mcp.client.stdio",
    "mcp.client.sse",
    "mcp.client.streamable_http",
)

_imports: dict[asyncio.AbstractEventLoop, asyncio.Future[None]] = {}


def _import_all() -> None:
    for name in SDK_MODULES:
        importlib.import_module(name)


async def sdk_ready() -> None:
    """Return once the SDK's modules are imported (in a thread, the first time)."""
    loop = asyncio.get_running_loop()
    pending = _imports.get(loop)
    if pending is None:
        pending = _imports[loop] = asyncio.ensure_future(asyncio.to_thread(_import_all))
        pending.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        await asyncio.shield(pending)
    finally:
        if pending.done():
            _imports.pop(loop, None)  # once imported (or failed), every later call is a plain import
