"""Gemini through `google-genai` (`streamGenerateContent?alt=sse`, API v1beta).

- The request is Gemini's wire JSON, built here; the SDK's client supplies the URL,
  API version, key header and HTTP client, and its errors. The stream is read raw
  (one `json.loads` per event) instead of through a pydantic model per chunk.
- Tools become function declarations (`parametersJsonSchema`); the runtime runs tools.
- Streamed parts (several per chunk): `thought: true` text is thinking, other text is
  the answer, `functionCall` parts are tool calls (whole, one chunk each). Gemini
  gives no call ids in 2.x, so ids are minted; ids the API did give are sent back.
- `thoughtSignature` (base64) is kept on the part it came with — a call's
  `extra["gemini_thought_signature"]`, a thinking block, or a text part (Gemini 3
  signs text too, sometimes on an empty last part) — and sent back with it. Calls
  from another vendor get Google's documented placeholder signature on Gemini 3.
- `executableCode` / `codeExecutionResult` parts (code execution run by Google) are
  kept verbatim as `ServerToolPart`s and sent back; `groundingMetadata` (Google
  Search grounding) is kept as a `metadata` server-tool part, shown, and not sent
  (the API takes none).
- Usage is the last `usageMetadata`: prompt tokens plus `toolUsePromptTokenCount`
  (grounding and code execution), cached ones included; thoughts count as output.
- `finishReason` ends the stream (`MAX_TOKENS` → `max_tokens`; `SAFETY`,
  `RECITATION`, `BLOCKLIST`, ... → `content_filter`); a stream without one is a
  dropped connection.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import uuid
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from wyckoff_cli.core.errors import BadRequest
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
from wyckoff_cli.providers.answer_format import gemini_generation_config, split_answer
from wyckoff_cli.providers.base import (
    ServerToolChunk,
    StopChunk,
    StopReason,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
    UsageChunk,
)
from wyckoff_cli.providers.credentials import request_timeout
from wyckoff_cli.providers.images import image_base64
from wyckoff_cli.providers.sdk_base import SDKProvider, StreamReader
from wyckoff_cli.providers.sdk_errors import stream_error

VENDOR = "gemini"
API_VERSION = "v1beta"
SIGNATURE_KEY = "gemini_thought_signature"
NATIVE_ID_KEY = "gemini_call_id"
# Google's documented stand-in for calls whose signature is unknown (history from
# another model); only Gemini 3 and later validate signatures on every call.
PLACEHOLDER_SIGNATURE = base64.b64encode(b"skip_thought_signature_validator").decode("ascii")
_OLD_MODELS = re.compile(r"gemini-(?:1|2)(?:\.|-)")
_EFFORT_LEVELS = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}
_SERVER_PARTS = {"executableCode": "code_execution", "codeExecutionResult": "code_execution"}


def convert_messages(messages: Sequence[Message], *, placeholder_signatures: bool) -> list[dict[str, Any]]:
    """Neutral messages to Gemini `contents` (wire JSON; signatures as base64)."""
    contents: list[dict[str, Any]] = []
    calls: dict[str, ToolCallPart] = {}
    for message in messages:
        role = "user"
        parts: list[dict[str, Any]] = []
        if message.role == "user":
            parts = [{"text": p.text} for p in message.parts if isinstance(p, TextPart) and p.text]
            parts += [_inline(image) for image in message.images]
        elif message.role == "tool":
            call = calls.get(message.tool_call_id or "")
            name = message.tool_name or (call.name if call else "tool")
            key = "error" if message.is_error else "output"
            response: dict[str, Any] = {"name": name, "response": {key: message.text}}
            if call is not None and call.extra.get(NATIVE_ID_KEY):
                response["id"] = call.id
            parts = [{"functionResponse": response}]
            parts += [_inline(image) for image in message.images]  # a tool's images beside it
        else:
            role = "model"
            parts = _model_parts(message, calls, placeholder_signatures)
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return contents


def _inline(image: ImagePart) -> dict[str, Any]:
    return {"inlineData": {"mimeType": image.media_type, "data": image_base64(image)}}


def _model_parts(
    message: Message, calls: dict[str, ToolCallPart], placeholder_signatures: bool
) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            signed = part.signature is not None and part.provider == VENDOR
            if part.text or signed:
                entry: dict[str, Any] = {"text": part.text}
                if signed:
                    entry["thoughtSignature"] = part.signature
                parts.append(entry)
        elif isinstance(part, ThinkingPart) and part.provider == VENDOR:
            thought: dict[str, Any] = {"text": part.text, "thought": True}
            if part.signature:
                thought["thoughtSignature"] = part.signature
            if part.text or part.signature:
                parts.append(thought)
        elif isinstance(part, ToolCallPart):
            calls[part.id] = part
            function: dict[str, Any] = {"name": part.name, "args": part.arguments}
            if part.extra.get(NATIVE_ID_KEY):
                function["id"] = part.id
            entry = {"functionCall": function}
            signature = part.extra.get(SIGNATURE_KEY)
            if signature is None and placeholder_signatures:
                signature = PLACEHOLDER_SIGNATURE
            if signature is not None:
                entry["thoughtSignature"] = signature
            parts.append(entry)
        elif isinstance(part, ServerToolPart) and part.provider == VENDOR and part.kind != "metadata":
            parts.append(dict(part.data))
    return parts


class GeminiProvider(SDKProvider):
    """One Gemini model."""

    vendor = VENDOR

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> dict[str, Any]:
        """`{"model", "body"}`: the model name and the `streamGenerateContent` body."""
        placeholder = not _OLD_MODELS.search(self.spec.model)
        body: dict[str, Any] = {"contents": convert_messages(messages, placeholder_signatures=placeholder)}
        if system_prompt:
            body["systemInstruction"] = {"parts": [{"text": system_prompt}]}
        tools, answer = split_answer(tools)  # providers/answer_format.py
        if tools:
            body["tools"] = [{"functionDeclarations": [tool_to_gemini(spec) for spec in tools]}]
        if server_search.enabled(self.spec):  # Google Search grounding (docs/TOOLS.md)
            body["tools"] = [*body.get("tools", []), *server_search.gemini_tools(self.spec)]
        config: dict[str, Any] = {}
        thinking = self._thinking()
        if thinking:
            config["thinkingConfig"] = thinking
        for key, value in (
            ("maxOutputTokens", self.spec.max_tokens),
            ("temperature", self.spec.temperature),
            ("topP", self.spec.top_p),
        ):
            if value is not None:
                config[key] = value
        if answer is not None:
            config.update(gemini_generation_config(answer))
        if config:
            body["generationConfig"] = config
        return {"model": self.spec.model, "body": body}

    def _thinking(self) -> dict[str, Any] | None:
        mode, effort = self.spec.thinking, self.spec.reasoning_effort
        if mode == "budget":
            return {"includeThoughts": True, "thinkingBudget": self.spec.thinking_budget or -1}
        if mode == "adaptive":
            return {"includeThoughts": True, "thinkingBudget": -1}
        if effort in _EFFORT_LEVELS and mode != "off":
            return {"includeThoughts": True, "thinkingLevel": _EFFORT_LEVELS[effort]}
        return None

    def make_client(self) -> Any:
        from google import genai
        from google.genai import types

        timeout = request_timeout(self.spec)
        options = types.HttpOptions(
            api_version=API_VERSION,
            base_url=self.base_url,
            timeout=int(timeout * 1000) if timeout is not None else None,
        )
        return genai.Client(api_key=self._api_key, vertexai=False, http_options=options)

    def warm_up(self) -> None:
        """The first request's one-time work, for a worker thread: the SDK's client."""
        self.client()

    def open_stream(self, request: dict[str, Any]) -> AbstractAsyncContextManager[Any]:
        return self._open(request)

    @asynccontextmanager
    async def _open(self, request: dict[str, Any]) -> Any:
        # google-genai has no public raw-stream call: its API client builds the request
        # (URL, version, key) and sends it; an error status raises its APIError. The
        # client stays referenced until the stream ends (it closes its HTTP client
        # when collected).
        client = self.client()
        api = client._api_client
        path = f"models/{request['model']}:streamGenerateContent?alt=sse"
        http_request = api._build_request("post", path, dict(request["body"]), None)
        response = await api._async_request(http_request=http_request, stream=True)
        raw = response.response_stream
        try:
            yield raw
        finally:
            await raw.aclose()

    def new_reader(self, request: dict[str, Any]) -> StreamReader:
        return ResponseReader(self.spec.id, secret=self._api_key)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aio.aclose()


_FINISH: dict[str, StopReason] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
}


class ResponseReader(StreamReader):
    """`GenerateContentResponse` events (raw JSON) to chunks."""

    def __init__(self, model_id: str, *, secret: str | None = None) -> None:
        super().__init__(model_id)
        self._secret = secret
        self._metadata: Any = None
        self.finish_reason = ""
        self._calls = 0
        self._grounding: dict[str, Any] | None = None

    def feed(self, event: str, data: bytes) -> None:
        response = json.loads(data)
        if not isinstance(response, dict):
            return
        if "error" in response or event == "error":
            raise stream_error(response, provider=self.model_id, secret=self._secret)
        metadata = response.get("usageMetadata")
        if metadata is not None:
            self._metadata = metadata  # it repeats on every chunk: the last one counts
        candidates = response.get("candidates")
        if not candidates:
            reason = (response.get("promptFeedback") or {}).get("blockReason")
            if reason:
                raise BadRequest(
                    f"{self.model_id}: the prompt was blocked ({reason})", provider=self.model_id
                )
            return
        candidate = candidates[0]
        for part in (candidate.get("content") or {}).get("parts") or ():
            if len(part) == 1 and "text" in part:  # the common case: plain answer text
                if part["text"]:
                    self.out.append(TextChunk(part["text"]))
            else:
                self._part(part)
        grounding = candidate.get("groundingMetadata")
        if isinstance(grounding, dict):
            self._grounding = grounding
        reason = candidate.get("finishReason")
        if reason:
            self.finish_reason = reason
            self.ended = True

    def finish(self) -> None:
        if not self.ended:
            raise self.cut_off("a finishReason")
        if self._grounding is not None:
            self.out.append(_grounding_chunk(self._grounding))
        if isinstance(self._metadata, dict):
            usage = _usage(self._metadata)
            queries = (self._grounding or {}).get("webSearchQueries") or ()
            if queries:  # Google bills grounding per search query (Gemini 3)
                usage = dataclasses.replace(usage, web_searches=len(queries))
            self.out.append(UsageChunk(usage, self.model_id))
        self.out.append(StopChunk(_FINISH.get(self.finish_reason, "other"), self.finish_reason))

    def _part(self, part: dict[str, Any]) -> None:
        signature = part.get("thoughtSignature")
        call = part.get("functionCall")
        if call is not None:
            extra: dict[str, Any] = {}
            if signature:
                extra[SIGNATURE_KEY] = signature
            call_id = call.get("id")
            if call_id:
                extra[NATIVE_ID_KEY] = True
            else:
                call_id = f"call_{uuid.uuid4().hex[:24]}"
            index = self._calls
            self._calls += 1
            arguments = json.dumps(call.get("args") or {}, ensure_ascii=False)
            self.out.append(
                ToolCallChunk(
                    index, id=call_id, name=call.get("name") or "", arguments=arguments, extra=extra
                )
            )
            return
        for key, name in _SERVER_PARTS.items():
            if key in part:
                self.out.append(_code_chunk(key, name, part))
                return
        text = part.get("text")
        if part.get("thought"):
            if text:
                self.out.append(ThinkingChunk(text))
            if signature:
                self.out.append(ThinkingChunk(signature=signature))
        elif text or signature:
            self.out.append(TextChunk(text or "", signature=signature or None))


def _code_chunk(key: str, name: str, part: dict[str, Any]) -> ServerToolChunk:
    body = part[key] if isinstance(part[key], dict) else {}
    if key == "executableCode":
        code = str(body.get("code", ""))
        first = code.strip().splitlines()[0] if code.strip() else ""
        summary = f"ran code: {first[:80]}" if first else "ran code"
        kind = "call"
    else:
        summary = f"code result: {body.get('outcome', 'done')}"
        kind = "result"
    server = ServerToolPart(VENDOR, name, dict(part), kind, body.get("id"))  # type: ignore[arg-type]
    return ServerToolChunk(name, summary, server)


def _grounding_chunk(grounding: dict[str, Any]) -> ServerToolChunk:
    queries = [q for q in grounding.get("webSearchQueries") or () if isinstance(q, str)]
    sources: list[dict[str, str]] = []
    for chunk in grounding.get("groundingChunks") or ():
        web = chunk.get("web") if isinstance(chunk, dict) else None
        if isinstance(web, dict) and web.get("uri"):
            sources.append({"url": str(web["uri"]), "title": str(web.get("title") or "")})
    summary = f"searched the web: {'; '.join(queries)}" if queries else "grounded with Google Search"
    part = ServerToolPart(VENDOR, "google_search", dict(grounding), "metadata")
    return ServerToolChunk("google_search", summary, part, tuple(sources))


def _usage(metadata: dict[str, Any]) -> Usage:
    prompt = (metadata.get("promptTokenCount") or 0) + (metadata.get("toolUsePromptTokenCount") or 0)
    candidates = metadata.get("candidatesTokenCount") or 0
    thoughts = metadata.get("thoughtsTokenCount") or 0
    cached = metadata.get("cachedContentTokenCount") or 0
    return gemini_usage(int(prompt), int(candidates), int(cached), int(thoughts))


def tool_to_gemini(spec: ToolSpec) -> dict[str, Any]:
    """A FunctionDeclaration (`parametersJsonSchema` takes JSON Schema), cleaned for Gemini."""
    return {
        "name": spec.name,
        "description": spec.description,
        "parametersJsonSchema": clean_schema(spec.parameters, "gemini"),
    }


def gemini_usage(
    prompt_token_count: int,
    candidates_token_count: int,
    cached_content_token_count: int = 0,
    thoughts_token_count: int = 0,
) -> Usage:
    """Gemini's `usageMetadata`: cached tokens are part of the prompt; thoughts are
    counted apart from the candidates but billed as output."""
    output = candidates_token_count + thoughts_token_count
    return Usage(prompt_token_count, output, cached_content_token_count, 0, thoughts_token_count)
