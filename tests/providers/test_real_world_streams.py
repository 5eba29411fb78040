"""What real APIs were recorded doing, replayed through the real SDKs over loopback.

Each fixture in `wire/real_world/` is written by hand to reproduce one fact of a
recording (see its README): server tools, padded JSON, SSE comments, encrypted
reasoning, in-stream errors, streams that end early, Gemini code execution, grounding
and signatures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.providers.conftest import WIRE, call, drain, make_provider
from wyckoff_cli.core import errors
from wyckoff_cli.core.messages import Message, ServerToolPart, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import ServerToolChunk, StopChunk
from wyckoff_cli.testing.fake_server import FakeServer

REAL = WIRE / "real_world"


def replay(server: FakeServer, name: str) -> None:
    server.script({"sse_file": str(REAL / name)})


async def _fail(provider: object) -> errors.ProviderError:
    with pytest.raises(errors.ProviderError) as caught:
        await drain(provider.chat_stream([Message.user("hi")], [], ""))  # type: ignore[attr-defined]
    return caught.value


# --------------------------------------------------------------------------- Anthropic


async def test_anthropic_web_search_is_kept_verbatim_and_never_a_client_call(server: FakeServer) -> None:
    replay(server, "anthropic_server_web_search.sse")
    provider = make_provider(server, "anthropic")
    parts, usage, chunks = await call(provider)
    assert not [p for p in parts if isinstance(p, ToolCallPart)]  # no nameless client call
    use, result, text = parts
    assert isinstance(use, ServerToolPart) and isinstance(result, ServerToolPart)
    assert (use.name, use.kind, use.call_id) == ("web_search", "call", "srvtoolu_w1")
    assert use.data == {
        "type": "server_tool_use",
        "id": "srvtoolu_w1",
        "name": "web_search",
        "input": {"query": "tides in Brest"},
    }
    assert result.kind == "result" and result.data["type"] == "web_search_tool_result"
    assert result.data["content"][0]["encrypted_content"] == "RW5jcnlwdGVkT25l"
    assert text == TextPart("High tide is at 06:12.")
    shown = [c for c in chunks if isinstance(c, ServerToolChunk)]
    assert [c.summary for c in shown] == [
        "searched the web: tides in Brest",
        "web_search: 2 results",
        "cited 1 source",
    ]
    assert shown[1].sources[0] == {"url": "https://tides.example.org/brest", "title": "Tide tables Brest"}
    assert usage.input_tokens == 2100 and usage.output_tokens == 60
    # sent back unchanged on the next request
    server.script({"text": "ok"})
    await call(provider, [Message.user("hi"), Message("assistant", tuple(parts)), Message.user("and?")])
    sent = server.bodies[1]["messages"][1]["content"]
    assert sent[0] == use.data
    assert {k: v for k, v in sent[1].items() if k != "cache_control"} == result.data
    assert "cache_control" not in use.data and "cache_control" not in result.data


async def test_anthropic_tool_search_then_a_client_call(server: FakeServer) -> None:
    replay(server, "anthropic_server_tool_then_client_tool.sse")
    parts, _, chunks = await call(make_provider(server, "anthropic"))
    kinds = [type(p).__name__ for p in parts]
    assert kinds == ["TextPart", "ServerToolPart", "ServerToolPart", "ToolCallPart"]
    assert parts[1].data["input"] == {"pattern": "read"}  # type: ignore[union-attr]
    assert parts[3] == ToolCallPart("toolu_c1", "read_file", {"path": "notes.md"})
    assert chunks[-1] == StopChunk("tool_use", "tool_use")


async def test_anthropic_padded_json_empty_deltas_redacted_thinking_and_usage_in_message_delta(
    server: FakeServer,
) -> None:
    replay(server, "anthropic_thinking_padded.sse")
    parts, usage, chunks = await call(make_provider(server, "anthropic"))
    assert parts == [
        ThinkingPart("Two plus two.", signature="U2lnUGFkZGVk", provider="anthropic"),
        ThinkingPart("", provider="anthropic", redacted_data="UmVkYWN0ZWQ="),
        TextPart("Four."),
    ]
    assert usage == Usage(70, 25, 30, 0)  # message_delta repeats and updates the input figures
    assert chunks[-1] == StopChunk("end_turn", "end_turn")


async def test_anthropic_stream_without_message_stop_is_a_dropped_connection(server: FakeServer) -> None:
    replay(server, "anthropic_no_message_stop.sse")
    error = await _fail(make_provider(server, "anthropic"))
    assert isinstance(error, errors.ConnectionFailed) and error.retryable
    assert "message_stop" in error.message


# --------------------------------------------------------------------------- OpenAI-compatible


async def test_openrouter_comments_and_reasoning_counted_once(server: FakeServer) -> None:
    replay(server, "openai_openrouter_reasoning.sse")
    provider = make_provider(server, "openai")
    parts, usage, chunks = await call(provider)
    thinking = [p for p in parts if isinstance(p, ThinkingPart)]
    assert thinking[0].text == "Thinking about tides."  # `reasoning` and `reasoning_details` agree: once
    assert [p.text for p in parts if isinstance(p, TextPart)] == ["Tides follow the moon."]
    details = thinking[-1].extra["reasoning_details"]
    assert details == [
        {
            "type": "reasoning.text",
            "text": "Thinking about tides.",
            "signature": "c2lnLW9y",
            "index": 0,
            "format": "anthropic-claude-v1",
        }
    ]
    assert usage == Usage(30, 20, 0, 0, 8)  # usage after the finish chunk
    assert chunks[-1] == StopChunk("end_turn", "stop")
    # in the turn's tool loop the details go back to the endpoint that produced them
    server.script({"text": "ok"})
    looked = Message("assistant", (*parts, ToolCallPart("c1", "list_dir", {"path": "."})))
    history = [Message.user("hi"), looked, Message.tool_result("c1", "list_dir", "a.txt")]
    await call(provider, history)
    assert server.bodies[1]["messages"][2]["reasoning_details"] == details


async def test_encrypted_reasoning_is_opaque_and_cached_tokens_counted(server: FakeServer) -> None:
    replay(server, "openai_grok_encrypted.sse")
    parts, usage, _ = await call(make_provider(server, "openai"))
    assert [p.text for p in parts if isinstance(p, TextPart)] == ["I'm here."]
    opaque = [p for p in parts if isinstance(p, ThinkingPart)]
    assert len(opaque) == 1 and opaque[0].text == ""
    assert opaque[0].extra["reasoning_details"][0]["data"] == "ZW5jcnlwdGVkLWJsb2I="
    assert usage == Usage(700, 40, 679, 0, 30)


async def test_reasoning_only_in_reasoning_details(server: FakeServer) -> None:
    replay(server, "openai_reasoning_details_only.sse")
    parts, usage, _ = await call(make_provider(server, "openai"))
    assert parts[0].text == "6 * 7 = 42" and isinstance(parts[0], ThinkingPart)  # type: ignore[union-attr]
    assert TextPart("It is 42.") in parts
    assert usage == Usage()  # no usage chunk at all


async def test_azure_leading_empty_choices_and_filter_results(server: FakeServer) -> None:
    replay(server, "openai_azure_filter.sse")
    parts, _, chunks = await call(make_provider(server, "openai"))
    assert parts == [TextPart("Hello there.")]
    assert chunks[-1] == StopChunk("end_turn", "stop")


async def test_kimi_repeated_id_and_name_and_no_finish_reason(server: FakeServer) -> None:
    replay(server, "openai_kimi_repeated_call.sse")
    parts, usage, _ = await call(make_provider(server, "openai"))
    assert parts == [ToolCallPart("0", "list_dir", {"path": "."})]
    assert usage == Usage(57, 17)


async def test_kimi_colon_id_missing_arguments_and_a_space_before_data(server: FakeServer) -> None:
    replay(server, "openai_kimi_colon_id.sse")
    parts, _, chunks = await call(make_provider(server, "openai"))
    assert parts == [ToolCallPart("read_file:0", "read_file", {"path": "a.txt"})]  # " data:" ignored
    assert chunks[-1] == StopChunk("tool_use", "tool_calls")


async def test_error_object_inside_a_200_stream_is_a_bad_request(server: FakeServer) -> None:
    replay(server, "openai_openrouter_midstream_error.sse")
    error = await _fail(make_provider(server, "openai"))
    assert type(error) is errors.BadRequest and not error.retryable
    assert "Token limit reached" in error.message


async def test_groq_event_error_is_classified_by_status_and_type(server: FakeServer) -> None:
    replay(server, "openai_groq_event_error.sse")
    error = await _fail(make_provider(server, "openai"))
    assert type(error) is errors.BadRequest and not error.retryable
    assert "did not match schema" in error.message


async def test_openai_stream_without_done_or_finish_reason_is_retryable(server: FakeServer) -> None:
    replay(server, "openai_no_end.sse")
    error = await _fail(make_provider(server, "openai"))
    assert isinstance(error, errors.ConnectionFailed) and error.retryable


async def test_a_400_naming_a_required_field_drops_nothing(server: FakeServer) -> None:
    body = {
        "error": {
            "message": "Unsupported value: 'messages[0].role' does not support 'system' with this model.",
            "type": "invalid_request_error",
            "param": "messages[0].role",
            "code": "unsupported_value",
        }
    }
    server.script({"status": 400, "error_body": body}, {"text": "fine"})
    provider = make_provider(server, "openai")
    error = await _fail(provider)
    assert type(error) is errors.BadRequest
    assert len(server.requests) == 1  # surfaced, not retried without parameters
    await call(provider)
    assert server.bodies[1]["stream_options"] == {"include_usage": True}  # usage still asked for
    assert provider.dropped == set()  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- Gemini


async def test_gemini_code_execution_parts_signatures_and_tool_use_prompt_tokens(server: FakeServer) -> None:
    replay(server, "gemini_code_execution.sse")
    provider = make_provider(server, "gemini", model="gemini-3-flash-preview")
    parts, usage, chunks = await call(provider)
    code, result, text = parts
    assert isinstance(code, ServerToolPart) and code.name == "code_execution" and code.kind == "call"
    assert code.data["thoughtSignature"] == "U2lnQ29kZQ=="
    assert isinstance(result, ServerToolPart) and result.kind == "result"
    assert text == TextPart("The result is **42**.", signature="U2lnVGV4dA==", provider="gemini")
    assert usage == Usage(270, 130, 0, 0, 118)  # prompt 40 + tool-use prompt 230
    assert [c.summary for c in chunks if isinstance(c, ServerToolChunk)] == [
        "ran code: print(6 * 7)",
        "code result: OUTCOME_OK",
    ]
    server.script({"text": "ok"})
    await call(provider, [Message.user("hi"), Message("assistant", tuple(parts)), Message.user("again")])
    sent = server.bodies[1]["contents"][1]["parts"]
    assert sent[0] == code.data and sent[1] == result.data  # verbatim
    assert sent[2] == {"text": "The result is **42**.", "thoughtSignature": "U2lnVGV4dA=="}


async def test_gemini_grounding_is_kept_and_shown_not_sent(server: FakeServer) -> None:
    replay(server, "gemini_grounding.sse")
    provider = make_provider(server, "gemini")
    parts, usage, chunks = await call(provider)
    assert parts[0] == TextPart("Brest has two tides a day.")
    grounding = parts[1]
    assert isinstance(grounding, ServerToolPart) and grounding.kind == "metadata"
    assert grounding.data["webSearchQueries"] == ["tides brest"]
    shown = [c for c in chunks if isinstance(c, ServerToolChunk)]
    assert shown[0].summary == "searched the web: tides brest"
    assert shown[0].sources == ({"url": "https://tides.example.org/brest", "title": "tides.example.org"},)
    assert usage.input_tokens == 70
    server.script({"text": "ok"})
    await call(provider, [Message.user("hi"), Message("assistant", tuple(parts)), Message.user("again")])
    assert server.bodies[1]["contents"][1]["parts"] == [{"text": "Brest has two tides a day."}]


async def test_gemini_signature_on_a_text_part_goes_back(server: FakeServer) -> None:
    replay(server, "gemini_signed_text.sse")
    provider = make_provider(server, "gemini", model="gemini-3.6-flash")
    parts, _, _ = await call(provider)
    assert parts == [
        ThinkingPart("Consider the question.", provider="gemini"),
        TextPart("Paris", signature="U2lnT25l", provider="gemini"),
        TextPart(" is the capital."),
    ]
    restored = Message.from_dict(Message("assistant", tuple(parts)).to_dict())
    assert restored.parts == tuple(parts)  # survives the session file
    server.script({"text": "ok"})
    await call(provider, [Message.user("hi"), restored, Message.user("again")])
    sent = server.bodies[1]["contents"][1]["parts"]
    assert {"text": "Paris", "thoughtSignature": "U2lnT25l"} in sent


async def test_gemini_native_call_id_and_empty_stop_chunk(server: FakeServer) -> None:
    replay(server, "gemini_call_native_id.sse")
    parts, _, chunks = await call(make_provider(server, "gemini", model="gemini-3-flash-preview"))
    (only,) = parts
    assert isinstance(only, ToolCallPart) and only.id == "fc_native_1"
    assert only.extra == {"gemini_thought_signature": "U2lnQ2FsbA==", "gemini_call_id": True}
    assert chunks[-1] == StopChunk("end_turn", "STOP")


async def test_gemini_safety_stop_is_reported(server: FakeServer) -> None:
    replay(server, "gemini_safety.sse")
    parts, _, chunks = await call(make_provider(server, "gemini"))
    assert parts == []
    assert chunks[-1] == StopChunk("content_filter", "SAFETY")


async def test_gemini_stream_without_finish_reason_is_a_dropped_connection(server: FakeServer) -> None:
    replay(server, "gemini_no_finish.sse")
    error = await _fail(make_provider(server, "gemini"))
    assert isinstance(error, errors.ConnectionFailed) and error.retryable


async def test_anthropic_parallel_calls_without_arguments(server: FakeServer) -> None:
    replay(server, "anthropic_parallel_noargs.sse")
    parts, _, _ = await call(make_provider(server, "anthropic"))
    assert parts == [ToolCallPart("toolu_z1", "list_dir", {}), ToolCallPart("toolu_z2", "git_status", {})]


async def test_gemini_call_and_finish_reason_in_the_only_chunk(server: FakeServer) -> None:
    replay(server, "gemini_call_and_finish_in_one_chunk.sse")
    parts, usage, chunks = await call(make_provider(server, "gemini", model="gemini-2.0-flash"))
    (only,) = parts
    assert isinstance(only, ToolCallPart) and only.arguments == {"path": "b.txt"}
    assert usage == Usage(20, 5)
    assert chunks[-1] == StopChunk("end_turn", "STOP")


async def test_openrouter_429_body_is_a_rate_limit(server: FakeServer) -> None:
    body = {
        "error": {
            "message": "Provider returned error",
            "code": 429,
            "metadata": {"raw": "google/gemini-2.0-flash-exp:free is temporarily rate-limited upstream"},
        },
        "user_id": "user_x",
    }
    server.script({"status": 429, "error_body": body})
    error = await _fail(make_provider(server, "openai"))
    assert type(error) is errors.RateLimited and error.retryable


async def test_sdk_clients_are_closed_through_every_wrapper(server: FakeServer) -> None:
    from wyckoff_cli.providers.fallback import FallbackProvider
    from wyckoff_cli.providers.retry import RetryingProvider

    server.script({"text": "a"}, {"text": "b"})
    first = make_provider(server, "openai", watchdog=True)
    second = make_provider(server, "gemini", watchdog=True)
    chain = FallbackProvider([RetryingProvider(first), second])
    await call(chain)
    inner = first.inner  # type: ignore[attr-defined]
    assert inner._client is not None
    await chain.aclose()
    assert inner._client is None and second.inner._client is None  # type: ignore[attr-defined]


def test_reasoning_details_summary_entries_are_thinking_and_kept() -> None:
    from wyckoff_cli.providers.base import ThinkingChunk
    from wyckoff_cli.providers.openai_compat import ChunkReader

    reader = ChunkReader("openai:x", False)
    for data in (
        b'{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.summary","summary":"Plan: ","index":0}]}}]}',
        b'{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.summary","summary":"read.","index":0}]}}]}',
        b'{"choices":[{"delta":{"reasoning_details":[{"type":"reasoning.encrypted","data":"QUJD","index":1}]}}]}',
        b'{"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}',
        b"[DONE]",
    ):
        reader.feed("", data)
    reader.finish()
    assert [c.text for c in reader.out if isinstance(c, ThinkingChunk) and c.text] == ["Plan: ", "read."]
    kept = next(c.extra for c in reader.out if isinstance(c, ThinkingChunk) and c.extra)
    assert kept == {
        "reasoning_details": [
            {"type": "reasoning.summary", "summary": "Plan: read.", "index": 0},
            {"type": "reasoning.encrypted", "data": "QUJD", "index": 1},
        ]
    }


@pytest.mark.parametrize(
    "event",
    [
        b'data: {"choices":[{"delta":"not an object"}]}\n\n',
        b'data: {"choices":[{"delta":{"tool_calls":[7]}}]}\n\n',
        b"data: {not json\n\n",
    ],
)
async def test_an_event_of_an_unexpected_shape_is_a_retryable_server_error(
    server: FakeServer, tmp_path: Path, event: bytes
) -> None:
    fixture = tmp_path / "odd.sse"
    fixture.write_bytes(b'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n' + event + b"data: [DONE]\n\n")
    server.script({"sse_file": str(fixture)})
    error = await _fail(make_provider(server, "openai"))
    assert type(error) is errors.Overloaded and error.retryable
