"""What a turn waits for before its first model call, said while it waits.

The first turn of a session can wait a second or more before the model is called: an
MCP server is still starting or the model's SDK is still being imported. The
controller's turn begins with `preparing(controller, abort, text)`: a `preparing` event
for each thing waited for — "starting MCP server NAME…", "loading the model's SDK…" —
so no host shows "idle" meanwhile. Esc (`abort`) stops the wait at once; the turn then
ends as interrupted.

A message waits only for the starting servers it needs (issue 36): those it names (the
server's name as a word, `@NAME:` for a resource, an `mcp__NAME__…` tool) or whose tools
the turn requires (a command's `allowed-tools`). The others go on starting; a notice
says that this message is sent without their tools and that they are offered from the
next message once ready. So a slow server delays only the messages that ask for it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.abort import AbortSignal
from wyckoff_cli.session import warm
from wyckoff_cli.tools.mcp.names import server_prefix

ShowFn = Callable[[str], None]


async def preparing(
    controller: Any, abort: AbortSignal, text: str = "", required_tools: Sequence[str] = ()
) -> AsyncIterator[ev.Preparing | ev.Notice]:
    """`wait_to_start` as events: one `preparing` event per thing waited for, as it
    begins, and a notice naming the starting servers this message does not wait for."""
    mcp = controller.builder.mcp
    starting = mcp.connecting() if mcp is not None else []
    needed = needed_servers(starting, text, required_tools)
    skipped = [name for name in starting if name not in needed]
    if skipped:
        yield ev.Notice("info", not_waiting_text(skipped))
    shown: asyncio.Queue[str | None] = asyncio.Queue()
    waiting = asyncio.ensure_future(wait_to_start(controller, abort, shown.put_nowait, needed))
    waiting.add_done_callback(lambda _: shown.put_nowait(None))
    try:
        while (what := await shown.get()) is not None:
            yield ev.Preparing(what)
        await waiting  # its failure, if any
    finally:
        waiting.cancel()


def needed_servers(starting: Sequence[str], text: str, required_tools: Sequence[str] = ()) -> list[str]:
    """The starting servers a message needs: named in it (as a word, `@NAME:` or an
    `mcp__NAME__` tool, any case) or owning one of the turn's required tools."""
    lowered = text.lower()
    needed: list[str] = []
    for name in starting:
        prefix = server_prefix(name).lower()
        named = re.search(rf"(?<![\w-]){re.escape(name.lower())}(?![\w-])", lowered) is not None
        if named or prefix in lowered or any(tool.lower().startswith(prefix) for tool in required_tools):
            needed.append(name)
    return needed


def not_waiting_text(names: Sequence[str]) -> str:
    servers = ", ".join(names)
    one = len(names) == 1
    return (
        f"MCP server{'' if one else 's'} {servers} still starting: this message is sent without"
        f" {'its' if one else 'their'} tools, offered from the next message once ready"
        f" (name a server in a message to wait for it)."
    )


async def wait_to_start(
    controller: Any, abort: AbortSignal, show: ShowFn, servers: Sequence[str] | None = None
) -> None:
    """Wait for the MCP servers still starting (only `servers` when given), then the
    SDK imports (`controller` is a `ChatController`: its `builder.mcp`, `model`,
    `builder.config` and `prepare()`)."""
    mcp = controller.builder.mcp
    if mcp is not None and mcp.connecting() and (servers is None or servers):

        def announce(name: str) -> None:
            show(f"starting MCP server {name}…")

        await until_aborted(mcp.wait_connecting(announce, servers), abort)
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
