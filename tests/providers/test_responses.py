"""The OpenAI Responses API adapter through the real `openai` client over loopback."""

from __future__ import annotations

import pytest

from tests.providers.conftest import READ_FILE, TEST_KEY, call, drain, make_provider
from wyckoff_cli.core import errors
from wyckoff_cli.core.messages import Message, ServerToolPart, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import StopChunk
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.openai_compat import OpenAICompatProvider
from wyckoff_cli.providers.openai_responses import OpenAIResponsesProvider, ResponsesReader
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.testing.fake_server import FakeServer


async def test_reasoning_summary_text_calls_and_usage(server: FakeServer) -> None:
    server.script(
        {
            "thinking": "Plan: read it.",
            "text": "Reading.",
            "chunk_size": 4,
            "tool_calls": [{"id": "call_r1", "name": "read_file", "args": {"path": "a.py"}}],
            "fragments": 3,
            "signature": "gAAAA-opaque",
            "usage": {
                "input_tokens": 900,
                "output_tokens": 60,
                "cache_read_tokens": 800,
                "reasoning_tokens": 40,
            },
        }
    )
    provider = make_provider(server, "openai-responses", reasoning_effort="high")
    parts, usage, chunks = await call(provider)
    thinking, text, tool = parts
    assert isinstance(thinking, ThinkingPart) and thinking.text == "Plan: read it."
    assert thinking.extra["item"]["encrypted_content"] == "gAAAA-opaque"
    assert text == TextPart("Reading.")
    assert tool == ToolCallPart("call_r1", "read_file", {"path": "a.py"})
    assert usage == Usage(900, 60, 800, 0, 40)
    assert chunks[-1] == StopChunk("tool_use", "completed")
    request = server.requests[0]
    assert request.path == "/v1/responses"
    body = request.body
    assert body["store"] is False and body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"summary": "auto", "effort": "high"}
    assert body["instructions"] == "You are a test."
    assert body["tools"][0] == {
        "type": "function",
        "name": "read_file",
        "description": READ_FILE.description,
        "parameters": READ_FILE.parameters,
        "strict": False,
    }
    assert body["input"] == [{"role": "user", "content": "hi"}]


async def test_reasoning_items_and_call_outputs_go_back_by_call_id(server: FakeServer) -> None:
    server.script(
        {"thinking": "Think.", "tool_calls": [{"id": "call_a", "name": "read_file", "args": {"path": "x"}}]},
        {"text": "Done."},
    )
    provider = make_provider(server, "openai-responses")
    parts, _, _ = await call(provider)
    history = [
        Message.user("go"),
        Message("assistant", tuple(parts)),
        Message.tool_result("call_a", "read_file", "contents"),
    ]
    parts2, _, _ = await call(provider, history)
    assert parts2 == [TextPart("Done.")]
    sent = server.bodies[1]["input"]
    assert sent[0] == {"role": "user", "content": "go"}
    assert sent[1]["type"] == "reasoning" and sent[1]["encrypted_content"]  # unchanged
    assert sent[1] == parts[0].extra["item"]  # type: ignore[union-attr]
    assert sent[2] == {
        "type": "function_call",
        "call_id": "call_a",
        "name": "read_file",
        "arguments": '{"path": "x"}',
    }
    assert sent[3] == {"type": "function_call_output", "call_id": "call_a", "output": "contents"}


def test_history_from_other_vendors_and_server_tools() -> None:
    history = [
        Message.user("go"),
        Message(
            "assistant",
            (
                ThinkingPart("claude's", signature="sig", provider="anthropic"),
                ServerToolPart("openai-responses", "web_search", {"type": "web_search_call", "id": "ws_1"}),
                ServerToolPart("anthropic", "web_search", {"type": "server_tool_use"}),
                ToolCallPart("toolu_1", "read_file", {"path": "a"}),
            ),
        ),
        Message.user("more"),
    ]
    provider = OpenAIResponsesProvider(ModelSpec("openai-responses", "gpt-5"), api_key="k")
    items = provider.build_request(history, [], "")["input"]
    assert items == [
        {"role": "user", "content": "go"},
        {"type": "web_search_call", "id": "ws_1"},
        {"type": "function_call", "call_id": "toolu_1", "name": "read_file", "arguments": '{"path": "a"}'},
        {"type": "function_call_output", "call_id": "toolu_1", "output": "(no result)"},
        {"role": "user", "content": "more"},
    ]


async def test_incomplete_at_the_output_limit(server: FakeServer) -> None:
    server.script({"text": "Half an ans", "stop_reason": "max_tokens"})
    _, _, chunks = await call(make_provider(server, "openai-responses", max_tokens=5))
    assert chunks[-1] == StopChunk("max_tokens", "max_output_tokens")
    assert server.bodies[0]["max_output_tokens"] == 5


@pytest.mark.parametrize(
    ("scenario", "kind"),
    [
        ({"status": 429}, errors.RateLimited),
        ({"status": 401}, errors.AuthenticationFailed),
        ({"status": 400, "error_code": "context_length_exceeded"}, errors.ContextTooLong),
        ({"text": "x", "midstream_error": {"code": "server_error"}}, errors.Overloaded),
        ({"text": "x", "midstream_error": {"code": "rate_limit_exceeded"}}, errors.RateLimited),
        ({"text": "x", "no_end": True}, errors.ConnectionFailed),
    ],
)
async def test_errors_map_into_the_tree(
    server: FakeServer, scenario: dict[str, object], kind: type[errors.ProviderError]
) -> None:
    server.script(scenario)
    with pytest.raises(errors.ProviderError) as caught:
        await drain(make_provider(server, "openai-responses").chat_stream([Message.user("x")], [], ""))
    assert type(caught.value) is kind


def test_response_failed_and_web_search_items() -> None:
    reader = ResponsesReader("openai-responses:gpt-5")
    item = {"type": "web_search_call", "id": "ws_9", "status": "completed", "action": {"query": "tides"}}
    reader.feed(
        "",
        b'{"type":"response.output_item.done","output_index":0,"item":%s}'
        % str(item).replace("'", '"').encode(),
    )
    (chunk,) = reader.out
    assert chunk.summary == "searched the web: tides"  # type: ignore[union-attr]
    assert chunk.part.data == item  # type: ignore[union-attr]
    with pytest.raises(errors.RateLimited):
        reader.feed(
            "",
            b'{"type":"response.failed","response":{"error":{"code":"rate_limit_exceeded","message":"slow"}}}',
        )


def test_openai_models_that_need_it_use_the_responses_api() -> None:
    codex = build_provider(ModelSpec("openai", "gpt-5-codex", api_key=TEST_KEY), watchdog=False)
    assert isinstance(codex, OpenAIResponsesProvider)
    chat = build_provider(ModelSpec("openai", "gpt-4o", api_key=TEST_KEY), watchdog=False)
    assert isinstance(chat, OpenAICompatProvider)
    forced = build_provider(ModelSpec("openai", "gpt-4o", api="responses", api_key=TEST_KEY), watchdog=False)
    assert isinstance(forced, OpenAIResponsesProvider)
    other_endpoint = ModelSpec("openai", "gpt-5-codex", base_url="http://127.0.0.1:9/v1", api_key=TEST_KEY)
    assert isinstance(build_provider(other_endpoint, watchdog=False), OpenAICompatProvider)


def test_sampling_options_go_only_to_models_that_do_not_reason() -> None:
    reasoning = OpenAIResponsesProvider(ModelSpec("openai-responses", "o3", temperature=0.2), api_key="k")
    assert "temperature" not in reasoning.build_request([Message.user("x")], [], "")
    plain = OpenAIResponsesProvider(ModelSpec("openai-responses", "gpt-4.1", temperature=0.2), api_key="k")
    body = plain.build_request([Message.user("x")], [], "")
    assert body["temperature"] == 0.2 and "reasoning" not in body
