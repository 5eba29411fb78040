"""Render a vendor-neutral scenario into each vendor's streaming wire format.

A scenario is a JSON-friendly dict describing one model answer; the fake server
renders it as Anthropic Messages SSE, OpenAI Chat Completions SSE, OpenAI Responses
SSE or Gemini `streamGenerateContent` SSE depending on which endpoint was called.
Keys (all optional):

    text            visible answer text
    markdown_file   read the answer text from this file instead
    thinking        reasoning text (Anthropic thinking block, `reasoning_content`,
                    Gemini `thought` part)
    signature       thinking signature (Anthropic) / thought signature of the first
                    function call (Gemini, base64); a default is used when omitted
    tool_calls      [{"name": ..., "args": {...}, "id": optional}]
    usage           {"input_tokens", "output_tokens", "cache_read_tokens",
                     "cache_write_tokens", "reasoning_tokens"} in Wyckoff's convention
                    (input includes cached tokens); rendered the vendor's way
    usage_style     "deepseek": OpenAI usage with `prompt_cache_hit_tokens`
    reasoning_field "reasoning_content" (default) or "reasoning" (OpenAI thinking)
    chunk_size      text and thinking are sent in pieces of this many characters
    fragments       tool-call arguments are split into this many pieces
    interleave      OpenAI: interleave the argument fragments of parallel calls
    model           model name reported by the stream
    status          answer with this HTTP error status instead of a stream
    error_message / error_type / error_code / error_param / error_body
                    shape the error body (defaults per vendor and status)
    midstream_error true or {"message", "type"}: an error event after the content
    drop            true: close the connection after the content, without ending it
    no_end          true: end the HTTP body cleanly but leave out the stream's end
                    marker (`message_stop`, `finish_reason` and `[DONE]`,
                    `finishReason`, `response.completed`)
    stop_reason     "max_tokens" or "content_filter" (or "pause", Anthropic only): how
                    the model stopped, in the vendor's words (`max_tokens`/`refusal`/
                    `pause_turn`, `length`/`content_filter`, `MAX_TOKENS`/`SAFETY`,
                    `incomplete`)
    retry_after     with `status`: send a `retry-after` header (seconds)
    retry_after_ms  with `status`: send a `retry-after-ms` header
    stall           seconds to go silent after the content
    stall_before    seconds to go silent before answering at all (no status line, no
                    headers: a dead endpoint that accepted the connection)
    chars_per_second  pace text deltas (approximately) at this rate
    sse_file        replay this recorded SSE file verbatim (vendor must match)
    web_search      a server-side web search answer (search_wire.py)

Only the standard library is used: this module runs inside the fake HTTP server.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.testing.sse_events import AnthropicBlocks, sse

Vendor = str  # "anthropic" | "openai" | "openai-responses" | "gemini"
VENDORS = ("anthropic", "openai", "gemini", "openai-responses")

DEFAULT_SIGNATURE = "c2lnbmF0dXJlLWZha2U="  # base64 of "signature-fake"
DEFAULT_USAGE = {"input_tokens": 100, "output_tokens": 20}


@dataclass
class Rendered:
    """What the server sends for one request: an HTTP error or SSE events."""

    status: int = 200
    body: bytes = b""  # for an error status
    headers: dict[str, str] = field(default_factory=dict)  # extra headers of an error answer
    events: list[bytes] = field(default_factory=list)
    tail: list[bytes] = field(default_factory=list)  # events after the stall
    event_interval: float = 0.0  # seconds between content events when paced
    stall: float = 0.0
    stall_before: float = 0.0  # silent before the status line
    drop: bool = False


def vendor_for_path(path: str) -> Vendor | None:
    if "streamGenerateContent" in path or ":generateContent" in path:
        return "gemini"
    if path.rstrip("/").endswith("/chat/completions"):
        return "openai"
    if path.split("?")[0].rstrip("/").endswith("/responses"):
        return "openai-responses"
    if path.split("?")[0].rstrip("/").endswith("/messages"):
        return "anthropic"
    return None


def render(vendor: Vendor, scenario: dict[str, Any], base_dir: Path | None = None) -> Rendered:
    """Render one scenario for `vendor`."""
    rendered = _render(vendor, scenario, base_dir)
    rendered.stall_before = float(scenario.get("stall_before", 0.0) or 0.0)
    return rendered


def _render(vendor: Vendor, scenario: dict[str, Any], base_dir: Path | None) -> Rendered:
    if scenario.get("status"):
        status = int(scenario["status"])
        headers = {}
        if scenario.get("retry_after") is not None:
            headers["retry-after"] = str(scenario["retry_after"])
        if scenario.get("retry_after_ms") is not None:
            headers["retry-after-ms"] = str(scenario["retry_after_ms"])
        return Rendered(status=status, body=error_body(vendor, status, scenario), headers=headers)
    if scenario.get("sse_file"):
        path = _resolve(scenario["sse_file"], base_dir)
        raw = path.read_bytes().replace(b"\r\n", b"\n")
        events = [block + b"\n\n" for block in raw.split(b"\n\n") if block.strip()]
        return Rendered(events=events, drop=bool(scenario.get("drop")))
    if scenario.get("web_search"):
        from wyckoff_cli.testing.search_wire import render as render_search

        head, tail = render_search(vendor, scenario)
        return Rendered(events=head, tail=tail, drop=bool(scenario.get("drop")))
    text = scenario.get("text", "")
    if scenario.get("markdown_file"):
        text = _resolve(scenario["markdown_file"], base_dir).read_text(encoding="utf-8")
    pieces = _pieces(text, scenario.get("chunk_size"))
    thinking = _pieces(scenario.get("thinking", ""), scenario.get("chunk_size"))
    renderer = {"anthropic": _anthropic, "openai": _openai, "gemini": _gemini, "openai-responses": _responses}
    head, tail = renderer[vendor](scenario, thinking, pieces)
    if scenario.get("no_end"):
        head, tail = head + tail[:-1] if vendor != "openai" else head, []
    if scenario.get("midstream_error"):
        head.append(_midstream_error(vendor, scenario["midstream_error"]))
        tail = []
    rate = float(scenario.get("chars_per_second") or 0)
    interval = 0.0
    if rate > 0 and pieces:
        interval = (len(text) / len(pieces)) / rate
    return Rendered(
        events=head,
        tail=tail,
        event_interval=interval,
        stall=float(scenario.get("stall", 0.0) or 0.0),
        drop=bool(scenario.get("drop")),
    )


def _resolve(name: str, base_dir: Path | None) -> Path:
    path = Path(name).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    return path


def _pieces(text: str, size: Any) -> list[str]:
    if not text:
        return []
    if not size or int(size) <= 0:
        return [text]
    n = int(size)
    return [text[i : i + n] for i in range(0, len(text), n)]


def _split(text: str, parts: int) -> list[str]:
    parts = max(1, parts)
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _usage(scenario: dict[str, Any]) -> dict[str, int]:
    usage = {**DEFAULT_USAGE, **(scenario.get("usage") or {})}
    return {k: int(v) for k, v in usage.items()}


def _calls(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    calls = []
    for n, call in enumerate(scenario.get("tool_calls") or ()):
        calls.append(
            {
                "id": call.get("id") or f"call_fake_{n + 1}",
                "name": call["name"],
                "json": json.dumps(call.get("args", {})),
                "args": call.get("args", {}),
            }
        )
    return calls


# --------------------------------------------------------------------------- Anthropic


def _anthropic(
    scenario: dict[str, Any], thinking: list[str], pieces: list[str]
) -> tuple[list[bytes], list[bytes]]:
    usage = _usage(scenario)
    read, write = usage.get("cache_read_tokens", 0), usage.get("cache_write_tokens", 0)
    start_usage = {
        "input_tokens": max(0, usage["input_tokens"] - read - write),
        "cache_creation_input_tokens": write,
        "cache_read_input_tokens": read,
        "output_tokens": 1,
    }
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": scenario.get("model", "claude-fake"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    events = [sse({"type": "message_start", "message": message}, "message_start")]
    block = AnthropicBlocks(events).add

    if thinking:
        deltas = [{"type": "thinking_delta", "thinking": t} for t in thinking]
        deltas.append({"type": "signature_delta", "signature": scenario.get("signature", DEFAULT_SIGNATURE)})
        block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
    if pieces:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces])
    calls = _calls(scenario)
    for call in calls:
        fragments = _split(call["json"], int(scenario.get("fragments", 1)))
        block(
            {"type": "tool_use", "id": call["id"], "name": call["name"], "input": {}},
            [{"type": "input_json_delta", "partial_json": f} for f in fragments],
        )
    stop_reason = {"max_tokens": "max_tokens", "content_filter": "refusal", "pause": "pause_turn"}.get(
        scenario.get("stop_reason", ""), "tool_use" if calls else "end_turn"
    )
    tail = [
        sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
            "message_delta",
        ),
        sse({"type": "message_stop"}, "message_stop"),
    ]
    return events, tail


# --------------------------------------------------------------------------- OpenAI


def _openai(
    scenario: dict[str, Any], thinking: list[str], pieces: list[str]
) -> tuple[list[bytes], list[bytes]]:
    model = scenario.get("model", "gpt-fake")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 1760000000,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
            }
        )

    field_name = scenario.get("reasoning_field", "reasoning_content")
    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": None, field_name: t}) for t in thinking]
    events += [chunk({"content": p}) for p in pieces]
    calls = _calls(scenario)
    fragment_lists = [_split(c["json"], int(scenario.get("fragments", 1))) for c in calls]
    starts = []
    for n, call in enumerate(calls):
        first = fragment_lists[n][0]
        starts.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": n,
                            "id": call["id"],
                            "type": "function",
                            "function": {"name": call["name"], "arguments": first},
                        }
                    ]
                }
            )
        )

    def rest(n: int, fragment: str) -> bytes:
        return chunk({"tool_calls": [{"index": n, "function": {"arguments": fragment}}]})

    if scenario.get("interleave"):
        events += starts
        longest = max((len(f) for f in fragment_lists), default=0)
        for step in range(1, longest):
            events += [rest(n, f[step]) for n, f in enumerate(fragment_lists) if step < len(f)]
    else:
        for n, start in enumerate(starts):
            events.append(start)
            events += [rest(n, f) for f in fragment_lists[n][1:]]
    usage = _usage(scenario)
    wire_usage: dict[str, Any] = {
        "prompt_tokens": usage["input_tokens"],
        "completion_tokens": usage["output_tokens"],
        "total_tokens": usage["input_tokens"] + usage["output_tokens"],
        "completion_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens", 0)},
    }
    read = usage.get("cache_read_tokens", 0)
    if scenario.get("usage_style") == "deepseek":
        wire_usage["prompt_cache_hit_tokens"] = read
        wire_usage["prompt_cache_miss_tokens"] = usage["input_tokens"] - read
    else:
        wire_usage["prompt_tokens_details"] = {"cached_tokens": read}
    finish = {"max_tokens": "length", "content_filter": "content_filter"}.get(
        scenario.get("stop_reason", ""), "tool_calls" if calls else "stop"
    )
    tail = [
        chunk({}, finish),
        sse(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 1760000000,
                "model": model,
                "choices": [],
                "usage": wire_usage,
            }
        ),
        sse("[DONE]"),
    ]
    return events, tail


# --------------------------------------------------------------------------- Gemini


def _gemini(
    scenario: dict[str, Any], thinking: list[str], pieces: list[str]
) -> tuple[list[bytes], list[bytes]]:
    model = scenario.get("model", "gemini-fake")

    def chunk(parts: list[dict[str, Any]], **extra: Any) -> bytes:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if "finishReason" in extra:
            candidate["finishReason"] = extra.pop("finishReason")
        return sse({"candidates": [candidate], **extra, "modelVersion": model, "responseId": "resp-fake"})

    events = [chunk([{"text": t, "thought": True}]) for t in thinking]
    events += [chunk([{"text": p}]) for p in pieces]
    calls = _calls(scenario)
    if calls:
        parts = []
        for n, call in enumerate(calls):
            part: dict[str, Any] = {"functionCall": {"name": call["name"], "args": call["args"]}}
            if n == 0:
                part["thoughtSignature"] = scenario.get("signature", DEFAULT_SIGNATURE)
            parts.append(part)
        events.append(chunk(parts))
    usage = _usage(scenario)
    reasoning = usage.get("reasoning_tokens", 0)
    metadata = {
        "promptTokenCount": usage["input_tokens"],
        "candidatesTokenCount": max(0, usage["output_tokens"] - reasoning),
        "totalTokenCount": usage["input_tokens"] + usage["output_tokens"],
        "cachedContentTokenCount": usage.get("cache_read_tokens", 0),
        "thoughtsTokenCount": reasoning,
    }
    finish = {"max_tokens": "MAX_TOKENS", "content_filter": "SAFETY"}.get(
        scenario.get("stop_reason", ""), "STOP"
    )
    tail = [chunk([{"text": ""}], finishReason=finish, usageMetadata=metadata)]
    return events, tail


# --------------------------------------------------------------------------- OpenAI Responses


def _responses(
    scenario: dict[str, Any], thinking: list[str], pieces: list[str]
) -> tuple[list[bytes], list[bytes]]:
    model = scenario.get("model", "gpt-fake")
    events: list[bytes] = []
    outputs: list[dict[str, Any]] = []

    def send(data: dict[str, Any]) -> None:
        events.append(sse(data, data["type"]))

    base = {"id": "resp_fake", "object": "response", "model": model, "status": "in_progress", "output": []}
    send({"type": "response.created", "response": base})
    index = 0
    if thinking:
        item_id = "rs_fake_1"
        send(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {"type": "reasoning", "id": item_id, "summary": []},
            }
        )
        send(
            {
                "type": "response.reasoning_summary_part.added",
                "item_id": item_id,
                "output_index": index,
                "summary_index": 0,
                "part": {"type": "summary_text", "text": ""},
            }
        )
        for piece in thinking:
            send(
                {
                    "type": "response.reasoning_summary_text.delta",
                    "item_id": item_id,
                    "output_index": index,
                    "summary_index": 0,
                    "delta": piece,
                }
            )
        item = {
            "type": "reasoning",
            "id": item_id,
            "summary": [{"type": "summary_text", "text": "".join(thinking)}],
            "encrypted_content": scenario.get("signature", "gAAAA-encrypted-fake"),
        }
        send({"type": "response.output_item.done", "output_index": index, "item": item})
        outputs.append(item)
        index += 1
    if pieces:
        item_id = "msg_fake_1"
        send(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {"type": "message", "id": item_id, "role": "assistant", "content": []},
            }
        )
        for piece in pieces:
            send(
                {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": index,
                    "content_index": 0,
                    "delta": piece,
                }
            )
        item = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "".join(pieces), "annotations": []}],
        }
        send({"type": "response.output_item.done", "output_index": index, "item": item})
        outputs.append(item)
        index += 1
    for call in _calls(scenario):
        item_id = f"fc_fake_{index}"
        added = {
            "type": "function_call",
            "id": item_id,
            "call_id": call["id"],
            "name": call["name"],
            "arguments": "",
        }
        send({"type": "response.output_item.added", "output_index": index, "item": added})
        for fragment in _split(call["json"], int(scenario.get("fragments", 1))):
            send(
                {
                    "type": "response.function_call_arguments.delta",
                    "item_id": item_id,
                    "output_index": index,
                    "delta": fragment,
                }
            )
        done = {**added, "arguments": call["json"], "status": "completed"}
        send({"type": "response.output_item.done", "output_index": index, "item": done})
        outputs.append(done)
        index += 1
    usage = _usage(scenario)
    stop = scenario.get("stop_reason")
    final = {
        **base,
        "status": "incomplete" if stop else "completed",
        "output": outputs,
        "incomplete_details": {"reason": {"max_tokens": "max_output_tokens"}.get(stop, stop)}
        if stop
        else None,
        "usage": {
            "input_tokens": usage["input_tokens"],
            "input_tokens_details": {"cached_tokens": usage.get("cache_read_tokens", 0)},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens", 0)},
            "total_tokens": usage["input_tokens"] + usage["output_tokens"],
        },
    }
    kind = "response.incomplete" if stop else "response.completed"
    return events, [sse({"type": kind, "response": final}, kind)]


# --------------------------------------------------------------------------- errors

_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_GEMINI_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_OPENAI_CODES = {401: "invalid_api_key", 429: "rate_limit_exceeded"}


def error_body(vendor: Vendor, status: int, scenario: dict[str, Any]) -> bytes:
    """An HTTP error body shaped like the vendor's (see the wire reference)."""
    if scenario.get("error_body") is not None:
        body = scenario["error_body"]
        return (body if isinstance(body, str) else json.dumps(body)).encode()
    message = scenario.get("error_message") or f"fake error {status}"
    if vendor == "anthropic":
        kind = scenario.get("error_type") or _ANTHROPIC_TYPES.get(status, "api_error")
        data: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
        data["request_id"] = "req_fake"
    elif vendor in ("openai", "openai-responses"):
        kind = scenario.get("error_type") or ("server_error" if status >= 500 else "invalid_request_error")
        code = scenario.get("error_code", _OPENAI_CODES.get(status))
        data = {
            "error": {"message": message, "type": kind, "param": scenario.get("error_param"), "code": code}
        }
    else:
        data = {
            "error": {"code": status, "message": message, "status": _GEMINI_STATUS.get(status, "UNKNOWN")}
        }
    return json.dumps(data).encode()


def _midstream_error(vendor: Vendor, spec: Any) -> bytes:
    detail = spec if isinstance(spec, dict) else {}
    if vendor == "anthropic":
        kind = detail.get("type", "overloaded_error")
        message = detail.get("message", "Overloaded")
        return sse({"type": "error", "error": {"type": kind, "message": message}}, "error")
    if vendor == "openai-responses":
        message = detail.get("message", "The server had an error while processing your request.")
        error = {
            "type": "error",
            "code": detail.get("code", "server_error"),
            "message": message,
            "param": None,
        }
        return sse(error, "error")
    if vendor == "openai":
        message = detail.get("message", "The server had an error while processing your request.")
        kind = detail.get("type", "server_error")
        return sse({"error": {"message": message, "type": kind, "param": None, "code": detail.get("code")}})
    code = int(detail.get("code", 503))
    message = detail.get("message", "The model is overloaded. Please try again later.")
    return sse({"error": {"code": code, "message": message, "status": _GEMINI_STATUS.get(code, "UNKNOWN")}})
