"""OpenAI's Responses API (`openai` SDK, `client.responses`, streamed).

GPT-5-class and o-series reasoning models give their best results here: reasoning
summaries stream as thinking, and reasoning is carried across tool calls. Used for
`openai-responses:MODEL`, for an alias with `api = "responses"`, and for `openai:`
models the catalogue marks `api = "responses"`.

- Requests are stateless (`store: false`) with `include: ["reasoning.encrypted_content"]`:
  each reasoning item comes back with its encrypted content, is kept whole on the
  thinking block (`ThinkingPart.extra["item"]`) and is sent back unchanged, in place,
  on the next request.
- History: user text → a user message; assistant text → an assistant message; tool
  calls → `function_call` items (`call_id`, `name`, `arguments`); tool results →
  `function_call_output` items by `call_id`; server-side tool items (web search)
  are kept verbatim (`ServerToolPart`) and sent back.
- Stream events: `response.output_text.delta` (text),
  `response.reasoning_summary_text.delta` (thinking), `response.output_item.added` /
  `response.function_call_arguments.delta` (calls), `response.output_item.done`
  (whole reasoning and server-tool items), `response.completed` (usage, with cached
  and reasoning tokens) or `response.incomplete` (the stop reason); `error` and
  `response.failed` are mapped into the error tree. A stream that ends before
  `response.completed` / `response.incomplete` is a dropped connection.
"""

from __future__ import annotations

import dataclasses
import json
import re
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
from wyckoff_cli.providers import server_search
from wyckoff_cli.providers.answer_format import responses_text_format, split_answer
from wyckoff_cli.providers.base import (
    ServerToolChunk,
    StopChunk,
    StopReason,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
    UsageChunk,
)
from wyckoff_cli.providers.images import image_data_url
from wyckoff_cli.providers.openai_compat import openai_usage
from wyckoff_cli.providers.sdk_base import SDKProvider, StreamReader
from wyckoff_cli.providers.sdk_errors import stream_error
from wyckoff_cli.providers.server_search import search_sources, url_citations

VENDOR = "openai-responses"  # the tag of this API's server-tool parts
THINKING_VENDORS = ("openai", "openai-responses")  # reasoning items are tagged by model family
_REASONING_MODELS = re.compile(r"^(?:o\d|gpt-5|codex)", re.IGNORECASE)


def convert_input(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Neutral messages to Responses `input` items. Results without a matching call
    become user text; calls without a result are answered so the request is valid."""
    items: list[dict[str, Any]] = []
    open_calls: list[str] = []
    for message in messages:
        if message.role != "tool" and open_calls:
            items += [_output(c, "(no result)") for c in open_calls]
            open_calls = []
        if message.role == "user":
            if message.images:
                items.append({"role": "user", "content": _user_content(message)})
            elif message.text:
                items.append({"role": "user", "content": message.text})
        elif message.role == "tool":
            call_id = message.tool_call_id or ""
            text = message.text or "(no output)"
            if message.is_error and not text.lower().startswith("error"):
                text = f"Error: {text}"
            if call_id in open_calls:
                open_calls.remove(call_id)
                items.append(_output(call_id, text))
                if message.images:  # a tool's images (read_file, MCP) follow its output
                    items.append(_images(message.tool_name or "a tool", message.images))
            else:
                items.append(
                    {"role": "user", "content": f"[result of {message.tool_name or 'a tool'}]\n{text}"}
                )
        else:
            new_items, calls = _assistant_items(message)
            items += new_items
            open_calls = calls
    items += [_output(c, "(no result)") for c in open_calls]
    return items


def _user_content(message: Message) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [{"type": "input_text", "text": message.text}] if message.text else []
    return content + [_input_image(image) for image in message.images]


def _input_image(image: ImagePart) -> dict[str, Any]:
    return {"type": "input_image", "image_url": image_data_url(image)}


def _images(tool: str, images: list[ImagePart]) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "input_text", "text": f"[images returned by {tool}]"}]
    return {"role": "user", "content": content + [_input_image(image) for image in images]}


def _output(call_id: str, text: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": text}


def _assistant_items(message: Message) -> tuple[list[dict[str, Any]], list[str]]:
    items: list[dict[str, Any]] = []
    calls: list[str] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:
                items.append({"role": "assistant", "content": part.text})
        elif isinstance(part, ThinkingPart):
            item = part.extra.get("item")
            if part.provider in THINKING_VENDORS and isinstance(item, dict):
                items.append(dict(item))
        elif isinstance(part, ToolCallPart):
            arguments = part.raw_arguments if part.raw_arguments is not None and not part.arguments else None
            items.append(
                {
                    "type": "function_call",
                    "call_id": part.id,
                    "name": part.name,
                    "arguments": arguments or json.dumps(part.arguments, ensure_ascii=False),
                }
            )
            calls.append(part.id)
        elif isinstance(part, ServerToolPart) and part.provider == VENDOR:
            items.append(dict(part.data))
    return items, calls


def tool_to_responses(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": clean_schema(spec.parameters, "openai"),
        "strict": False,
    }


class OpenAIResponsesProvider(SDKProvider):
    """One model through the Responses API."""

    vendor = VENDOR

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.spec.model,
            "input": convert_input(messages),
            "stream": True,
            "store": False,
            "include": ["reasoning.encrypted_content"],
        }
        if system_prompt:
            params["instructions"] = system_prompt
        tools, answer = split_answer(tools)  # providers/answer_format.py
        if tools:
            params["tools"] = [tool_to_responses(spec) for spec in tools]
        if answer is not None:
            params["text"] = {"format": responses_text_format(answer)}
        if server_search.enabled(self.spec):  # the hosted web search tool (docs/TOOLS.md)
            params["tools"] = [*params.get("tools", []), *server_search.responses_tools(self.spec)]
            params["include"] = [*params["include"], server_search.RESPONSES_SOURCES]
            params["tool_choice"] = "auto"
        if self.spec.thinking != "off" and (
            self.spec.reasoning_effort or _REASONING_MODELS.search(self.spec.model)
        ):
            reasoning: dict[str, Any] = {"summary": "auto"}
            if self.spec.reasoning_effort:
                reasoning["effort"] = self.spec.reasoning_effort
            params["reasoning"] = reasoning
        sampling = (
            ()
            if "reasoning" in params
            else (("temperature", self.spec.temperature), ("top_p", self.spec.top_p))
        )
        for key, value in (("max_output_tokens", self.spec.max_tokens), *sampling):
            if value is not None:  # reasoning models take no sampling options
                params[key] = value
        return params

    def make_client(self) -> Any:
        from wyckoff_cli.providers.lazy_packages import import_openai_client

        client = import_openai_client()  # `openai._client`, not the SDK's whole tree
        return client.AsyncOpenAI(**self.client_options())

    def warm_up(self) -> None:
        """The first request's one-time work, for a worker thread: the SDK's client (HTTP
        pool, TLS context) and its responses resource."""
        self.client().responses.with_streaming_response  # noqa: B018 (made on first access)

    def open_stream(self, request: dict[str, Any]) -> AbstractAsyncContextManager[Any]:
        return self._open(request)

    @asynccontextmanager
    async def _open(self, request: dict[str, Any]) -> Any:
        async with self.client().responses.with_streaming_response.create(**request) as response:
            yield response.http_response

    def new_reader(self, request: dict[str, Any]) -> StreamReader:
        return ResponsesReader(self.spec.id, secret=self._api_key)


_INCOMPLETE: dict[str, StopReason] = {"max_output_tokens": "max_tokens", "content_filter": "content_filter"}


class ResponsesReader(StreamReader):
    """Responses API stream events (raw JSON) to chunks."""

    def __init__(self, model_id: str, *, secret: str | None = None) -> None:
        super().__init__(model_id)
        self._secret = secret
        self._calls: dict[int, bool] = {}  # output index of a function call -> got argument deltas
        self._summaries: dict[str, int] = {}  # reasoning item id -> summary parts seen
        self.stop: StopChunk | None = None
        self.usage: UsageChunk | None = None
        self.web_searches = 0  # web_search_call items (billed per call)

    def feed(self, event: str, data: bytes) -> None:
        payload = json.loads(data)
        if not isinstance(payload, dict):
            return
        kind = payload.get("type") or event
        out = self.out
        if kind == "response.output_text.delta":
            if payload.get("delta"):
                out.append(TextChunk(payload["delta"]))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            if payload.get("delta"):
                out.append(ThinkingChunk(payload["delta"]))
        elif kind == "response.reasoning_summary_part.added":
            item_id = str(payload.get("item_id", ""))
            seen = self._summaries.get(item_id, 0)
            if seen:
                out.append(ThinkingChunk("\n\n"))
            self._summaries[item_id] = seen + 1
        elif kind == "response.function_call_arguments.delta":
            index = int(payload.get("output_index", 0))
            self._calls[index] = True
            if payload.get("delta"):
                out.append(ToolCallChunk(index, arguments=payload["delta"]))
        elif kind == "response.output_item.added":
            self._added(int(payload.get("output_index", 0)), payload.get("item") or {})
        elif kind == "response.output_item.done":
            self._done(int(payload.get("output_index", 0)), payload.get("item") or {})
        elif kind in ("response.completed", "response.incomplete"):
            self._finished(payload.get("response") or {})
        elif kind == "response.failed":
            response = payload.get("response") or {}
            raise stream_error(response.get("error") or response, provider=self.model_id, secret=self._secret)
        elif kind == "error":
            raise stream_error(payload, provider=self.model_id, secret=self._secret)

    def _added(self, index: int, item: dict[str, Any]) -> None:
        if item.get("type") == "function_call":
            self._calls[index] = bool(item.get("arguments"))
            self.out.append(
                ToolCallChunk(
                    index,
                    id=item.get("call_id") or item.get("id"),
                    name=item.get("name"),
                    arguments=item.get("arguments") or "",
                )
            )

    def _done(self, index: int, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "reasoning":
            self.out.append(ThinkingChunk(extra={"item": item}))
        elif kind == "function_call":
            if not self._calls.get(index) and item.get("arguments"):
                self.out.append(ToolCallChunk(index, arguments=item["arguments"]))
        elif isinstance(kind, str) and kind.endswith("_call") and kind != "function_call":
            name = kind.removesuffix("_call")
            action = item.get("action") or {}
            query = action.get("query") if isinstance(action, dict) else None
            summary = f"searched the web: {query}" if name == "web_search" and query else f"used {name}"
            part = ServerToolPart(VENDOR, name, dict(item), "call", item.get("id"))
            if name == "web_search":
                self.web_searches += 1
            self.out.append(ServerToolChunk(name, summary, part, search_sources(action)))
        elif kind == "message":
            sources = url_citations(item)
            if sources:
                titles = ", ".join(s["title"] or s["url"] for s in sources)
                self.out.append(ServerToolChunk("citations", f"cited: {titles}", sources=sources))

    def _finished(self, response: dict[str, Any]) -> None:
        self.ended = True
        usage = response.get("usage")
        if isinstance(usage, dict):
            cached = (usage.get("input_tokens_details") or {}).get("cached_tokens") or 0
            reasoning = (usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0
            counts = openai_usage(
                int(usage.get("input_tokens") or 0),
                int(usage.get("output_tokens") or 0),
                int(cached),
                int(reasoning),
            )
            self.usage = UsageChunk(counts, self.model_id)
        status = response.get("status") or "completed"
        if status == "incomplete":
            raw = str((response.get("incomplete_details") or {}).get("reason") or "incomplete")
            self.stop = StopChunk(_INCOMPLETE.get(raw, "other"), raw)
        else:
            self.stop = StopChunk("tool_use" if self._calls else "end_turn", status)

    def finish(self) -> None:
        if not self.ended:
            raise self.cut_off("response.completed")
        if self.usage is not None:
            if self.web_searches:
                usage = dataclasses.replace(self.usage.usage, web_searches=self.web_searches)
                self.usage = dataclasses.replace(self.usage, usage=usage)
            self.out.append(self.usage)
        if self.stop is not None:
            self.out.append(self.stop)
