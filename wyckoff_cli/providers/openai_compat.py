"""OpenAI-compatible Chat Completions (`openai` SDK, async client, streamed).

One adapter for OpenAI and every endpoint that speaks its protocol through `base_url`
(DeepSeek, Qwen, Kimi, Ollama, vLLM, LM Studio):

- The first call carries `stream_options.include_usage`, `tool_choice` and the
  configured sampling options. When the endpoint rejects one with a 400-class
  "unsupported / unknown parameter" answer that names it (in `param` or the
  message), the call is retried once without it and the provider remembers that for
  the rest of the session; a 400 that names no optional parameter is surfaced.
- Tool-call deltas are assembled by index; `reasoning_content`, `reasoning` and the
  text / summary entries of `reasoning_details` are thinking. Reasoning goes back on
  assistant messages in the current turn where the endpoint needs it (DeepSeek
  thinking with tools: `reasoning_content`; OpenRouter: `reasoning_details`, with
  encrypted entries unchanged).
- The stream is read raw (one `json.loads` per event). A stream that ends with
  neither `[DONE]` nor a `finish_reason` is a dropped connection; an `error` object
  or `event: error` inside it is classified by its status and type.
- `<tool_call>{...}</tool_call>` text becomes real tool calls (`text_tool_calls`).
- Cached prompt tokens come from `prompt_tokens_details.cached_tokens` or DeepSeek's
  `prompt_cache_hit_tokens`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any
from urllib.parse import urlparse

from wyckoff_cli.core.messages import ImagePart, Message, TextPart, ThinkingPart, ToolCallPart, ToolSpec
from wyckoff_cli.core.tool_schema import clean_schema
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.answer_format import openai_response_format, split_answer
from wyckoff_cli.providers.base import (
    StopChunk,
    StopReason,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
    UsageChunk,
)
from wyckoff_cli.providers.images import image_data_url
from wyckoff_cli.providers.sdk_base import SDKProvider, StreamReader
from wyckoff_cli.providers.sdk_errors import stream_error
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
    images: list[tuple[str, ImagePart]] = []  # tool images wait for the round's last tool message
    for position, message in enumerate(messages):
        if message.role != "tool" and open_calls:
            out += [_tool_message(c, "(no result)") for c in open_calls]
            open_calls = []
        if message.role != "tool" and images:
            out.append(_images_message(images))
            images = []
        if message.role == "user":
            out.append({"role": "user", "content": _user_content(message)})
        elif message.role == "tool":
            call_id = message.tool_call_id or ""
            text = message.text or "(no output)"
            if message.is_error and not text.lower().startswith("error"):
                text = f"Error: {text}"
            if call_id in open_calls:
                open_calls.remove(call_id)
                out.append(_tool_message(call_id, text))
                images += [(message.tool_name or "a tool", i) for i in message.images]
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


def _user_content(message: Message) -> str | list[dict[str, Any]]:
    """A user message's text, or text and `image_url` parts when it carries images."""
    if not message.images:
        return message.text
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.text}] if message.text else []
    return parts + [_image_url(image) for image in message.images]


def _image_url(image: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": image_data_url(image)}}


def _images_message(images: list[tuple[str, ImagePart]]) -> dict[str, Any]:
    """Chat Completions tool messages hold text only: a tool's images follow as user content."""
    names = ", ".join(dict.fromkeys(name for name, _ in images))
    parts: list[dict[str, Any]] = [{"type": "text", "text": f"[images returned by {names}]"}]
    parts += [_image_url(image) for _name, image in images]
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
    thinking = [
        p
        for p in message.parts
        if isinstance(p, ThinkingPart)
        and p.provider == VENDOR
        and "item" not in p.extra  # not a Responses item
    ]
    if with_reasoning and thinking:
        details = [d for p in thinking for d in p.extra.get("reasoning_details", ())]
        if details:
            entry["reasoning_details"] = details
        reasoning = "".join(p.text for p in thinking)
        if calls and reasoning:
            entry["reasoning_content"] = reasoning
    return entry


def _arguments(call: ToolCallPart) -> str:
    if call.raw_arguments is not None and not call.arguments:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False)


class OpenAICompatProvider(SDKProvider):
    """One model on one OpenAI-compatible endpoint."""

    vendor = VENDOR

    def __init__(self, spec: ModelSpec, *, api_key: str, base_url: str | None = None) -> None:
        super().__init__(spec, api_key=api_key, base_url=base_url)
        self.dropped: set[str] = set()  # parameters this endpoint rejected

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
        tools, answer = split_answer(tools)  # providers/answer_format.py
        if tools:
            params["tools"] = [tool_to_openai(spec) for spec in tools]
            params["tool_choice"] = "auto"
        if answer is not None:
            params["response_format"] = openai_response_format(answer)
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

    def make_client(self) -> Any:
        from wyckoff_cli.providers.lazy_packages import import_openai_client

        client = import_openai_client()  # `openai._client`, not the SDK's whole tree
        return client.AsyncOpenAI(**self.client_options())

    def warm_up(self) -> None:
        """The first request's one-time work, for a worker thread: the SDK's client (HTTP
        pool, TLS context) and its chat completions resource."""
        self.client().chat.completions.with_streaming_response  # noqa: B018 (made on first access)

    def open_stream(self, request: dict[str, Any]) -> AbstractAsyncContextManager[Any]:
        return self._open(request)

    @asynccontextmanager
    async def _open(self, params: dict[str, Any]) -> Any:
        """Start the stream, dropping a parameter the endpoint rejects by name, one per retry."""
        while True:
            manager = self.client().chat.completions.with_streaming_response.create(**params)
            try:
                response = await manager.__aenter__()
            except Exception as exc:
                rejected = self.rejected_parameter(exc, params)
                if rejected is None:
                    raise
                log.info("%s rejected %r; retrying without it", self.name, rejected)
                self.dropped.add(rejected)
                params.pop(rejected)
                continue
            break
        try:
            yield response.http_response
        finally:
            await manager.__aexit__(None, None, None)

    def new_reader(self, request: dict[str, Any]) -> StreamReader:
        return ChunkReader(self.spec.id, bool(request.get("tools")), secret=self._api_key)

    @staticmethod
    def rejected_parameter(exc: BaseException, params: dict[str, Any]) -> str | None:
        """The optional parameter a 400/422 answer rejects by name, or None (any other
        error, or a rejection that names no optional parameter we sent)."""
        if getattr(exc, "status_code", None) not in (400, 422) or not type(exc).__module__.startswith(
            "openai"
        ):
            return None
        body = getattr(exc, "body", None)
        message = str(exc)
        named = getattr(exc, "param", None)
        if isinstance(body, dict):
            error = body.get("error", body)
            if isinstance(error, dict):
                message = f"{error.get('message', '')} {message}"
                named = named or error.get("param")
        if getattr(exc, "code", None) == "context_length_exceeded" or not _REJECTED.search(message):
            return None
        present = [name for name in DROPPABLE if name in params]
        if isinstance(named, str) and named:
            root = re.split(r"[.\[]", named, maxsplit=1)[0]
            return root if root in present else None
        mentioned = [name for name in present if re.search(rf"\b{re.escape(name)}\b", message)]
        return mentioned[0] if mentioned else None


_FINISH_REASONS: dict[str, StopReason] = {
    "stop": "end_turn",
    "end_turn": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "content_filter": "content_filter",
    "safety": "content_filter",
}


class ChunkReader(StreamReader):
    """Chat Completions stream events (raw JSON) to chunks."""

    def __init__(self, model_id: str, parse_text_calls: bool, *, secret: str | None = None) -> None:
        super().__init__(model_id)
        self._secret = secret
        self.usage: dict[str, Any] | None = None
        self.finish_reason = ""
        self._parser = TextToolCallParser() if parse_text_calls else None
        self._text: list[str] = []  # the content deltas of this read, handled together at its end
        self._ids: dict[str, int] = {}
        self._last_index = 0
        self._details: dict[int, dict[str, Any]] = {}  # reasoning_details entries by index

    def feed(self, event: str, data: bytes) -> None:
        if data == b"[DONE]":
            self.ended = True
            return
        chunk = json.loads(data)
        if not isinstance(chunk, dict):
            return
        if chunk.get("error") is not None or event == "error":
            raise stream_error(chunk, provider=self.model_id, secret=self._secret)
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = usage
        choices = chunk.get("choices")
        if not choices:
            return
        choice = choices[0]
        delta = choice.get("delta")
        if delta:
            self._delta(delta)
        reason = choice.get("finish_reason")
        if reason:
            self.finish_reason = reason
            self.ended = True

    def _delta(self, delta: dict[str, Any]) -> None:
        out = self.out
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        details = delta.get("reasoning_details")
        if details:
            text = self._keep_details(details)
            if not isinstance(reasoning, str) or not reasoning:
                reasoning = text
        if isinstance(reasoning, str) and reasoning:
            self.flush()
            out.append(ThinkingChunk(reasoning))
        content = delta.get("content")
        if content:
            self._text.append(content)
        for call in delta.get("tool_calls") or ():
            self.flush()
            function = call.get("function") or {}
            out.append(
                ToolCallChunk(
                    self._index(call),
                    id=call.get("id") or None,
                    name=function.get("name") or None,
                    arguments=function.get("arguments") or "",
                )
            )

    def _keep_details(self, details: list[Any]) -> str:
        """Merge `reasoning_details` deltas per entry index; the visible text of this delta."""
        text: list[str] = []
        for entry in details:
            if not isinstance(entry, dict):
                continue
            index = entry.get("index")
            key = index if isinstance(index, int) else len(self._details)
            kept = self._details.get(key)
            piece = entry.get("text") or entry.get("summary") or ""
            if isinstance(piece, str) and piece:
                text.append(piece)
            if kept is None:
                self._details[key] = dict(entry)
                continue
            for name, value in entry.items():
                if name in ("text", "summary", "data", "signature") and isinstance(value, str):
                    kept[name] = (kept.get(name) or "") + value
                elif value is not None:
                    kept[name] = value
        return "".join(text)

    def _index(self, call: dict[str, Any]) -> int:
        index = call.get("index")
        if isinstance(index, int):
            self._last_index = index
            return index
        # Endpoints that omit the index: a new id starts a new call.
        call_id = call.get("id")
        if call_id and call_id not in self._ids:
            self._ids[call_id] = len(self._ids)
            self._last_index = self._ids[call_id]
        return self._last_index

    def flush(self) -> None:
        """The content deltas held since the last flush, as one text (through the
        text tool-call parser when it is on): one piece of work per read, not per delta."""
        if not self._text:
            return
        text = "".join(self._text)
        self._text.clear()
        if self._parser is not None:
            self.out += self._parser.feed(text)
        else:
            self.out.append(TextChunk(text))

    def finish(self) -> None:
        if not self.ended:
            raise self.cut_off("[DONE] or a finish_reason")
        self.flush()
        if self._parser is not None:
            self.out += self._parser.finish()
        if self._details:
            details = [self._details[k] for k in sorted(self._details)]
            self.out.append(ThinkingChunk(extra={"reasoning_details": details}))
        if self.usage is not None:
            self.out.append(UsageChunk(_usage(self.usage), self.model_id))
        reason = self.finish_reason
        stop: StopReason = _FINISH_REASONS.get(reason, "other") if reason else "end_turn"
        self.out.append(StopChunk(stop, reason))


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


def _usage(usage: dict[str, Any]) -> Usage:
    prompt = usage.get("prompt_tokens") or 0
    completion = usage.get("completion_tokens") or 0
    details = usage.get("prompt_tokens_details") or {}
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if not cached:
        cached = usage.get("prompt_cache_hit_tokens")
    completion_details = usage.get("completion_tokens_details") or {}
    reasoning = completion_details.get("reasoning_tokens", 0) if isinstance(completion_details, dict) else 0
    return openai_usage(int(prompt), int(completion), int(cached or 0), int(reasoning or 0))
