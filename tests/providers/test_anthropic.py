"""Claude adapter: streaming through the real SDK, conversion, thinking, sliding cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.providers.conftest import READ_FILE, TOOLS, call, make_provider, wire_file
from tests.runtime.support import collect, make_tool
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.anthropic import (
    AnthropicProvider,
    apply_cache_breakpoints,
    convert_messages,
    default_max_tokens,
)
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.testing.fake_server import FakeServer
from wyckoff_cli.tools.registry import ToolRegistry


def _provider(**spec: Any) -> AnthropicProvider:
    return AnthropicProvider(ModelSpec("anthropic", "claude-sonnet-4-5", **spec), api_key="k")


def _breakpoints(body: dict[str, Any]) -> list[tuple[str, int, int]]:
    """Where cache_control sits: ("system", 0, i) / ("tools", 0, i) / ("messages", m, b)."""
    found = []
    for i, block in enumerate(body.get("system") or []):
        if "cache_control" in block:
            found.append(("system", 0, i))
    for i, tool in enumerate(body.get("tools") or []):
        if "cache_control" in tool:
            found.append(("tools", 0, i))
    for m, message in enumerate(body["messages"]):
        for b, block in enumerate(message["content"]):
            if isinstance(block, dict) and "cache_control" in block:
                found.append(("messages", m, b))
    return found


async def test_reference_stream_gives_thinking_text_call_and_usage(server: FakeServer) -> None:
    server.script({"sse_file": wire_file("anthropic_stream.sse")})
    parts, usage, _ = await call(make_provider(server, "anthropic"))
    assert parts == [
        ThinkingPart(
            "The user wants the file. I should call read_file.",
            signature="EqQBCgIYAhIMsig==",
            provider="anthropic",
        ),
        TextPart("Let me read that file."),
        ToolCallPart("toolu_01ABC", "read_file", {"path": "src/main.py", "limit": 40}),
    ]
    # input_tokens includes cache reads and writes (25 + 3400 + 1200).
    assert usage == Usage(4625, 87, 3400, 1200)


async def test_parallel_fragmented_tool_calls(server: FakeServer) -> None:
    server.script(
        {
            "text": "Reading both.",
            "chunk_size": 3,
            "tool_calls": [
                {"name": "read_file", "args": {"path": "a.py", "limit": 10}},
                {"name": "list_dir", "args": {"path": "src/deep/nested"}},
            ],
            "fragments": 4,
            "usage": {"input_tokens": 900, "output_tokens": 30, "cache_read_tokens": 800},
        }
    )
    parts, usage, chunks = await call(make_provider(server, "anthropic"))
    assert parts[0] == TextPart("Reading both.")
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    assert [(c.name, c.arguments) for c in calls] == [
        ("read_file", {"path": "a.py", "limit": 10}),
        ("list_dir", {"path": "src/deep/nested"}),
    ]
    assert usage == Usage(900, 30, 800, 0)
    assert len(chunks) > 10  # really streamed in pieces


async def test_request_body_has_system_tools_and_breakpoints(server: FakeServer) -> None:
    server.script({"text": "ok"})
    await call(make_provider(server, "anthropic"), system="Be brief.")
    body = server.bodies[0]
    assert body["model"] == "claude-sonnet-4-5"
    assert body["max_tokens"] == 32_000
    assert body["system"] == [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    assert body["tools"][0] == {
        "name": "read_file",
        "description": READ_FILE.description,
        "input_schema": READ_FILE.parameters,
    }
    assert _breakpoints(body) == [("system", 0, 0), ("messages", 0, 0)]
    assert "thinking" not in body
    assert server.requests[0].headers["authorization"] == "Bearer test-key-0123456789"


async def test_without_system_prompt_the_last_tool_is_cached(server: FakeServer) -> None:
    server.script({"text": "ok"})
    await call(make_provider(server, "anthropic"), system="")
    assert _breakpoints(server.bodies[0]) == [("tools", 0, 1), ("messages", 0, 0)]


async def test_cache_breakpoints_slide_across_a_tool_loop_with_thinking(
    server: FakeServer, tmp_path: Path
) -> None:
    """A 4-round tool loop through the real runtime: every request marks the system
    block, the end of the previous request's history and the newest block; thinking
    blocks come back unchanged with their signatures."""
    rounds = 3
    for n in range(rounds):
        server.script(
            {
                "thinking": f"round {n} thinking",
                "signature": f"sig-{n}",
                "text": f"Round {n}.",
                "tool_calls": [{"name": "probe", "args": {"n": n}, "id": f"toolu_{n}"}],
            }
        )
    server.script({"text": "All done."})
    provider = make_provider(server, "anthropic", thinking="budget", thinking_budget=2048)
    runtime = AgentRuntime(
        provider, ToolRegistry([make_tool("probe")]), workspace=tmp_path, results_dir=tmp_path / "results"
    )
    events, history = await collect(runtime, "go", system_prompt="You are Wyckoff.")
    assert [e for e in events if isinstance(e, ev.TurnDone)][0].reason == "completed"
    bodies = server.bodies
    assert len(bodies) == rounds + 1
    for n, body in enumerate(bodies):
        marks = _breakpoints(body)
        assert len(marks) <= 4
        assert marks[0] == ("system", 0, 0)
        last = len(body["messages"]) - 1
        assert ("messages", last, len(body["messages"][last]["content"]) - 1) in marks
        if n:
            # the previous request's final block is still a breakpoint, at the same place
            previous_last = len(bodies[n - 1]["messages"]) - 1
            assert ("messages", previous_last, len(body["messages"][previous_last]["content"]) - 1) in marks
            assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
        # roles alternate and every tool_use is answered right after
        roles = [m["role"] for m in body["messages"]]
        assert all(a != b for a, b in zip(roles, roles[1:], strict=False))
    final = bodies[-1]["messages"]
    for n in range(rounds):
        assistant = final[1 + 2 * n]
        assert assistant["content"][0] == {
            "type": "thinking",
            "thinking": f"round {n} thinking",
            "signature": f"sig-{n}",
        }
        assert assistant["content"][-1]["type"] == "tool_use"
        result = final[2 + 2 * n]["content"][0]
        assert result["type"] == "tool_result" and result["tool_use_id"] == f"toolu_{n}"
    assert history[-1].text == "All done."


def test_conversion_merges_roles_and_orders_tool_results() -> None:
    messages = [
        Message.user("hello"),
        Message(
            "assistant",
            (
                ThinkingPart("mine", signature="s1", provider="anthropic"),
                ThinkingPart("theirs", signature="g", provider="gemini"),
                ThinkingPart("", provider="anthropic", redacted_data="opaque"),
                TextPart("calling"),
                ToolCallPart("call.1:x", "read_file", {"path": "a"}),
                ToolCallPart("call_2", "list_dir", {"path": "."}),
            ),
        ),
        Message.tool_result("call_2", "list_dir", "a\nb"),
        Message.tool_result("call.1:x", "read_file", "no such file", is_error=True),
        Message.user("Please also check b.", synthetic="loop_guard"),
    ]
    out = convert_messages(messages)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert out[1]["content"] == [
        {"type": "thinking", "thinking": "mine", "signature": "s1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "calling"},
        {"type": "tool_use", "id": "call_1_x", "name": "read_file", "input": {"path": "a"}},
        {"type": "tool_use", "id": "call_2", "name": "list_dir", "input": {"path": "."}},
    ]
    assert out[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1_x", "content": "no such file", "is_error": True},
        {"type": "tool_result", "tool_use_id": "call_2", "content": "a\nb"},
        {"type": "text", "text": "Please also check b."},
    ]


def test_orphan_results_become_text_and_missing_results_are_filled() -> None:
    out = convert_messages(
        [
            Message.user("hi"),
            Message.tool_result("gone", "read_file", "stale"),
            Message("assistant", (ToolCallPart("c1", "read_file", {}),)),
        ]
    )
    assert out[0]["content"][1] == {"type": "text", "text": "[tool result gone]\nstale"}
    assert out[-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "(no result)", "is_error": True}],
    }


def test_breakpoints_never_exceed_four_and_skip_thinking() -> None:
    system = [{"type": "text", "text": "s"}]
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "a"}, {"type": "thinking", "thinking": "t"}],
        },
    ]
    assert apply_cache_breakpoints(system, [], messages) == 3
    assert "cache_control" in messages[1]["content"][0]
    assert "cache_control" not in messages[1]["content"][1]


def test_thinking_settings_and_max_tokens() -> None:
    assert _provider(thinking="adaptive").build_request([Message.user("x")], [], "")["thinking"] == {
        "type": "adaptive"
    }
    budget = _provider(thinking="budget", thinking_budget=40_000, max_tokens=16_000)
    request = budget.build_request([Message.user("x")], [], "")
    assert request["thinking"] == {"type": "enabled", "budget_tokens": 40_000}
    assert request["max_tokens"] > 40_000
    assert default_max_tokens("claude-opus-4-1") == 32_000
    assert default_max_tokens("claude-3-5-haiku-latest") == 8_192
    assert default_max_tokens("some-new-model") == 8_192
    assert _provider(max_tokens=1234).build_request([Message.user("x")], [], "")["max_tokens"] == 1234


def test_thinking_is_left_out_when_the_tool_loop_started_on_another_vendor() -> None:
    history = [
        Message.user("go"),
        Message("assistant", (ThinkingPart("r", provider="openai"), ToolCallPart("c1", "read_file", {}))),
        Message.tool_result("c1", "read_file", "text"),
    ]
    request = _provider(thinking="adaptive").build_request(history, TOOLS, "s")
    assert "thinking" not in request
    assert [b["type"] for b in request["messages"][1]["content"]] == ["tool_use"]


def test_key_is_not_in_the_repr() -> None:
    provider = AnthropicProvider(
        ModelSpec("anthropic", "m", api_key="sk-ant-secret-value"), api_key="sk-ant-secret-value"
    )
    assert "secret" not in repr(provider)
    assert "secret" not in repr(provider.spec)
