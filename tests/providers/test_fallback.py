"""FallbackProvider: order, retryable-only switching, discarded partial output, cool-down,
and history crossing vendors over real HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providers.conftest import drain, make_provider
from tests.runtime.support import collect, make_tool
from wyckoff_cli.core import errors as provider_errors
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message, ThinkingPart, ToolCallPart
from wyckoff_cli.providers.base import FallbackChunk, TextChunk, UsageChunk
from wyckoff_cli.providers.fallback import FallbackProvider
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.testing.fake_server import FakeServer
from wyckoff_cli.tools.registry import ToolRegistry


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _texts(chunks: list[object]) -> list[str]:
    return [c.text for c in chunks if isinstance(c, TextChunk)]


async def test_switches_on_a_retryable_error_before_output() -> None:
    first = ScriptedProvider([{"error": {"kind": "rate_limited", "message": "429"}}], model="a:one")
    second = ScriptedProvider([{"text": "from two"}], model="b:two")
    chunks = await drain(FallbackProvider([first, second]).chat_stream([Message.user("x")], [], ""))
    assert chunks[0] == FallbackChunk("a:one", "b:two", "429")
    assert _texts(chunks) == ["from two"]


async def test_partial_output_is_marked_for_discarding() -> None:
    first = ScriptedProvider(
        [[{"text": "Partial"}, {"error": {"kind": "server", "message": "boom"}}]], model="a:one"
    )
    second = ScriptedProvider([{"text": "Whole answer."}], model="b:two")
    chunks = await drain(FallbackProvider([first, second]).chat_stream([Message.user("x")], [], ""))
    kinds = [type(c).__name__ for c in chunks]
    assert kinds[:2] == ["TextChunk", "FallbackChunk"]
    assert _texts(chunks) == ["Partial", "Whole answer."]
    assert first.closed_streams == 1


@pytest.mark.parametrize("kind", ["auth", "bad_request", "context_too_long", "configuration"])
async def test_non_retryable_errors_are_raised(kind: str) -> None:
    first = ScriptedProvider([{"error": {"kind": kind, "message": "no"}}], model="a:one")
    second = ScriptedProvider([{"text": "unused"}], model="b:two")
    with pytest.raises(provider_errors.ProviderError) as caught:
        await drain(FallbackProvider([first, second]).chat_stream([Message.user("x")], [], ""))
    assert caught.value.kind == kind
    assert second.requests == []


async def test_cool_down_skips_a_model_that_just_failed() -> None:
    clock = Clock()
    first = ScriptedProvider(
        [{"error": {"kind": "timeout", "message": "slow"}}, {"text": "one is back"}], model="a:one"
    )
    second = ScriptedProvider([{"text": "two"}, {"text": "two again"}], model="b:two")
    chain = FallbackProvider([first, second], cooldown=60, clock=clock)
    assert chain.name == "a:one"
    await drain(chain.chat_stream([Message.user("x")], [], ""))
    assert chain.name == "b:two" and chain.cooling_down() == ["a:one"]
    chunks = await drain(chain.chat_stream([Message.user("x")], [], ""))
    assert _texts(chunks) == ["two again"] and len(first.requests) == 1  # skipped, no FallbackChunk
    assert not any(isinstance(c, FallbackChunk) for c in chunks)
    clock.now += 61
    chunks = await drain(chain.chat_stream([Message.user("x")], [], ""))
    assert _texts(chunks) == ["one is back"]


async def test_when_every_model_fails_the_last_error_is_raised() -> None:
    first = ScriptedProvider([{"error": {"kind": "server"}}], model="a:one")
    second = ScriptedProvider([{"error": {"kind": "rate_limited", "message": "also busy"}}], model="b:two")
    chain = FallbackProvider([first, second])
    with pytest.raises(provider_errors.RateLimited, match="also busy"):
        await drain(chain.chat_stream([Message.user("x")], [], ""))
    # both cool down; the next call still tries them in order
    assert chain.name == "a:one"


async def test_cross_vendor_fallback_mid_stream_through_the_runtime(
    server: FakeServer, tmp_path: Path
) -> None:
    """Claude streams "Partial" then fails with an in-stream overload; the OpenAI
    fallback answers. The UI is told to drop "Partial"; history holds the answer once;
    the history sent to OpenAI keeps the tool call and result, not Claude's thinking."""
    server.script(
        {
            "thinking": "plan",
            "signature": "sig-1",
            "tool_calls": [{"name": "probe", "args": {"n": 1}, "id": "toolu_1"}],
        },
        {"text": "Partial", "midstream_error": {"type": "overloaded_error", "message": "Overloaded"}},
        {"text": "The complete answer.", "chunk_size": 6},
    )
    claude = make_provider(server, "anthropic", watchdog=True)
    gpt = make_provider(server, "openai", watchdog=True)
    chain = FallbackProvider([claude, gpt], cooldown=60)
    runtime = AgentRuntime(
        chain, ToolRegistry([make_tool("probe")]), workspace=tmp_path, results_dir=tmp_path / "r"
    )
    events, history = await collect(runtime, "go")
    switched = [e for e in events if isinstance(e, ev.FallbackSwitched)]
    assert len(switched) == 1
    assert (switched[0].from_model, switched[0].to_model) == (
        "anthropic:claude-sonnet-4-5",
        "openai:gpt-test",
    )
    assert switched[0].discarded_text == "Partial"
    assert "Overloaded" in switched[0].error
    assert "anthropic:claude-sonnet-4-5" not in switched[0].error  # the notice names the model once
    done = [e for e in events if isinstance(e, ev.TurnDone)][0]
    assert done.reason == "completed" and done.text == "The complete answer."
    assert [m.text for m in history if m.role == "assistant"] == ["", "The complete answer."]
    assert history[-1].meta["model"] == "openai:gpt-test"
    assert not any("Partial" in m.text for m in history)
    sent = server.bodies[2]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert "reasoning_content" not in sent[1]
    assert sent[1]["tool_calls"][0]["id"] == "toolu_1"
    assert sent[2]["tool_call_id"] == "toolu_1"
    assert chain.name == "openai:gpt-test"  # Claude cools down


async def test_cross_vendor_fallback_before_output_and_back(server: FakeServer) -> None:
    """Gemini is rate limited before any output: OpenAI answers; the history with
    Gemini's signed call converts cleanly for the other vendors."""
    server.script({"status": 429}, {"text": "openai here"})
    gemini = make_provider(server, "gemini")
    gpt = make_provider(server, "openai")
    history = [
        Message.user("go"),
        Message(
            "assistant",
            (
                ThinkingPart("gemini thought", provider="gemini", signature="c2ln"),
                ToolCallPart(
                    "call_1", "read_file", {"path": "a"}, extra={"gemini_thought_signature": "c2ln"}
                ),
            ),
        ),
        Message.tool_result("call_1", "read_file", "text"),
    ]
    chunks = await drain(FallbackProvider([gemini, gpt]).chat_stream(history, [], ""))
    assert isinstance(chunks[0], FallbackChunk)
    assert _texts(chunks) == ["openai here"]
    usage = [c for c in chunks if isinstance(c, UsageChunk)]
    assert len(usage) == 1 and usage[0].model == "openai:gpt-test"
    sent = server.bodies[1]["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a"}'},
            }
        ],
    }
