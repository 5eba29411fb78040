"""The agent loop, driven by the scripted provider."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.runtime.support import assert_history_valid, collect, make_runtime, make_tool, of_type
from tests.waiting import eventually
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.core.messages import Message
from wyckoff_cli.runtime.loop import RuntimeSettings
from wyckoff_cli.tools.base import ToolContext, ToolOutcome


async def test_text_only_turn_streams_and_completes(workspace: Path) -> None:
    runtime, provider = make_runtime(
        [
            {
                "thinking": "ponder",
                "signature": "sig1",
                "text": "Hello world",
                "chunk_size": 3,
                "usage": {"input_tokens": 50, "output_tokens": 7, "cache_read_tokens": 30},
            }
        ],
        [],
        workspace,
    )
    events, history = await collect(runtime, "hi", system_prompt="SYS")
    types = [e.type for e in events]
    assert types[:2] == ["message", "model_start"]
    assert "".join(e.text for e in of_type(events, ev.TextDelta)) == "Hello world"
    assert len(of_type(events, ev.TextDelta)) == 4
    assert of_type(events, ev.ThinkingDone)[0].text == "ponder"
    usage = of_type(events, ev.UsageReported)
    assert [(u.input_tokens, u.cache_read_tokens) for u in usage] == [(50, 30)]
    done = events[-1]
    assert isinstance(done, ev.TurnDone)
    assert (done.reason, done.text, done.rounds) == ("completed", "Hello world", 1)
    assert done.usage["input_tokens"] == 50
    assert [m.role for m in history] == ["user", "assistant"]
    thinking = history[1].thinking[0]
    assert (thinking.text, thinking.signature) == ("ponder", "sig1")
    assert provider.requests[0].system_prompt == "SYS"


async def test_fragmented_tool_calls_are_assembled_and_answered_in_order(workspace: Path) -> None:
    seen: list[dict[str, Any]] = []

    async def record(args: dict[str, Any], ctx: ToolContext) -> str:
        seen.append(args)
        return f"read {args['path']}"

    tool = make_tool("read", record, concurrency_safe=True)
    rounds = [
        {
            "text": "Reading.",
            "fragments": 5,
            "tool_calls": [
                {"name": "read", "args": {"path": "a.py", "limit": 40}},
                {"name": "read", "args": {"path": "b.py"}},
            ],
        },
        {"text": "Both read."},
    ]
    runtime, provider = make_runtime(rounds, [tool], workspace)
    events, history = await collect(runtime)
    assert seen == [{"path": "a.py", "limit": 40}, {"path": "b.py"}]
    calls = of_type(events, ev.ToolCallsReceived)[0].calls
    assert [c["args"] for c in calls] == seen
    assert [m.role for m in history] == ["user", "assistant", "tool", "tool", "assistant"]
    assert history[1].parts[0].text == "Reading."  # type: ignore[union-attr]
    assert [m.text for m in history[2:4]] == ["read a.py", "read b.py"]
    # the model saw the results on its second call
    second = provider.requests[1].messages
    assert [m.role for m in second] == ["user", "assistant", "tool", "tool"]
    assert of_type(events, ev.TurnDone)[0].rounds == 2
    assert_history_valid(history)


async def test_safe_calls_run_concurrently_capped_at_five_results_in_call_order(workspace: Path) -> None:
    running = 0
    peak = 0

    async def slow(args: dict[str, Any], ctx: ToolContext) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05 * (8 - args["n"]) / 8)  # later calls finish first
        running -= 1
        return f"n={args['n']}"

    tool = make_tool("probe", slow, concurrency_safe=True)
    calls = [{"name": "probe", "args": {"n": n}} for n in range(8)]
    runtime, _ = make_runtime([{"tool_calls": calls}, {"text": "ok"}], [tool], workspace)
    events, history = await collect(runtime)
    assert peak == 5
    assert [m.text for m in history if m.role == "tool"] == [f"n={n}" for n in range(8)]
    assert [e.id for e in of_type(events, ev.ToolSucceeded)] == [f"call_r1_{n + 1}" for n in range(8)]


async def test_unsafe_calls_run_one_at_a_time(workspace: Path) -> None:
    running = 0
    peak = 0
    order: list[str] = []

    async def write(args: dict[str, Any], ctx: ToolContext) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        order.append(f"start {args['n']}")
        await asyncio.sleep(0.01)
        order.append(f"end {args['n']}")
        running -= 1
        return "written"

    tools = [make_tool("write", write), make_tool("read", concurrency_safe=True)]
    calls = [
        {"name": "read", "args": {"a": 1}},
        {"name": "write", "args": {"n": 1}},
        {"name": "write", "args": {"n": 2}},
        {"name": "read", "args": {"a": 2}},
    ]
    runtime, _ = make_runtime([{"tool_calls": calls}, {"text": "ok"}], tools, workspace)
    _, history = await collect(runtime)
    assert peak == 1
    assert order == ["start 1", "end 1", "start 2", "end 2"]
    assert_history_valid(history)


async def test_bad_calls_become_tool_errors_and_the_loop_goes_on(workspace: Path) -> None:
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    }
    tool = make_tool("read_file", schema=schema)
    rounds = [
        [
            {"raw_tool_call": {"name": "read_file", "arguments": '{"path": "a.py"'}},  # repaired
            {"raw_tool_call": {"name": "read_file", "arguments": "{path: a.py}"}},
            {"tool_call": {"name": "nope", "args": {}}},
            {"tool_call": {"name": "read_file", "args": {"path": 3, "extra": True}}},
            {"usage": {"input_tokens": 1}},
        ],
        {"text": "fixed"},
    ]
    runtime, provider = make_runtime(rounds, [tool], workspace)
    events, history = await collect(runtime)
    errors = of_type(events, ev.ToolFailed)
    assert len(errors) == 3
    assert "not valid JSON" in errors[0].error and "line 1, column 2" in errors[0].error
    assert "Unknown tool 'nope'" in errors[1].error and "read_file" in errors[1].error
    assert "arguments.path must be string" in errors[2].error
    assert "arguments.extra is not a known argument" in errors[2].error
    assert of_type(events, ev.ToolSucceeded)[0].result.startswith("read_file ok")
    assert events[-1].reason == "completed"  # type: ignore[union-attr]
    tool_messages = [m for m in provider.requests[1].messages if m.role == "tool"]
    assert [m.is_error for m in tool_messages] == [False, True, True, True]
    assert_history_valid(history)


async def test_tool_error_and_crash_are_reported_to_the_model(workspace: Path) -> None:
    async def fails(args: dict[str, Any], ctx: ToolContext) -> str:
        raise ToolError("file not found: x.py")

    async def crashes(args: dict[str, Any], ctx: ToolContext) -> str:
        raise RuntimeError("boom")

    tools = [make_tool("fails", fails), make_tool("crashes", crashes)]
    calls = [{"name": "fails", "args": {}}, {"name": "crashes", "args": {}}]
    runtime, _ = make_runtime([{"tool_calls": calls}, {"text": "sorry"}], tools, workspace)
    events, _ = await collect(runtime)
    errors = [e.error for e in of_type(events, ev.ToolFailed)]
    assert errors == ["file not found: x.py", "crashes failed unexpectedly: RuntimeError: boom"]
    assert events[-1].reason == "completed"  # type: ignore[union-attr]


async def test_doom_loop_refuses_third_identical_call_and_aborts_the_batch(workspace: Path) -> None:
    tool = make_tool("grep", concurrency_safe=True)
    same = {"name": "grep", "args": {"pattern": "x"}}
    rounds = [
        {"tool_calls": [same]},
        {"tool_calls": [same]},
        {"tool_calls": [same, {"name": "grep", "args": {"pattern": "y"}}]},
        {"text": "I will stop."},
    ]
    runtime, _ = make_runtime(rounds, [tool], workspace)
    events, history = await collect(runtime)
    failures = of_type(events, ev.ToolFailed)
    assert len(failures) == 2
    assert "3 times within the last 6 calls" in failures[0].error
    assert failures[1].error.startswith("Not run")
    assert len(of_type(events, ev.ToolSucceeded)) == 2
    assert_history_valid(history)


async def test_large_results_are_offloaded_with_a_preview(workspace: Path) -> None:
    big = "".join(f"line {n}\n" for n in range(3000))

    async def dump(args: dict[str, Any], ctx: ToolContext) -> str:
        return big

    runtime, _ = make_runtime(
        [{"tool_calls": [{"name": "dump", "args": {}}]}, {"text": "ok"}], [make_tool("dump", dump)], workspace
    )
    events, history = await collect(runtime)
    result = of_type(events, ev.ToolSucceeded)[0]
    assert result.offloaded_path is not None
    path = Path(result.offloaded_path)
    assert path.read_text() == big
    assert path.stat().st_mode & 0o777 == 0o600
    assert len(result.result) < 8_000
    assert str(path) in result.result and "read_file" in result.result
    assert "line 0" in result.result and "line 2999" in result.result
    assert history[2].text == result.result


async def test_display_data_reaches_events_not_the_model(workspace: Path) -> None:
    async def edit(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        return ToolOutcome("edited a.py", {"diff": "-a\n+b"})

    runtime, provider = make_runtime(
        [{"tool_calls": [{"name": "edit", "args": {}}]}, {"text": "ok"}], [make_tool("edit", edit)], workspace
    )
    events, _ = await collect(runtime)
    assert of_type(events, ev.ToolSucceeded)[0].display == {"diff": "-a\n+b"}
    assert provider.requests[1].messages[-1].text == "edited a.py"


async def test_round_limit_ends_turn_with_every_call_answered(workspace: Path) -> None:
    tool = make_tool("step", concurrency_safe=True)
    rounds = [{"tool_calls": [{"name": "step", "args": {"n": n}}]} for n in range(5)]
    runtime, provider = make_runtime(rounds, [tool], workspace, settings=RuntimeSettings(max_tool_rounds=2))
    events, history = await collect(runtime)
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "max_tool_rounds"
    assert len(of_type(events, ev.ToolSucceeded)) == 2
    assert "limit of 2 tool rounds" in of_type(events, ev.ToolFailed)[0].error
    assert len(provider.requests) == 3
    assert_history_valid(history)
    # the session stays usable: a next turn works on the same history
    provider.rounds.append({"text": "continuing"})
    provider._next = len(provider.rounds) - 1
    events2, _ = await collect(runtime, "continue", history)
    assert events2[-1].reason == "completed"  # type: ignore[union-attr]


async def test_completes_run_tool_ends_the_run(workspace: Path) -> None:
    async def finish(args: dict[str, Any], ctx: ToolContext) -> str:
        return "all done"

    tools = [make_tool("finish", finish, completes_run=True)]
    runtime, provider = make_runtime(
        [{"tool_calls": [{"name": "finish", "args": {}}]}, {"text": "never"}], tools, workspace
    )
    events, _ = await collect(runtime)
    done = events[-1]
    assert isinstance(done, ev.TurnDone)
    assert (done.reason, done.text) == ("completed_by_tool", "all done")
    assert provider.remaining == 1


async def test_provider_error_fails_the_turn_and_keeps_partial_text(workspace: Path) -> None:
    runtime, _ = make_runtime(
        [{"text": "partial answer", "error": {"kind": "rate_limited", "message": "slow down"}}], [], workspace
    )
    events, history = await collect(runtime)
    failed = of_type(events, ev.TurnFailed)[0]
    assert (failed.kind, failed.message, failed.retryable) == ("rate_limited", "slow down", True)
    assert events[-1].reason == "error"  # type: ignore[union-attr]
    assert history[-1].text == "partial answer"
    assert history[-1].meta == {"interrupted": True}


async def test_message_events_mirror_history(workspace: Path) -> None:
    runtime, _ = make_runtime(
        [{"tool_calls": [{"name": "t", "args": {}}]}, {"text": "ok"}], [make_tool("t")], workspace
    )
    events, history = await collect(runtime)
    committed = [Message.from_dict(e.message) for e in of_type(events, ev.MessageCommitted)]
    assert committed == history


async def test_background_tool_returns_task_id_and_notifies_next_round(workspace: Path) -> None:
    release = asyncio.Event()

    async def build(args: dict[str, Any], ctx: ToolContext) -> str:
        ctx.emit_output("compiling\n")
        await release.wait()
        return "build finished"

    async def wait_tool(args: dict[str, Any], ctx: ToolContext) -> str:
        release.set()
        assert ctx.background is not None
        await eventually(
            lambda: (task := ctx.background.get("bg-1")) is not None and task.status == "completed"
        )
        return "waited"

    tools = [make_tool("build", build, background=True), make_tool("wait", wait_tool)]
    rounds = [
        {"tool_calls": [{"name": "build", "args": {}}]},
        {"tool_calls": [{"name": "wait", "args": {}}]},
        {"text": "the build finished"},
    ]
    runtime, provider = make_runtime(rounds, tools, workspace)
    events, history = await collect(runtime)
    started = of_type(events, ev.ToolSucceeded)[0]
    assert "bg-1" in started.result
    update = of_type(events, ev.BackgroundTaskUpdate)[0]
    assert (update.task_id, update.status) == ("bg-1", "completed")
    note = provider.requests[2].messages[-1]
    assert note.role == "user" and "bg-1" in note.text and "build finished" in note.text
    assert "compiling" in note.text
    await runtime.close()


async def test_offloaded_results_are_written_without_secrets(workspace: Path) -> None:
    secret = "sk-test-" + "x" * 30
    big = f"token={secret}\n" + "line\n" * 3000

    async def dump(args: dict[str, Any], ctx: ToolContext) -> str:
        return big

    runtime, _ = make_runtime(
        [{"tool_calls": [{"name": "dump", "args": {}}]}, {"text": "ok"}],
        [make_tool("dump", dump)],
        workspace,
        redact=lambda text: text.replace(secret, "[REDACTED]"),
    )
    events, _ = await collect(runtime)
    path = Path(of_type(events, ev.ToolSucceeded)[0].offloaded_path or "")
    written = path.read_text()
    assert secret not in written and written.startswith("token=[REDACTED]\n")
    assert len(written.splitlines()) == 3001
