"""OpenAI-compatible Chat Completions (`openai` SDK, async client, streamed).

One adapter for OpenAI and every endpoint that speaks its protocol through `base_url`
(DeepSeek, Qwen, Kimi, Ollama, vLLM, LM Studio):

- The first call carries `stream_options.include_usage`, `tool_choice` and the
  configured sampling options. When the endpoint rejects one with a 400-class
  "unsupported / unknown parameter" answer (and only then), the call is retried once
  without it, one parameter at a time, and the provider remembers what it dropped
  for the rest of the session.
- Tool-call deltas are assembled by index; `reasoning_content` (or `reasoning`)
  deltas are thinking and go back on assistant messages with tool calls in the
  current turn where the endpoint needs them (DeepSeek thinking with tools).
- `<tool_call>{...}</tool_call>` text becomes real tool calls (`text_tool_calls`).
- Cached prompt tokens come from `prompt_tokens_details.cached_tokens` or DeepSeek's
  `prompt_cache_hit_tokens`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any
from urllib.parse import urlparse

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
from wyckoff_cli.providers.text_tool_calls import TextToolCallParser

log = logging.getLogger(__name__)

VENDOR = "openai"
# Optional parameters, in the order they are given up when an endpoint rejects one
# without naming it.
DROPPABLE = (
    "parallel_tool_calls",
    "reasoning_effort",
    "top_p",
    "temperature",
    "max_tokens",
    "stream_options",
    "tool_choice",
)
_REJECTED = re.compile(
    r"unsupported|not supported|unknown (?:parameter|field|argument|name)|unrecognized|"
    r"not allowed|not permitted|extra (?:inputs|fields)|unexpected (?:keyword|field|parameter)|"
    r"does not support|invalid (?:parameter|argument|field)|is not valid for",
    re.IGNORECASE,
)


def convert_messages(
    messages: Sequence[Message], system_prompt: str, *, send_reasoning: bool
) -> list[dict[str, Any]]:
    """Neutral messages to Chat Completions messages. Results without a matching call
    become user text; calls without a result are answered so the request is valid."""
    out: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}] if system_prompt else []
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    open_calls: list[str] = []
    images: list[tuple[str, dict[str, str]]] = []  # tool images wait for the round's last tool message
    for position, message in enumerate(messages):
        if message.role != "tool" and open_calls:
            out += [_tool_message(c, "(no result)") for c in open_calls]
            open_calls = []
        if message.role != "tool" and images:
            out.append(_images_message(images))
            images = []
        if message.role == "user":
            out.append({"role": "user", "content": message.text})
        elif message.role == "tool":
            call_id = message.tool_call_id or ""
            text = message.text or "(no output)"
            if message.is_error and not text.lower().startswith("error"):
                text = f"Error: {text}"
            if call_id in open_calls:
                open_calls.remove(call_id)
                out.append(_tool_message(call_id, text))
                images += [(message.tool_name or "a tool", i) for i in message.meta.get("images", ())]
            else:
                out.append(
                    {"role": "user", "content": f"[result of {message.tool_name or 'a tool'}]\n{text}"}
                )
        else:
            entry = _assistant(message, send_reasoning and position > last_user)
            if entry is not None:
                out.append(entry)
                open_calls = [c["id"] for c in entry.get("tool_calls", ())]
    out += [_tool_message(c, "(no result)") for c in open_calls]
    if images:
        out.append(_images_message(images))
    return out


def _images_message(images: list[tuple[str, dict[str, str]]]) -> dict[str, Any]:
    """Chat Completions tool messages hold text only: a tool's images follow as user content."""
    names = ", ".join(dict.fromkeys(name for name, _ in images))
    parts: list[dict[str, Any]] = [{"type": "text", "text": f"[images returned by {names}]"}]
    for _name, image in images:
        url = f"data:{image['mime_type']};base64,{image['data']}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return {"role": "user", "content": parts}


def _tool_message(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


def _assistant(message: Message, with_reasoning: bool) -> dict[str, Any] | None:
    text = "".join(p.text for p in message.parts if isinstance(p, TextPart))
    calls = [p for p in message.parts if isinstance(p, ToolCallPart)]
    if not text and not calls:
        return None
    entry: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        entry["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": _arguments(call)},
            }
            for call in calls
        ]
        reasoning = "".join(
            p.text for p in message.parts if isinstance(p, ThinkingPart) and p.provider == VENDOR
        )
        if with_reasoning and reasoning:
            entry["reasoning_content"] = reasoning
    return entry


def _arguments(call: ToolCallPart) -> str:
    if call.raw_arguments is not None and not call.arguments:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False)


class OpenAICompatProvider(StreamingProvider):
    """One model on one OpenAI-compatible endpoint."""

    def __init__(self, spec: ModelSpec, *, api_key: str, base_url: str | None = None) -> None:
        self.spec = spec
        self.base_url = base_url
        self._api_key = api_key
        self._client: Any = None
        self.dropped: set[str] = set()  # parameters this endpoint rejected

    @property
    def name(self) -> str:
        return self.spec.id

    def __repr__(self) -> str:
        return f"OpenAICompatProvider({self.spec.id!r}, base_url={self.base_url!r})"

    @property
    def send_reasoning(self) -> bool:
        """Reasoning goes back only to endpoints that produce it (not api.openai.com)."""
        configured = self.spec.extra.get("send_reasoning")
        if isinstance(configured, bool):
            return configured
        host = urlparse(self.base_url).hostname if self.base_url else None
        return host is not None and host != "api.openai.com"

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.spec.model,
            "messages": convert_messages(messages, system_prompt, send_reasoning=self.send_reasoning),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            params["tools"] = [tool_to_openai(spec) for spec in tools]
            params["tool_choice"] = "auto"
        optional = {
            "temperature": self.spec.temperature,
            "top_p": self.spec.top_p,
            "reasoning_effort": self.spec.reasoning_effort,
            "max_tokens": self.spec.max_tokens,
        }
        params.update({k: v for k, v in optional.items() if v is not None})
        for name in self.dropped:
            params.pop(name, None)
        return params

    def _get_client(self) -> Any:
        if self._client is None:
            import openai

            options: dict[str, Any] = {}
            timeout = request_timeout(self.spec)
            if timeout is not None:
                options["timeout"] = timeout
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self.base_url, max_retries=0, **options
            )
        return self._client

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        self._get_client()  # import the SDK now, not on the watchdog's clock
        return self._stream(self.build_request(messages, tools, system_prompt), bool(tools))

    async def _open(self, params: dict[str, Any]) -> Any:
        """Start the stream, dropping parameters the endpoint rejects, one per retry."""
        while True:
            try:
                return await self._get_client().chat.completions.create(**params)
            except Exception as exc:
                rejected = self.rejected_parameter(exc, params)
                if rejected is None:
                    raise
                log.info("%s rejected %r; retrying without it", self.name, rejected)
                self.dropped.add(rejected)
                params.pop(rejected)

    @staticmethod
    def rejected_parameter(exc: BaseException, params: dict[str, Any]) -> str | None:
        """The optional parameter a 400/422 answer rejects, or None for any other error."""
        if getattr(exc, "status_code", None) not in (400, 422) or not type(exc).__module__.startswith(
            "openai"
        ):
            return None
        body = getattr(exc, "body", None)
        message = str(exc)
        if isinstance(body, dict):
            error = body.get("error", body)
            if isinstance(error, dict):
                message = f"{error.get('message', '')} {error.get('param') or ''} {message}"
        if getattr(exc, "code", None) == "context_length_exceeded" or not _REJECTED.search(message):
            return None
        present = [name for name in DROPPABLE if name in params]
        named = getattr(exc, "param", None)
        if isinstance(named, str):
            named = named.split(".")[0]
            if named in present:
                return named
        mentioned = [name for name in present if name in message]
        if mentioned:
            return mentioned[0]
        return present[0] if present else None

    async def _stream(self, params: dict[str, Any], parse_text_calls: bool) -> AsyncIterator[Chunk]:
        stream: Any = None
        try:
            stream = await self._open(params)
            reader = _ChunkReader(self.spec.id, parse_text_calls)
            async for chunk in stream:
                for item in reader.read(chunk):
                    yield item
            for item in reader.finish():
                yield item
        except Exception as exc:
            raise_translated(exc, provider=self.name, secret=self._api_key)
        finally:
            if stream is not None:
                await stream.close()


class _ChunkReader:
    def __init__(self, model_id: str, parse_text_calls: bool) -> None:
        self.model_id = model_id
        self.usage: Any = None
        self._parser = TextToolCallParser() if parse_text_calls else None
        self._ids: dict[str, int] = {}
        self._last_index = 0

    def read(self, chunk: Any) -> list[Chunk]:
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        choices = getattr(chunk, "choices", None) or ()
        out: list[Chunk] = []
        for choice in choices[:1]:
            delta = choice.delta
            if delta is None:
                continue
            reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
            if isinstance(reasoning, str) and reasoning:
                out.append(ThinkingChunk(reasoning))
            if delta.content:
                if self._parser is not None:
                    out += self._parser.feed(delta.content)
                else:
                    out.append(TextChunk(delta.content))
            for call in delta.tool_calls or ():
                function = call.function
                out.append(
                    ToolCallChunk(
                        self._index(call),
                        id=call.id or None,
                        name=(function.name if function else None) or None,
                        arguments=(function.arguments if function else "") or "",
                    )
                )
        return out

    def _index(self, call: Any) -> int:
        if isinstance(call.index, int):
            self._last_index = call.index
            return call.index
        # Endpoints that omit the index: a new id starts a new call.
        if call.id and call.id not in self._ids:
            self._ids[call.id] = len(self._ids)
            self._last_index = self._ids[call.id]
        return self._last_index

    def finish(self) -> list[Chunk]:
        out: list[Chunk] = list(self._parser.finish()) if self._parser is not None else []
        if self.usage is not None:
            out.append(UsageChunk(_usage(self.usage), self.model_id))
        return out


def tool_to_openai(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": clean_schema(spec.parameters, "openai"),
        },
    }


def openai_usage(
    prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, reasoning_tokens: int = 0
) -> Usage:
    """OpenAI's `usage` (Chat Completions; the Responses API's `input_tokens` /
    `output_tokens` mean the same): cached tokens are part of the prompt, reasoning
    tokens part of the completion; there are no cache writes."""
    return Usage(prompt_tokens, completion_tokens, cached_tokens, 0, reasoning_tokens)


def _usage(usage: Any) -> Usage:
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    completion = getattr(usage, "completion_tokens", 0) or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) if details is not None else None
    if not cached:
        cached = getattr(usage, "prompt_cache_hit_tokens", None)
        if cached is None and getattr(usage, "model_extra", None):
            cached = usage.model_extra.get("prompt_cache_hit_tokens")
    completion_details = getattr(usage, "completion_tokens_details", None)
    reasoning = getattr(completion_details, "reasoning_tokens", 0) if completion_details is not None else 0
    return openai_usage(int(prompt), int(completion), int(cached or 0), int(reasoning or 0))
