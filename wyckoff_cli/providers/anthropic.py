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

The SDK is imported when the first request is made, never at module import.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import AsyncIterator, Sequence
from typing import Any

from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart, ToolSpec
from wyckoff_cli.core.tool_schema import clean_schema
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import (
    Chunk,
    StreamingProvider,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
    UsageChunk,
)
from wyckoff_cli.providers.credentials import request_timeout
from wyckoff_cli.providers.sdk_errors import raise_translated
from wyckoff_cli.providers.spec import ModelSpec

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
        if message.meta.get("images"):  # a tool's images (e.g. MCP) go beside its text
            block["content"] = [
                {"type": "text", "text": block["content"]},
                *map(_image, message.meta["images"]),
            ]
        return "user", [block]
    if message.role == "user":
        return "user", [
            {"type": "text", "text": p.text} for p in message.parts if isinstance(p, TextPart) and p.text
        ]
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
    return "assistant", blocks


def _image(image: dict[str, str]) -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image["mime_type"], "data": image["data"]},
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


class AnthropicProvider(StreamingProvider):
    """One Claude model. `build_request` is pure; `chat_stream` sends it."""

    def __init__(self, spec: ModelSpec, *, api_key: str, base_url: str | None = None) -> None:
        self.spec = spec
        self.base_url = base_url
        self._api_key = api_key
        self._client: Any = None

    @property
    def name(self) -> str:
        return self.spec.id

    def __repr__(self) -> str:
        return f"AnthropicProvider({self.spec.id!r}, base_url={self.base_url!r})"

    @property
    def max_tokens(self) -> int:
        return self.spec.max_tokens or default_max_tokens(self.spec.model)

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> dict[str, Any]:
        converted = convert_messages(messages)
        system = [{"type": "text", "text": system_prompt}] if system_prompt else []
        tool_list = [tool_to_anthropic(spec) for spec in tools]
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

    def _get_client(self) -> Any:
        if self._client is None:
            import anthropic

            _quiet_sdk_warnings()

            options: dict[str, Any] = {}
            timeout = request_timeout(self.spec)
            if timeout is not None:
                options["timeout"] = timeout
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key, base_url=self.base_url, max_retries=0, **options
            )
        return self._client

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        self._get_client()  # import the SDK now, not on the watchdog's clock
        return self._stream(self.build_request(messages, tools, system_prompt))

    async def _stream(self, params: dict[str, Any]) -> AsyncIterator[Chunk]:
        stream: Any = None
        try:
            stream = await self._get_client().messages.create(**params, stream=True)
            reader = _EventReader(self.spec.id)
            async for event in stream:
                for chunk in reader.read(event):
                    yield chunk
            yield reader.usage_chunk()
        except Exception as exc:
            raise_translated(exc, provider=self.name, secret=self._api_key)
        finally:
            if stream is not None:
                await stream.close()


class _EventReader:
    """Raw Messages stream events to chunks."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read = 0
        self.cache_write = 0
        self._thinking: dict[int, str] = {}  # open thinking blocks: index -> signature

    def usage_chunk(self) -> UsageChunk:
        usage = anthropic_usage(self.input_tokens, self.output_tokens, self.cache_read, self.cache_write)
        return UsageChunk(usage, self.model_id)

    def _usage(self, usage: Any) -> None:
        if usage is None:
            return
        for source, target in (
            ("input_tokens", "input_tokens"),
            ("output_tokens", "output_tokens"),
            ("cache_read_input_tokens", "cache_read"),
            ("cache_creation_input_tokens", "cache_write"),
        ):
            value = getattr(usage, source, None)
            if isinstance(value, int):
                setattr(self, target, value)

    def read(self, event: Any) -> list[Chunk]:
        kind = getattr(event, "type", "")
        if kind == "message_start":
            self._usage(getattr(event.message, "usage", None))
        elif kind == "content_block_start":
            return self._start(event.index, event.content_block)
        elif kind == "content_block_delta":
            return self._delta(event.index, event.delta)
        elif kind == "content_block_stop":
            if event.index in self._thinking:
                return [ThinkingChunk(signature=self._thinking.pop(event.index))]
        elif kind == "message_delta":
            self._usage(getattr(event, "usage", None))
        return []

    def _start(self, index: int, block: Any) -> list[Chunk]:
        kind = getattr(block, "type", "")
        if kind == "tool_use":
            return [ToolCallChunk(index, id=block.id, name=block.name)]
        if kind == "thinking":
            self._thinking[index] = getattr(block, "signature", "") or ""
            text = getattr(block, "thinking", "")
            return [ThinkingChunk(text)] if text else []
        if kind == "redacted_thinking":
            return [ThinkingChunk(redacted_data=block.data)]
        if kind == "text" and getattr(block, "text", ""):
            return [TextChunk(block.text)]
        return []

    def _delta(self, index: int, delta: Any) -> list[Chunk]:
        kind = getattr(delta, "type", "")
        if kind == "text_delta":
            return [TextChunk(delta.text)] if delta.text else []
        if kind == "thinking_delta":
            return [ThinkingChunk(delta.thinking)] if delta.thinking else []
        if kind == "signature_delta":
            self._thinking[index] = self._thinking.get(index, "") + delta.signature
        elif kind == "input_json_delta" and delta.partial_json:
            return [ToolCallChunk(index, arguments=delta.partial_json)]
        return []
