"""Claude through the Anthropic Messages API (`anthropic` SDK, async client, streamed).

Conversion both ways: text, thinking (replayed unchanged with its signature, only when
an Anthropic model produced it), `tool_use`, `tool_result` (with `is_error`).
Consecutive messages of one role are merged as the API requires (tool results and a
synthetic user note that follows them become one user message, results first).

Sliding prompt cache (SPEC §2): the system block carries `cache_control: ephemeral`
(the tools array before it is part of that cached prefix; with no system prompt the
last tool carries it), and on every request the last block of the last message carries
it too. The end of the previous request's history is marked as well, so the whole
history before the newest message is read from cache however many blocks the last round
added. At most 3 of the 4 allowed breakpoints are used.

Server tools (web search, tool search, run by Anthropic): a `server_tool_use` block and
its `*_tool_result` block are kept verbatim as `ServerToolPart`s and sent back
unchanged; `input_json_delta` fragments build a client tool call only inside a block
that started as `tool_use`. Citations (`citations_delta`) are shown, not stored.

The stream is read raw (`with_streaming_response`, one `json.loads` per event); a
stream without `message_stop` is a dropped connection. The SDK is imported when the
first request is made, never at module import.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import re
import warnings
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from wyckoff_cli.core.messages import (
    ImagePart,
    Message,
    ServerToolPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolSpec,
)
from wyckoff_cli.core.tool_schema import clean_schema
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers import server_search
from wyckoff_cli.providers.base import (
    ServerToolChunk,
    StopChunk,
    StopReason,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
    UsageChunk,
)
from wyckoff_cli.providers.images import image_base64
from wyckoff_cli.providers.sdk_base import SDKProvider, StreamReader
from wyckoff_cli.providers.sdk_errors import stream_error

VENDOR = "anthropic"
EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
DEFAULT_THINKING_BUDGET = 10_000
UNKNOWN_MODEL_MAX_TOKENS = 8_192

# Output-token defaults by model family, used when neither the spec nor a catalogue says.
_MAX_TOKENS_BY_PATTERN: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"claude-3-haiku|claude-3-opus|claude-3-sonnet"), 4_096),
    (re.compile(r"claude-3-5"), 8_192),
    (
        re.compile(r"claude-3-7|claude-(?:opus|sonnet|haiku)-4|claude-4|claude-(?:opus|sonnet|haiku)-[5-9]"),
        32_000,
    ),
)
_TOOL_ID = re.compile(r"[^a-zA-Z0-9_-]")


def tool_to_anthropic(spec: ToolSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "input_schema": clean_schema(spec.parameters, "anthropic"),
    }


def anthropic_usage(
    input_tokens: int,
    output_tokens: int,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
) -> Usage:
    """Anthropic's `usage`: `input_tokens` leaves out cache reads and writes (so they
    are added); `output_tokens` already includes thinking."""
    total = input_tokens + cache_read_input_tokens + cache_creation_input_tokens
    return Usage(total, output_tokens, cache_read_input_tokens, cache_creation_input_tokens)


def default_max_tokens(model: str) -> int:
    for pattern, tokens in _MAX_TOKENS_BY_PATTERN:
        if pattern.search(model):
            return tokens
    return UNKNOWN_MODEL_MAX_TOKENS


def tool_id(call_id: str) -> str:
    """Anthropic accepts `[a-zA-Z0-9_-]+` ids; other vendors' ids are mapped onto it."""
    return _TOOL_ID.sub("_", call_id)[:200] or "call"


# --------------------------------------------------------------------------- requests


def convert_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Neutral messages to Anthropic `messages`, merged and made consistent."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    _pair_tool_results(out)
    return out


def _blocks(message: Message) -> tuple[str, list[dict[str, Any]]]:
    if message.role == "tool":
        call_id = message.tool_call_id or "call"
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": tool_id(call_id),
            "content": message.text or "(no output)",
        }
        if message.is_error:
            block["is_error"] = True
        if message.images:  # a tool's images (read_file, MCP) go inside its result
            block["content"] = [
                {"type": "text", "text": block["content"]},
                *map(_image, message.images),
            ]
        return "user", [block]
    if message.role == "user":
        texts = [
            {"type": "text", "text": p.text} for p in message.parts if isinstance(p, TextPart) and p.text
        ]
        return "user", [*texts, *map(_image, message.images)]
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ThinkingPart):
            if part.provider != VENDOR:
                continue  # another vendor's reasoning cannot be verified here
            if part.redacted_data:
                blocks.append({"type": "redacted_thinking", "data": part.redacted_data})
            elif part.signature:
                blocks.append({"type": "thinking", "thinking": part.text, "signature": part.signature})
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {"type": "tool_use", "id": tool_id(part.id), "name": part.name, "input": part.arguments}
            )
        elif isinstance(part, ServerToolPart) and part.provider == VENDOR and part.kind != "metadata":
            blocks.append(json.loads(json.dumps(part.data)))  # a copy: cache marks must not leak back
    return "assistant", blocks


def _image(image: ImagePart) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": image_base64(image)},
    }


def _pair_tool_results(out: list[dict[str, Any]]) -> None:
    """Each user message answering tool calls starts with their results, in call order;
    a result with no matching call becomes text, a call with no result gets one."""
    for position, message in enumerate(out):
        if message["role"] != "user":
            continue
        previous = out[position - 1] if position > 0 else None
        calls = [b["id"] for b in previous["content"] if b["type"] == "tool_use"] if previous else []
        results = {b["tool_use_id"]: b for b in message["content"] if b["type"] == "tool_result"}
        others = []
        for block in message["content"]:
            if block["type"] != "tool_result":
                others.append(block)
            elif block["tool_use_id"] not in calls:
                others.append(
                    {"type": "text", "text": f"[tool result {block['tool_use_id']}]\n{block['content']}"}
                )
        ordered = [
            results.get(c)
            or {"type": "tool_result", "tool_use_id": c, "content": "(no result)", "is_error": True}
            for c in calls
        ]
        message["content"] = ordered + others
    if out and out[-1]["role"] == "assistant":
        calls = [b["id"] for b in out[-1]["content"] if b["type"] == "tool_use"]
        if calls:  # a history ending in unanswered calls: answer them
            missing = [
                {"type": "tool_result", "tool_use_id": c, "content": "(no result)", "is_error": True}
                for c in calls
            ]
            out.append({"role": "user", "content": missing})


def apply_cache_breakpoints(
    system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
) -> int:
    """Mark the sliding cache breakpoints in place; returns how many were set."""
    count = 0
    if system:
        system[-1]["cache_control"] = dict(EPHEMERAL)
        count += 1
    elif tools:
        tools[-1]["cache_control"] = dict(EPHEMERAL)
        count += 1
    targets: list[int] = []
    if messages:
        targets.append(len(messages) - 1)
        last_assistant = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
        if last_assistant > 0 and last_assistant - 1 not in targets:
            targets.append(last_assistant - 1)
    for position in targets:
        if count >= MAX_BREAKPOINTS:
            break
        for block in reversed(messages[position]["content"]):
            if block["type"] not in ("thinking", "redacted_thinking"):
                block["cache_control"] = dict(EPHEMERAL)
                count += 1
                break
    return count


def _needs_thinking_off(messages: list[dict[str, Any]]) -> bool:
    """With thinking on, an assistant turn that is still in its tool loop must start
    with a thinking block. After a fallback from another vendor it does not: such a
    request is sent without thinking instead of failing with a 400."""
    if len(messages) < 2 or messages[-1]["role"] != "user":
        return False
    last = messages[-2]
    if last["role"] != "assistant" or not any(b["type"] == "tool_use" for b in last["content"]):
        return False
    return last["content"][0]["type"] not in ("thinking", "redacted_thinking")


# --------------------------------------------------------------------------- provider


def _quiet_sdk_warnings() -> None:
    """The SDK warns on stderr about deprecated models and `thinking.type=enabled`;
    printed into a running TUI that garbles the screen, so those two are silenced."""
    for pattern in (r"The model '.*' is deprecated", r"Using Claude with .* is deprecated"):
        warnings.filterwarnings("ignore", message=pattern)


class AnthropicProvider(SDKProvider):
    """One Claude model. `build_request` is pure; `chat_stream` sends it."""

    vendor = VENDOR

    @property
    def max_tokens(self) -> int:
        return self.spec.max_tokens or default_max_tokens(self.spec.model)

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> dict[str, Any]:
        converted = convert_messages(messages)
        system = [{"type": "text", "text": system_prompt}] if system_prompt else []
        tool_list = [tool_to_anthropic(spec) for spec in tools]
        tool_list += server_search.anthropic_tools(self.spec)  # docs/TOOLS.md, server-side search
        apply_cache_breakpoints(system, tool_list, converted)
        params: dict[str, Any] = {
            "model": self.spec.model,
            "max_tokens": self.max_tokens,
            "messages": converted,
        }
        if system:
            params["system"] = system
        if tool_list:
            params["tools"] = tool_list
        thinking = self._thinking()
        if thinking is not None and not _needs_thinking_off(converted):
            params["thinking"] = thinking
            budget = thinking.get("budget_tokens")
            if isinstance(budget, int) and budget >= params["max_tokens"]:
                params["max_tokens"] = budget + 4_096
        if any(spec.answer for spec in tools):  # answer by a tool call (providers/answer_format.py)
            params["tool_choice"] = {"type": "auto" if "thinking" in params else "any"}
        return params

    def _thinking(self) -> dict[str, Any] | None:
        mode = self.spec.thinking
        if mode == "adaptive":
            return {"type": "adaptive"}
        if mode == "budget" or (mode is None and self.spec.thinking_budget):
            return {
                "type": "enabled",
                "budget_tokens": max(1_024, self.spec.thinking_budget or DEFAULT_THINKING_BUDGET),
            }
        return None

    def make_client(self) -> Any:
        from wyckoff_cli.providers.lazy_packages import import_anthropic_client

        client = import_anthropic_client()  # `anthropic._client`, not the SDK's whole tree
        _quiet_sdk_warnings()
        return client.AsyncAnthropic(**self.client_options())

    def warm_up(self) -> None:
        """The first request's one-time work, for a worker thread while nothing is sent
        yet: the SDK's import, its client (HTTP pool, TLS context) and the messages
        resource (its module and the stream types it builds, ~0.1-0.2 s), and the
        tracing propagator its first request imports."""
        self.client().messages.with_streaming_response  # noqa: B018 (made on first access)
        with contextlib.suppress(ImportError):  # an SDK without tracing
            importlib.import_module("opentelemetry.propagate")

    def open_stream(self, request: dict[str, Any]) -> AbstractAsyncContextManager[Any]:
        return self._open(request)

    @asynccontextmanager
    async def _open(self, request: dict[str, Any]) -> Any:
        manager = self.client().messages.with_streaming_response.create(**request, stream=True)
        async with manager as response:
            yield response.http_response

    def new_reader(self, request: dict[str, Any]) -> StreamReader:
        return EventReader(self.spec.id, secret=self._api_key)


_STOP_REASONS: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "content_filter",
    "pause_turn": "pause",
}


class EventReader(StreamReader):
    """Messages API stream events (raw JSON) to chunks."""

    def __init__(self, model_id: str, *, secret: str | None = None) -> None:
        super().__init__(model_id)
        self._secret = secret
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read = 0
        self.cache_write = 0
        self.web_searches = 0  # usage.server_tool_use.web_search_requests (billed per search)
        self.stop_reason = ""
        self._kinds: dict[int, str] = {}  # block index -> block type
        self._thinking: dict[int, str] = {}  # open thinking blocks: index -> signature
        self._server: dict[int, tuple[dict[str, Any], list[str]]] = {}  # server blocks: data, json
        self._citations: dict[int, list[dict[str, Any]]] = {}

    def feed(self, event: str, data: bytes) -> None:
        payload = json.loads(data)
        kind = payload.get("type", "") if isinstance(payload, dict) else ""
        if kind == "content_block_delta":
            self._delta(payload.get("index", 0), payload.get("delta") or {})
        elif kind == "content_block_start":
            self._start(payload.get("index", 0), payload.get("content_block") or {})
        elif kind == "content_block_stop":
            self._stop(payload.get("index", 0))
        elif kind == "message_start":
            self._usage(payload.get("message", {}).get("usage"))
        elif kind == "message_delta":
            self._usage(payload.get("usage"))
            reason = (payload.get("delta") or {}).get("stop_reason")
            if reason:
                self.stop_reason = reason
        elif kind == "message_stop":
            self.ended = True
        elif kind == "error" or event == "error":
            raise stream_error(payload, provider=self.model_id, secret=self._secret)

    def finish(self) -> None:
        if not self.ended:
            raise self.cut_off("message_stop")
        usage = anthropic_usage(self.input_tokens, self.output_tokens, self.cache_read, self.cache_write)
        if self.web_searches:
            usage = dataclasses.replace(usage, web_searches=self.web_searches)
        self.out.append(UsageChunk(usage, self.model_id))
        self.out.append(StopChunk(_STOP_REASONS.get(self.stop_reason, "other"), self.stop_reason))

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        for source, target in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("cache_read_input_tokens", "cache_read"),
            ("cache_creation_input_tokens", "cache_write"),
        ):
            value = usage.get(source)
            if isinstance(value, int):
                setattr(self, target, value)
        searches = (usage.get("server_tool_use") or {}).get("web_search_requests")
        if isinstance(searches, int):
            self.web_searches = searches

    def _start(self, index: int, block: dict[str, Any]) -> None:
        kind = block.get("type", "")
        self._kinds[index] = kind
        if kind == "text":
            if block.get("text"):
                self.out.append(TextChunk(block["text"]))
        elif kind == "tool_use":
            self.out.append(ToolCallChunk(index, id=block.get("id"), name=block.get("name")))
        elif kind == "thinking":
            self._thinking[index] = block.get("signature") or ""
            if block.get("thinking"):
                self.out.append(ThinkingChunk(block["thinking"]))
        elif kind == "redacted_thinking":
            self.out.append(ThinkingChunk(redacted_data=block.get("data", "")))
        elif kind == "server_tool_use" or kind.endswith("_tool_result"):
            self._server[index] = (dict(block), [])

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        kind = delta.get("type", "")
        if kind == "text_delta":
            if delta.get("text"):
                self.out.append(TextChunk(delta["text"]))
        elif kind == "thinking_delta":
            if delta.get("thinking"):
                self.out.append(ThinkingChunk(delta["thinking"]))
        elif kind == "signature_delta":
            self._thinking[index] = self._thinking.get(index, "") + delta.get("signature", "")
        elif kind == "input_json_delta":
            fragment = delta.get("partial_json") or ""
            block_kind = self._kinds.get(index)
            if block_kind == "tool_use" and fragment:
                self.out.append(ToolCallChunk(index, arguments=fragment))
            elif index in self._server:
                self._server[index][1].append(fragment)
        elif kind == "citations_delta" and isinstance(delta.get("citation"), dict):
            self._citations.setdefault(index, []).append(delta["citation"])

    def _stop(self, index: int) -> None:
        if index in self._thinking:
            self.out.append(ThinkingChunk(signature=self._thinking.pop(index)))
        elif index in self._server:
            block, fragments = self._server.pop(index)
            if fragments:
                raw = "".join(fragments)
                try:
                    block["input"] = json.loads(raw) if raw.strip() else {}
                except json.JSONDecodeError:
                    block["input"] = {}
            self.out.append(_server_chunk(block))
        elif index in self._citations:
            sources = _sources(self._citations.pop(index))
            if sources:
                count = f"{len(sources)} source{'s' if len(sources) != 1 else ''}"
                self.out.append(ServerToolChunk("citations", f"cited {count}", sources=sources))


def _server_chunk(block: dict[str, Any]) -> ServerToolChunk:
    kind = block.get("type", "")
    if kind == "server_tool_use":
        name = str(block.get("name", "server_tool"))
        arguments = block.get("input") or {}
        query = arguments.get("query") if isinstance(arguments, dict) else None
        if name == "web_search" and query:
            summary = f"searched the web: {query}"
        elif query:
            summary = f"{name}: {query}"
        else:
            summary = f"used {name}"
        part = ServerToolPart(VENDOR, name, block, "call", block.get("id"))
        return ServerToolChunk(name, summary, part)
    name = kind.removesuffix("_tool_result")
    content = block.get("content")
    results = [r for r in content if isinstance(r, dict)] if isinstance(content, list) else []
    sources = _sources(results)
    if isinstance(content, dict) and "error_code" in content:
        summary = f"{name} failed: {content.get('error_code')}"
    elif sources:
        summary = f"{name}: {len(sources)} results"
    else:
        summary = f"{name}: result received"
    part = ServerToolPart(VENDOR, name, block, "result", block.get("tool_use_id"))
    return ServerToolChunk(name, summary, part, sources)


def _sources(entries: list[dict[str, Any]]) -> tuple[dict[str, str], ...]:
    seen: dict[str, dict[str, str]] = {}
    for entry in entries:
        url = entry.get("url")
        if isinstance(url, str) and url and url not in seen:
            seen[url] = {"url": url, "title": str(entry.get("title") or "")}
    return tuple(seen.values())
