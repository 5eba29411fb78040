"""The runtime's per-delta path: hooks that want no deltas are not awaited for them,
and the consumer takes what the producer queued in batches (issue 17)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.runtime.support import collect, make_runtime
from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime.event_queue import EventQueue
from wyckoff_cli.runtime.hooks import RuntimeHooks, event_listeners

ANSWER = {"thinking": "Let me think.", "text": "The answer is 42, as computed.", "chunk_size": 3}


class Everything(RuntimeHooks):
    def __init__(self) -> None:
        self.seen: list[str] = []

    async def on_event(self, event: ev.RuntimeEvent) -> None:
        self.seen.append(event.type)


class NoDeltas(Everything):
    receives_deltas = False


class Silent(RuntimeHooks):
    """Overrides nothing: its on_event is the base's no-op."""


def test_only_hooks_that_override_on_event_listen_and_deltas_go_to_those_that_want_them() -> None:
    everything, no_deltas, silent = Everything(), NoDeltas(), Silent()
    listeners, delta_listeners = event_listeners([everything, no_deltas, silent])
    assert listeners == [everything, no_deltas]
    assert delta_listeners == [everything]
    assert event_listeners([silent]) == ([], [])


async def test_a_hook_without_deltas_sees_every_other_event_in_order(workspace: Path) -> None:
    everything, no_deltas = Everything(), NoDeltas()
    runtime, _ = make_runtime([ANSWER], [], workspace, hooks=[everything, no_deltas])
    events, _ = await collect(runtime)
    types = [e.type for e in events]
    assert types.count("text_delta") == 10 and types.count("thinking_delta") == 5
    assert everything.seen == types
    assert no_deltas.seen == [t for t in types if t not in ("text_delta", "thinking_delta")]
    assert "".join(e.text for e in events if isinstance(e, ev.TextDelta)) == ANSWER["text"]


async def test_without_delta_listeners_the_stream_is_the_same(workspace: Path) -> None:
    with_hook, _ = make_runtime([ANSWER], [], workspace, hooks=[Everything()])
    without, _ = make_runtime([ANSWER], [], workspace, hooks=[NoDeltas(), Silent()])
    first, _ = await collect(with_hook)
    second, _ = await collect(without)
    assert [(e.type, getattr(e, "text", None)) for e in first] == [
        (e.type, getattr(e, "text", None)) for e in second
    ]


async def test_the_queue_wakes_its_consumer_once_for_a_batch() -> None:
    queue = EventQueue()
    wakeups: list[list[int]] = []

    async def consume() -> None:
        while True:
            await queue.wait()
            batch = []
            while not queue.empty():
                batch.append(queue.get_nowait())
            wakeups.append(batch)
            if batch[-1] == -1:
                return

    consumer = asyncio.create_task(consume())
    await asyncio.sleep(0)  # the consumer now waits
    for item in range(5):
        queue.put_nowait(item)  # five puts in one turn of the loop: one wake-up
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    queue.put_nowait(5)
    queue.put_nowait(-1)
    await asyncio.wait_for(consumer, 5)
    assert wakeups == [[0, 1, 2, 3, 4], [5, -1]]


async def test_waiting_on_a_queue_with_items_returns_at_once() -> None:
    queue = EventQueue()
    queue.put_nowait("a")
    await asyncio.wait_for(queue.wait(), 1)
    assert queue.get_nowait() == "a" and queue.empty()
