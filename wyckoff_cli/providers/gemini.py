"""Gemini through `google-genai` (async client, `streamGenerateContent`, API v1beta).

- Tools become function declarations (JSON schema as `parameters_json_schema`);
  automatic function calling is off: the runtime runs tools.
- Streamed parts: `thought: true` text is thinking, other text is the answer,
  `function_call` parts are tool calls (whole, one chunk each). Gemini gives no call
  ids, so ids are minted; ids the API did give are sent back.
- `thought_signature` (bytes on the wire) is kept as base64 in the call's
  `extra["gemini_thought_signature"]` (or on the thinking block) and sent back with
  the same part next time, as Gemini requires in a tool loop. Calls that came from
  another vendor get Google's documented placeholder signature on Gemini 3 models.
- Usage is the last `usage_metadata` of the stream (it repeats on every chunk):
  prompt tokens include cached ones, thoughts count as output (and as reasoning).
- The API version is pinned to v1beta (thinking and preview features need it), and
  the `genai.Client` is kept referenced while a stream is open (it closes its HTTP
  client when garbage-collected).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

from wyckoff_cli.core.errors import BadRequest
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

VENDOR = "gemini"
API_VERSION = "v1beta"
SIGNATURE_KEY = "gemini_thought_signature"
NATIVE_ID_KEY = "gemini_call_id"
# Google's documented stand-in for calls whose signature is unknown (history from
# another model); only Gemini 3 and later validate signatures on every call.
PLACEHOLDER_SIGNATURE = b"skip_thought_signature_validator"
_OLD_MODELS = re.compile(r"gemini-(?:1|2)(?:\.|-)")
_EFFORT_LEVELS = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}


def _decode(signature: str | None) -> bytes | None:
    if not signature:
        return None
    try:
        return base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        return signature.encode()


def _encode(signature: bytes | None) -> str | None:
    return base64.b64encode(signature).decode("ascii") if signature else None


def convert_messages(messages: Sequence[Message], *, placeholder_signatures: bool) -> list[dict[str, Any]]:
    """Neutral messages to Gemini `contents` (dicts; signatures as bytes)."""
    contents: list[dict[str, Any]] = []
    calls: dict[str, ToolCallPart] = {}
    for message in messages:
        role = "user"
        parts: list[dict[str, Any]] = []
        if message.role == "user":
            parts = [{"text": p.text} for p in message.parts if isinstance(p, TextPart) and p.text]
        elif message.role == "tool":
            call = calls.get(message.tool_call_id or "")
            name = message.tool_name or (call.name if call else "tool")
            key = "error" if message.is_error else "output"
            response: dict[str, Any] = {"name": name, "response": {key: message.text}}
            if call is not None and call.extra.get(NATIVE_ID_KEY):
                response["id"] = call.id
            parts = [{"function_response": response}]
            for image in message.meta.get("images", ()):  # a tool's images (e.g. MCP) beside it
                parts.append(
                    {"inline_data": {"mime_type": image["mime_type"], "data": _decode(image["data"])}}
                )
        else:
            role = "model"
            for part in message.parts:
                if isinstance(part, TextPart) and part.text:
                    parts.append({"text": part.text})
                elif isinstance(part, ThinkingPart) and part.provider == VENDOR:
                    thought: dict[str, Any] = {"text": part.text, "thought": True}
                    if part.signature:
                        thought["thought_signature"] = _decode(part.signature)
                    if part.text or part.signature:
                        parts.append(thought)
                elif isinstance(part, ToolCallPart):
                    calls[part.id] = part
                    function: dict[str, Any] = {"name": part.name, "args": part.arguments}
                    if part.extra.get(NATIVE_ID_KEY):
                        function["id"] = part.id
                    entry: dict[str, Any] = {"function_call": function}
                    signature = _decode(part.extra.get(SIGNATURE_KEY))
                    if signature is None and placeholder_signatures:
                        signature = PLACEHOLDER_SIGNATURE
                    if signature is not None:
                        entry["thought_signature"] = signature
                    parts.append(entry)
        if not parts:
            continue
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})
    return contents


class GeminiProvider(StreamingProvider):
    """One Gemini model."""

    def __init__(self, spec: ModelSpec, *, api_key: str, base_url: str | None = None) -> None:
        self.spec = spec
        self.base_url = base_url
        self._api_key = api_key
        self._client: Any = None

    @property
    def name(self) -> str:
        return self.spec.id

    def __repr__(self) -> str:
        return f"GeminiProvider({self.spec.id!r}, base_url={self.base_url!r})"

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> dict[str, Any]:
        """`{"model", "contents", "config"}` for `generate_content_stream`."""
        placeholder = not _OLD_MODELS.search(self.spec.model)
        config: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
        if system_prompt:
            config["system_instruction"] = system_prompt
        if tools:
            config["tools"] = [{"function_declarations": [tool_to_gemini(spec) for spec in tools]}]
        thinking = self._thinking()
        if thinking:
            config["thinking_config"] = thinking
        for key, value in (
            ("max_output_tokens", self.spec.max_tokens),
            ("temperature", self.spec.temperature),
            ("top_p", self.spec.top_p),
        ):
            if value is not None:
                config[key] = value
        return {
            "model": self.spec.model,
            "contents": convert_messages(messages, placeholder_signatures=placeholder),
            "config": config,
        }

    def _thinking(self) -> dict[str, Any] | None:
        mode, effort = self.spec.thinking, self.spec.reasoning_effort
        if mode == "budget":
            return {"include_thoughts": True, "thinking_budget": self.spec.thinking_budget or -1}
        if mode == "adaptive":
            return {"include_thoughts": True, "thinking_budget": -1}
        if effort in _EFFORT_LEVELS and mode != "off":
            return {"include_thoughts": True, "thinking_level": _EFFORT_LEVELS[effort]}
        return None

    def _get_client(self) -> Any:
        if self._client is None:
            from google import genai
            from google.genai import types

            timeout = request_timeout(self.spec)
            options = types.HttpOptions(
                api_version=API_VERSION,
                base_url=self.base_url,
                timeout=int(timeout * 1000) if timeout is not None else None,
            )
            self._client = genai.Client(api_key=self._api_key, vertexai=False, http_options=options)
        return self._client

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        self._get_client()  # import the SDK now, not on the watchdog's clock
        return self._stream(self.build_request(messages, tools, system_prompt))

    async def _stream(self, request: dict[str, Any]) -> AsyncIterator[Chunk]:
        client = self._get_client()  # referenced until the stream ends
        stream: Any = None
        try:
            from google.genai import types

            config = types.GenerateContentConfig.model_validate(request["config"])
            stream = await client.aio.models.generate_content_stream(
                model=request["model"], contents=request["contents"], config=config
            )
            reader = _ResponseReader(self.spec.id)
            async for response in stream:
                for chunk in reader.read(response):
                    yield chunk
            if reader.usage is not None:
                yield reader.usage
        except Exception as exc:
            raise_translated(exc, provider=self.name, secret=self._api_key)
        finally:
            if stream is not None:
                await stream.aclose()


class _ResponseReader:
    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.usage: UsageChunk | None = None
        self._calls = 0

    def read(self, response: Any) -> list[Chunk]:
        metadata = getattr(response, "usage_metadata", None)
        if metadata is not None:
            self.usage = UsageChunk(_usage(metadata), self.model_id)
        candidates = getattr(response, "candidates", None) or ()
        if not candidates:
            feedback = getattr(response, "prompt_feedback", None)
            reason = getattr(feedback, "block_reason", None) if feedback is not None else None
            if reason:
                raise BadRequest(
                    f"{self.model_id}: the prompt was blocked ({reason})", provider=self.model_id
                )
            return []
        content = getattr(candidates[0], "content", None)
        out: list[Chunk] = []
        for part in getattr(content, "parts", None) or ():
            out += self._part(part)
        return out

    def _part(self, part: Any) -> list[Chunk]:
        signature = _encode(getattr(part, "thought_signature", None))
        call = getattr(part, "function_call", None)
        if call is not None:
            extra: dict[str, Any] = {}
            if signature:
                extra[SIGNATURE_KEY] = signature
            call_id = call.id
            if call_id:
                extra[NATIVE_ID_KEY] = True
            else:
                call_id = f"call_{uuid.uuid4().hex[:24]}"
            index = self._calls
            self._calls += 1
            arguments = json.dumps(call.args or {}, ensure_ascii=False)
            return [ToolCallChunk(index, id=call_id, name=call.name or "", arguments=arguments, extra=extra)]
        text = getattr(part, "text", None)
        if getattr(part, "thought", False):
            out: list[Chunk] = [ThinkingChunk(text)] if text else []
            if signature:
                out.append(ThinkingChunk(signature=signature))
            return out
        return [TextChunk(text)] if text else []


def _usage(metadata: Any) -> Usage:
    prompt = getattr(metadata, "prompt_token_count", None) or 0
    candidates = getattr(metadata, "candidates_token_count", None) or 0
    thoughts = getattr(metadata, "thoughts_token_count", None) or 0
    cached = getattr(metadata, "cached_content_token_count", None) or 0
    return gemini_usage(int(prompt), int(candidates), int(cached), int(thoughts))


def tool_to_gemini(spec: ToolSpec) -> dict[str, Any]:
    """A FunctionDeclaration as a dict (`parameters_json_schema` takes JSON Schema)."""
    return {
        "name": spec.name,
        "description": spec.description,
        "parameters_json_schema": clean_schema(spec.parameters, "gemini"),
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
