"""What a turn waits for before its first model call, said while it waits.

The first turn of a session can wait a second or more before the model is called: an
MCP server is still starting (its tools belong in the request) or the model's SDK is
still being imported. The controller's turn begins with `preparing(controller, abort)`:
a `preparing` event for each thing waited for — "starting MCP server NAME…", "loading
the model's SDK…" — so no host shows "idle" meanwhile. Esc (`abort`) stops the wait at
once; the turn then ends as interrupted.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.abort import AbortSignal
from wyckoff_cli.session import warm

ShowFn = Callable[[str], None]


async def preparing(controller: Any, abort: AbortSignal) -> AsyncIterator[ev.Preparing]:
    """`wait_to_start` as events: one `preparing` event per thing waited for, as it begins."""
    shown: asyncio.Queue[str | None] = asyncio.Queue()
    waiting = asyncio.ensure_future(wait_to_start(controller, abort, shown.put_nowait))
    waiting.add_done_callback(lambda _: shown.put_nowait(None))
    try:
        while (what := await shown.get()) is not None:
            yield ev.Preparing(what)
        await waiting  # its failure, if any
    finally:
        waiting.cancel()


async def wait_to_start(controller: Any, abort: AbortSignal, show: ShowFn) -> None:
    """Wait for the MCP servers still starting, then the SDK imports (`controller` is a
    `ChatController`: its `builder.mcp`, `model`, `builder.config` and `prepare()`)."""
    mcp = controller.builder.mcp
    if mcp is not None and mcp.connecting():
        await until_aborted(mcp.wait_connecting(lambda name: show(f"starting MCP server {name}…")), abort)
    config = controller.builder.config
    if not abort.aborted and warm.pending(warm.modules_for([controller.model, *config.fallbacks], config)):
        show("loading the model's SDK…")
        await until_aborted(controller.prepare(), abort)


async def until_aborted(work: Awaitable[object], abort: AbortSignal) -> None:
    """Await `work`, or stop waiting for it once `abort` fires (it goes on: an import
    in its thread cannot be stopped, and the turn's own `prepare()` awaits it again).
    A failure is left to the turn, which meets it again and reports it."""
    task = asyncio.ensure_future(work)
    task.add_done_callback(lambda done: done.cancelled() or done.exception())  # never "never retrieved"
    aborted = asyncio.Event()
    unsubscribe = abort.subscribe(aborted.set)
    waiter = asyncio.ensure_future(aborted.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        unsubscribe()
        waiter.cancel()
