"""Stop reasons in the runtime, over real HTTP: continuation at the output limit, a
truncated tool call told to the model, safety stops, retries and server tools as events."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.providers.conftest import make_provider
from tests.runtime.support import assert_history_valid, collect, make_tool, of_type
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import ServerToolPart
from wyckoff_cli.providers.retry import RetryingProvider, RetryPolicy
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.runtime.stop_reasons import CONTINUE_PROMPT, TRUNCATED_CALL
from wyckoff_cli.testing.fake_server import FakeServer
from wyckoff_cli.tools.registry import ToolRegistry

REAL = Path(__file__).resolve().parents[1] / "providers" / "wire" / "real_world"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def _runtime(provider: object, workspace: Path, *tools: object) -> AgentRuntime:
    registry = ToolRegistry(list(tools))  # type: ignore[arg-type]
    return AgentRuntime(provider, registry, workspace=workspace, results_dir=workspace / ".r")  # type: ignore[arg-type]


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "gemini", "openai-responses"])
async def test_text_cut_at_the_limit_is_continued_at_most_twice(
    server: FakeServer, tmp_path: Path, vendor: str
) -> None:
    server.script(
        {"text": "One, ", "stop_reason": "max_tokens"},
        {"text": "two, ", "stop_reason": "max_tokens"},
        {"text": "three", "stop_reason": "max_tokens"},
    )
    events, history = await collect(_runtime(make_provider(server, vendor), tmp_path), "count")
    done = events[-1]
    assert isinstance(done, ev.TurnDone)
    assert (done.reason, done.text, done.stop_reason, done.rounds) == (
        "completed",
        "One, two, three",
        "max_tokens",
        3,
    )
    notices = [n.message for n in of_type(events, ev.Notice)]
    assert "(1 of 2)" in notices[0] and "(2 of 2)" in notices[1]
    assert "cut off at the output-token limit (after 2 continuations)" in notices[2]
    assert [m.meta.get("synthetic") for m in history if m.role == "user"] == [
        None,
        "continuation",
        "continuation",
    ]
    assert history[1].meta["stop_reason"] == "max_tokens"
    assert len(server.requests) == 3
    last_request = str(server.bodies[2])
    assert CONTINUE_PROMPT[:40] in last_request and "One, " in last_request


async def test_a_call_cut_inside_its_arguments_is_not_run(server: FakeServer, tmp_path: Path) -> None:
    ran: list[dict[str, object]] = []

    async def write(args: dict[str, object], ctx: object) -> str:
        ran.append(args)
        return "written"

    server.script(
        {
            "text": "Writing.",
            "tool_calls": [{"name": "write_file", "args": {"path": "big.txt"}}],
            "stop_reason": "max_tokens",
        },
        {"text": "I will write it in parts."},
    )
    runtime = _runtime(make_provider(server, "anthropic"), tmp_path, make_tool("write_file", write))
    events, history = await collect(runtime, "write a big file")
    assert ran == []  # half a call never runs
    failed = of_type(events, ev.ToolFailed)
    assert len(failed) == 1 and failed[0].error == TRUNCATED_CALL
    assert any(
        "cut off at the output-token limit; it was not run" in n.message for n in of_type(events, ev.Notice)
    )
    assert_history_valid(history)
    result = server.bodies[1]["messages"][-1]["content"][0]
    assert (
        result["type"] == "tool_result" and result["is_error"] and "output-token limit" in result["content"]
    )
    assert events[-1].text == "I will write it in parts."  # type: ignore[union-attr]


async def test_a_safety_stop_is_a_clear_notice(server: FakeServer, tmp_path: Path) -> None:
    server.script({"sse_file": str(REAL / "gemini_safety.sse")})
    events, _ = await collect(_runtime(make_provider(server, "gemini"), tmp_path))
    warnings = [n.message for n in of_type(events, ev.Notice) if n.level == "warning"]
    assert warnings == [
        "The model stopped on the vendor's safety or recitation filter (SAFETY): no answer was given."
    ]
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.stop_reason == "content_filter"


async def test_a_stream_that_ends_early_is_retried_never_done(server: FakeServer, tmp_path: Path) -> None:
    server.script(
        {"sse_file": str(REAL / "anthropic_no_message_stop.sse")}, {"text": "The answer is complete."}
    )

    async def no_wait(seconds: float) -> None:
        return None

    provider = RetryingProvider(make_provider(server, "anthropic"), RetryPolicy(), sleep=no_wait)
    events, history = await collect(_runtime(provider, tmp_path))
    retry = of_type(events, ev.Retrying)
    assert len(retry) == 1 and retry[0].discarded_text == "The answer is trunc"
    assert (retry[0].attempt, retry[0].attempts) == (2, 3)
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.text == "The answer is complete."
    assert [m.text for m in history if m.role == "assistant"] == ["The answer is complete."]


async def test_server_tools_become_events_and_stay_in_history(server: FakeServer, tmp_path: Path) -> None:
    server.script({"sse_file": str(REAL / "anthropic_server_web_search.sse")}, {"text": "ok"})
    runtime = _runtime(make_provider(server, "anthropic"), tmp_path)
    events, history = await collect(runtime, "tides?")
    used = of_type(events, ev.ServerToolUsed)
    assert [u.summary for u in used][0] == "searched the web: tides in Brest"
    assert used[0].provider == "anthropic"
    assert not of_type(events, ev.ToolCallsReceived)  # nothing for the client to run
    assistant = history[1]
    assert [type(p) for p in assistant.parts][:2] == [ServerToolPart, ServerToolPart]
    events, history = await collect(runtime, "and tomorrow?", history)
    sent = server.bodies[1]["messages"][1]["content"]
    assert sent[0]["type"] == "server_tool_use" and sent[1]["type"] == "web_search_tool_result"


async def test_a_paused_server_tool_turn_is_sent_back_to_go_on(server: FakeServer, tmp_path: Path) -> None:
    server.script({"text": "Searching… ", "stop_reason": "pause"}, {"text": "Found it."})
    events, history = await collect(_runtime(make_provider(server, "anthropic"), tmp_path), "look it up")
    done = events[-1]
    assert isinstance(done, ev.TurnDone)
    assert (done.text, done.stop_reason, done.rounds) == ("Searching… Found it.", "end_turn", 2)
    sent = server.bodies[1]["messages"]
    assert sent[-1]["role"] == "assistant" and sent[-1]["content"][0]["text"] == "Searching… "
    assert [m.role for m in history] == ["user", "assistant", "assistant"]


async def test_gemini_calls_arrive_whole_so_they_run_at_the_limit(server: FakeServer, tmp_path: Path) -> None:
    ran: list[dict[str, object]] = []

    async def read(args: dict[str, object], ctx: object) -> str:
        ran.append(args)
        return "text"

    server.script(
        {"tool_calls": [{"name": "read_file", "args": {"path": "a"}}], "stop_reason": "max_tokens"},
        {"text": "Read it."},
    )
    runtime = _runtime(make_provider(server, "gemini"), tmp_path, make_tool("read_file", read))
    events, _ = await collect(runtime, "read a")
    assert ran == [{"path": "a"}]
    assert events[-1].text == "Read it."  # type: ignore[union-attr]
