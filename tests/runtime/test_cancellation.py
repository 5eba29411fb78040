"""Aborting a turn: mid-stream, mid-tool, mid-approval, and by cancelling the consumer."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.runtime.support import assert_history_valid, make_runtime, make_tool, of_type, wait_for
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.abort import AbortSignal
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.events import ApprovalRequested
from wyckoff_cli.tools.base import ToolContext


async def consume(
    runtime: Any, history: Conversation, abort: AbortSignal, sink: list[ev.RuntimeEvent]
) -> None:
    async for event in runtime.run_stream(history, "go", abort=abort):
        sink.append(event)


async def test_abort_mid_stream_closes_the_stream_and_keeps_partial_text(workspace: Path) -> None:
    rounds = [[{"text": "Partial "}, {"sleep": 30}, {"text": "never"}]]
    runtime, provider = make_runtime(rounds, [], workspace)
    abort, events, history = AbortSignal(), [], Conversation()  # type: ignore[var-annotated]
    task = asyncio.create_task(consume(runtime, history, abort, events))
    await wait_for(lambda: any(isinstance(e, ev.TextDelta) for e in events))
    abort.abort()
    await asyncio.wait_for(task, 2)
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "aborted" and done.text == "Partial "
    assert provider.closed_streams == 1
    assert history[-1].text == "Partial " and history[-1].meta == {"interrupted": True}


async def test_a_signal_aborted_before_the_turn_ends_it_at_once(workspace: Path) -> None:
    """Esc while the app waited for an MCP server: the turn starts already aborted."""
    runtime, provider = make_runtime([{"text": "never"}], [], workspace)
    abort, events, history = AbortSignal(), [], Conversation()  # type: ignore[var-annotated]
    abort.abort()
    await asyncio.wait_for(consume(runtime, history, abort, events), 5)
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "aborted"
    assert_history_valid(list(history))


async def test_abort_mid_tool_cancels_it_and_answers_every_call(workspace: Path) -> None:
    cancelled = asyncio.Event()
    started = asyncio.Event()

    async def slow(args: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    tools = [make_tool("slow", slow, concurrency_safe=True), make_tool("later")]
    rounds = [
        {
            "tool_calls": [
                {"name": "slow", "args": {"n": 1}},
                {"name": "slow", "args": {"n": 2}},
                {"name": "later", "args": {}},
            ]
        }
    ]
    runtime, _ = make_runtime(rounds, tools, workspace)
    abort, events, history = AbortSignal(), [], Conversation()  # type: ignore[var-annotated]
    task = asyncio.create_task(consume(runtime, history, abort, events))
    await asyncio.wait_for(started.wait(), 2)
    abort.abort()
    await asyncio.wait_for(task, 2)
    assert cancelled.is_set()
    assert events[-1].reason == "aborted"  # type: ignore[union-attr]
    answers = [m for m in history if m.role == "tool"]
    assert len(answers) == 3 and all(m.is_error and "Aborted" in m.text for m in answers)
    assert_history_valid(history)


async def test_abort_while_waiting_for_approval(workspace: Path) -> None:
    asked = asyncio.Event()

    async def approver(request: ApprovalRequested) -> ApprovalDecision:
        asked.set()
        await asyncio.sleep(30)
        return ApprovalDecision.allow()

    tool = make_tool("write", requires_approval=True)
    runtime, _ = make_runtime(
        [{"tool_calls": [{"name": "write", "args": {}}]}], [tool], workspace, approver=approver
    )
    abort, events, history = AbortSignal(), [], Conversation()  # type: ignore[var-annotated]
    task = asyncio.create_task(consume(runtime, history, abort, events))
    await asyncio.wait_for(asked.wait(), 2)
    abort.abort()
    await asyncio.wait_for(task, 2)
    assert events[-1].reason == "aborted"  # type: ignore[union-attr]
    assert_history_valid(history)


async def test_cancelling_the_consumer_still_delivers_done_aborted(workspace: Path) -> None:
    rounds = [[{"text": "Hi"}, {"sleep": 30}]]
    runtime, provider = make_runtime(rounds, [], workspace)
    events: list[ev.RuntimeEvent] = []
    history = Conversation()

    async def consumer() -> None:
        async for event in runtime.run_stream(history, "go"):
            events.append(event)

    task = asyncio.create_task(consumer())
    await wait_for(lambda: any(isinstance(e, ev.TextDelta) for e in events))
    task.cancel()
    await asyncio.wait({task}, timeout=2)
    assert task.done()
    assert isinstance(events[-1], ev.TurnDone) and events[-1].reason == "aborted"
    assert provider.closed_streams == 1


async def test_closing_the_generator_early_stops_the_turn(workspace: Path) -> None:
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def slow(args: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        try:
            await asyncio.sleep(30)
        finally:
            cancelled.set()
        return "x"

    runtime, _ = make_runtime(
        [{"tool_calls": [{"name": "slow", "args": {}}]}], [make_tool("slow", slow)], workspace
    )
    history = Conversation()
    stream = runtime.run_stream(history, "go")
    async for event in stream:
        if isinstance(event, ev.ToolStarted):
            break
    await asyncio.wait_for(started.wait(), 2)
    await asyncio.wait_for(stream.aclose(), 2)  # type: ignore[attr-defined]
    assert cancelled.is_set()
    assert_history_valid(history)


async def test_session_is_usable_after_an_abort(workspace: Path) -> None:
    rounds: list[Any] = [[{"text": "x"}, {"sleep": 30}], {"text": "second turn"}]
    runtime, provider = make_runtime(rounds, [], workspace)
    abort, events, history = AbortSignal(), [], Conversation()  # type: ignore[var-annotated]
    task = asyncio.create_task(consume(runtime, history, abort, events))
    await wait_for(lambda: any(isinstance(e, ev.TextDelta) for e in events))
    abort.abort()
    await task
    events2 = [e async for e in runtime.run_stream(history, "again")]
    assert events2[-1].reason == "completed"  # type: ignore[union-attr]
    assert [m.role for m in provider.requests[1].messages] == ["user", "assistant", "user"]
    assert of_type(events2, ev.TurnDone)[0].text == "second turn"


async def test_abort_mid_tool_leaves_no_pending_task_behind(workspace: Path) -> None:
    """The output reader is cancelled with the tools: a pending one is reported as
    "Task was destroyed but it is pending!" when the app quits."""
    started = asyncio.Event()

    async def slow(args: dict[str, Any], ctx: ToolContext) -> str:
        started.set()
        await asyncio.sleep(30)
        return "never"

    runtime, _ = make_runtime(
        [{"tool_calls": [{"name": "slow", "args": {}}]}], [make_tool("slow", slow)], workspace
    )
    abort, events, history = AbortSignal(), [], Conversation()  # type: ignore[var-annotated]
    task = asyncio.create_task(consume(runtime, history, abort, events))
    await asyncio.wait_for(started.wait(), 2)
    abort.abort()
    await asyncio.wait_for(task, 2)
    await asyncio.sleep(0)
    left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
    assert not [t for t in left if "Queue.get" in repr(t.get_coro())], left
