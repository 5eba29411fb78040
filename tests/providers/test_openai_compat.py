"""OpenAI-compatible adapter: streaming, reasoning, parameter dropping, text tool calls."""

from __future__ import annotations

import pytest

from tests.providers.conftest import READ_FILE, TOOLS, call, make_provider, wire_file
from wyckoff_cli.core.errors import AuthenticationFailed, BadRequest, ContextTooLong
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import ThinkingChunk
from wyckoff_cli.providers.openai_compat import OpenAICompatProvider, convert_messages
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.testing.fake_server import FakeServer


async def test_reference_stream_gives_text_parallel_calls_and_cached_usage(server: FakeServer) -> None:
    server.script({"sse_file": wire_file("openai_stream.sse")})
    parts, usage, _ = await call(make_provider(server, "openai"))
    assert parts == [
        TextPart("Let me check."),
        ToolCallPart("call_abc123", "read_file", {"path": "src/main.py"}),
        ToolCallPart("call_def456", "list_dir", {"path": "."}),
    ]
    assert usage == Usage(1850, 42, 1536, 0)


async def test_deepseek_reasoning_is_thinking_and_cache_hits_count(server: FakeServer) -> None:
    server.script(
        {"sse_file": wire_file("deepseek_stream.sse")},
        {
            "thinking": "Look first.",
            "text": "Done.",
            "usage_style": "deepseek",
            "usage": {"input_tokens": 500, "output_tokens": 9, "cache_read_tokens": 384},
        },
        {"thinking": "Via the other field.", "reasoning_field": "reasoning", "text": "ok"},
    )
    provider = make_provider(server, "openai", model="deepseek-reasoner")
    parts, usage, _ = await call(provider)
    assert parts == [
        ThinkingPart("Think: user says hi. Reply briefly.", provider="openai"),
        TextPart("Hello!"),
    ]
    assert usage == Usage(12, 20, 0, 0, 15)
    _, usage, _ = await call(provider)
    assert usage == Usage(500, 9, 384, 0)
    parts, _, _ = await call(provider)
    assert parts[0] == ThinkingPart("Via the other field.", provider="openai")


async def test_interleaved_fragmented_parallel_calls(server: FakeServer) -> None:
    server.script(
        {
            "tool_calls": [
                {"name": "read_file", "args": {"path": "a/b/c.py", "limit": 5}},
                {"name": "list_dir", "args": {"path": "x"}},
            ],
            "fragments": 5,
            "interleave": True,
        }
    )
    parts, _, _ = await call(make_provider(server, "openai"))
    assert [(p.name, p.arguments) for p in parts if isinstance(p, ToolCallPart)] == [
        ("read_file", {"path": "a/b/c.py", "limit": 5}),
        ("list_dir", {"path": "x"}),
    ]


async def test_first_request_carries_options_and_tool_schemas(server: FakeServer) -> None:
    server.script({"text": "ok"})
    provider = make_provider(
        server, "openai", temperature=0.2, top_p=0.9, reasoning_effort="low", max_tokens=500
    )
    await call(provider, system="Be brief.")
    body = server.bodies[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tool_choice"] == "auto"
    assert (body["temperature"], body["top_p"], body["reasoning_effort"], body["max_tokens"]) == (
        0.2,
        0.9,
        "low",
        500,
    )
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": READ_FILE.description,
            "parameters": READ_FILE.parameters,
        },
    }
    assert body["messages"][:2] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]


async def test_rejected_parameters_are_dropped_step_by_step_and_remembered(server: FakeServer) -> None:
    server.script(
        {
            "status": 400,
            "error_message": "Unsupported parameter: 'temperature'",
            "error_param": "temperature",
        },
        {"status": 400, "error_message": "stream_options is not supported by this endpoint"},
        {"text": "finally"},
        {"text": "again"},
    )
    provider = make_provider(server, "openai", temperature=0.3)
    parts, _, _ = await call(provider)
    assert parts == [TextPart("finally")]
    bodies = server.bodies
    assert "temperature" in bodies[0] and "stream_options" in bodies[0]
    assert "temperature" not in bodies[1] and "stream_options" in bodies[1]
    assert "temperature" not in bodies[2] and "stream_options" not in bodies[2]
    assert "tool_choice" in bodies[2]
    await call(provider)  # the next call remembers: no new rejections needed
    assert len(server.bodies) == 4
    assert "temperature" not in server.bodies[3] and "stream_options" not in server.bodies[3]
    assert isinstance(provider, OpenAICompatProvider)
    assert provider.dropped == {"temperature", "stream_options"}


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ({"status": 401, "error_message": "Incorrect API key provided"}, AuthenticationFailed),
        (
            {
                "status": 400,
                "error_message": "maximum context length",
                "error_code": "context_length_exceeded",
            },
            ContextTooLong,
        ),
        ({"status": 400, "error_message": "messages[1].content must be a string"}, BadRequest),
    ],
)
async def test_other_errors_are_never_retried_without_parameters(
    server: FakeServer, answer: dict[str, object], error: type[Exception]
) -> None:
    server.script(answer, {"text": "should not be reached"})
    with pytest.raises(error):
        await call(make_provider(server, "openai", temperature=0.3))
    assert len(server.requests) == 1


async def test_reasoning_goes_back_on_tool_call_messages_of_the_current_turn(server: FakeServer) -> None:
    server.script(
        {"thinking": "Need the file.", "tool_calls": [{"name": "read_file", "args": {"path": "a"}}]},
        {"text": "ok"},
    )
    provider = make_provider(server, "openai", model="deepseek-reasoner")
    parts, _, _ = await call(provider, [Message.user("read a")])
    history = [
        Message.user("earlier"),
        Message(
            "assistant", (ThinkingPart("old turn", provider="openai"), ToolCallPart("c0", "read_file", {}))
        ),
        Message.tool_result("c0", "read_file", "x"),
        Message.user("read a"),
        Message("assistant", tuple(parts)),
        Message.tool_result(parts[-1].id, "read_file", "contents"),  # type: ignore[union-attr]
    ]
    await call(provider, history)
    messages = server.bodies[1]["messages"]
    assert "reasoning_content" not in messages[2]  # an earlier turn: not sent
    assert messages[5]["reasoning_content"] == "Need the file."
    assert messages[5]["tool_calls"][0]["function"] == {"name": "read_file", "arguments": '{"path": "a"}'}
    assert messages[6] == {"role": "tool", "tool_call_id": parts[-1].id, "content": "contents"}  # type: ignore[union-attr]


def test_official_endpoint_gets_no_reasoning_and_history_stays_valid() -> None:
    provider = OpenAICompatProvider(ModelSpec("openai", "gpt-5"), api_key="k")
    assert not provider.send_reasoning
    out = convert_messages(
        [
            Message.user("q"),
            Message(
                "assistant", (ThinkingPart("t", provider="anthropic"), ToolCallPart("c1", "read_file", {}))
            ),
            Message.tool_result("zz", "read_file", "orphan"),
            Message.tool_result("c1", "read_file", "boom", is_error=True),
        ],
        "",
        send_reasoning=False,
    )
    assert out[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        ],
    }
    assert out[2] == {"role": "user", "content": "[result of read_file]\norphan"}
    assert out[3] == {"role": "tool", "tool_call_id": "c1", "content": "Error: boom"}


async def test_text_tool_calls_become_real_calls(server: FakeServer) -> None:
    text = (
        "I will look.\n<tool_call>\n"
        '{"name": "read_file", "arguments": {"path": "a.py", "opts": {"deep": {"x": [1, 2]}}}}\n'
        "</tool_call>\n<tool_call>"
        '{"name": "list_dir", "arguments": "{\\"path\\": \\".\\"}"}'
        "</tool_call>"
    )
    server.script({"text": text, "chunk_size": 3})
    parts, _, chunks = await call(make_provider(server, "openai", model="qwen3-coder"))
    assert parts[0] == TextPart("I will look.")
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    assert [(c.name, c.arguments) for c in calls] == [
        ("read_file", {"path": "a.py", "opts": {"deep": {"x": [1, 2]}}}),
        ("list_dir", {"path": "."}),
    ]
    assert not any("tool_call" in getattr(c, "text", "") for c in chunks if not isinstance(c, ThinkingChunk))


async def test_text_tool_calls_are_left_alone_without_tools(server: FakeServer) -> None:
    server.script({"text": '<tool_call>{"name": "x", "arguments": {}}</tool_call>'})
    parts, _, _ = await call(make_provider(server, "openai"), tools=())
    assert parts == [TextPart('<tool_call>{"name": "x", "arguments": {}}</tool_call>')]


def test_local_endpoint_needs_no_key() -> None:
    from wyckoff_cli.providers.factory import build_provider

    provider = build_provider(
        ModelSpec("openai", "llama3", base_url="http://localhost:11434/v1"), watchdog=False
    )
    assert provider.name == "openai:llama3"
    assert TOOLS  # keeps the shared tool list imported for the module's other tests
