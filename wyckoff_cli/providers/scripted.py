"""A deterministic provider that replays scripted rounds and records what it was sent.

Used by the loop tests, the TUI tests, benchmarks and offline demos
(`--model scripted:FILE`, a JSON file). Each call to `chat_stream` plays the next
round. A round is either a list of steps or a dict shorthand:

    {"thinking": "...", "text": "...", "tool_calls": [{"name": "read_file",
     "args": {"path": "a.py"}}], "usage": {"input_tokens": 10, "output_tokens": 5},
     "chunk_size": 4, "delay": 0.01, "error": {"kind": "rate_limited", "message": "..."}}

Steps: `{"text": s}`, `{"thinking": s}`, `{"signature": s}`, `{"tool_call": {...},
"fragments": n}`, `{"raw_tool_call": {"name", "arguments" (a string), "id"}}`,
`{"usage": {...}}`, `{"sleep": seconds}`, `{"error": {...}}`. With `chunk_size`,
text is sent in pieces of that many characters; `delay` sleeps between chunks.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.core import errors as provider_errors
from wyckoff_cli.core.errors import ProviderConfigError, ProviderError
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import (
    Chunk,
    StreamingProvider,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
    UsageChunk,
)

ERROR_KINDS: dict[str, type[ProviderError]] = {
    cls.kind: cls
    for cls in (
        provider_errors.RateLimited,
        provider_errors.Overloaded,
        provider_errors.ProviderTimeout,
        provider_errors.ConnectionFailed,
        provider_errors.AuthenticationFailed,
        provider_errors.BadRequest,
        provider_errors.ContextTooLong,
        provider_errors.ProviderConfigError,
    )
}


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    system_prompt: str


@dataclass
class ScriptedProvider(StreamingProvider):
    """Plays `rounds` in order. `requests` holds the last `keep_requests` requests
    (None keeps every one), `request_count` counts them all: a long benchmark or soak
    run would otherwise keep every request's history alive (quadratic memory)."""

    rounds: list[Any]
    model: str = "scripted:test"
    keep_requests: int | None = 100
    closed_streams: int = 0
    request_count: int = 0
    _next: int = 0
    _log: deque[RecordedRequest] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._log = deque(maxlen=self.keep_requests)

    @property
    def requests(self) -> list[RecordedRequest]:
        """The recorded requests, oldest first (at most `keep_requests`)."""
        return list(self._log)

    @property
    def name(self) -> str:
        return self.model

    @classmethod
    def from_file(cls, path: Path, model: str | None = None) -> ScriptedProvider:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ProviderConfigError(f"cannot read script {path}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise ProviderConfigError(f"{path}, line {exc.lineno}: not valid JSON ({exc.msg})") from None
        rounds = data.get("rounds") if isinstance(data, dict) else data
        if not isinstance(rounds, list):
            raise ProviderConfigError(f'{path}: expected a list of rounds or {{"rounds": [...]}}')
        # `wyckoff run --model scripted:FILE` never reads the log: keep none.
        return cls(rounds, model=model or f"scripted:{path.name}", keep_requests=0)

    @property
    def remaining(self) -> int:
        return len(self.rounds) - self._next

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        self.request_count += 1
        if self.keep_requests != 0:
            self._log.append(RecordedRequest(tuple(messages), tuple(tools), system_prompt))
        if self._next >= len(self.rounds):
            raise ProviderConfigError(
                f"the scripted provider has no round {self._next + 1} (the script has {len(self.rounds)})"
            )
        script = self.rounds[self._next]
        self._next += 1
        return self._play(script, self._next)

    async def _play(self, script: Any, round_no: int) -> AsyncIterator[Chunk]:
        steps = script if isinstance(script, list) else _expand(script)
        chunk_size = script.get("chunk_size") if isinstance(script, dict) else None
        delay = float(script.get("delay", 0.0)) if isinstance(script, dict) else 0.0
        index = 0
        try:
            for step in steps:
                for chunk in _chunks(step, chunk_size, f"r{round_no}_{index + 1}", index):
                    if isinstance(chunk, float):
                        await asyncio.sleep(chunk)
                        continue
                    if delay:
                        await asyncio.sleep(delay)
                    yield chunk
                if "tool_call" in step or "raw_tool_call" in step:
                    index += 1
        finally:
            self.closed_streams += 1


def _expand(script: dict[str, Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    if script.get("thinking"):
        steps.append({"thinking": script["thinking"]})
        if script.get("signature"):
            steps.append({"signature": script["signature"]})
    if script.get("text"):
        steps.append({"text": script["text"]})
    for call in script.get("tool_calls", ()):
        steps.append({"tool_call": call, "fragments": script.get("fragments", 1)})
    if script.get("stall"):
        steps.append({"sleep": float(script["stall"])})
    if script.get("error"):
        steps.append({"error": script["error"]})
    steps.append({"usage": script.get("usage", {"input_tokens": 100, "output_tokens": 20})})
    return steps


def _pieces(text: str, size: int | None) -> list[str]:
    if not size or size <= 0:
        return [text]
    return [text[i : i + size] for i in range(0, len(text), size)]


def _chunks(step: dict[str, Any], chunk_size: int | None, default_id: str, index: int) -> list[Chunk | float]:
    if "text" in step:
        return [TextChunk(p) for p in _pieces(step["text"], chunk_size)]
    if "thinking" in step:
        return [ThinkingChunk(p) for p in _pieces(step["thinking"], chunk_size)]
    if "signature" in step:
        return [ThinkingChunk(signature=step["signature"])]
    if "tool_call" in step:
        call = step["tool_call"]
        arguments = json.dumps(call.get("args", {}))
        parts = max(1, int(step.get("fragments", 1)))
        size = max(1, -(-len(arguments) // parts))
        call_id = call.get("id") or f"call_{default_id}"
        pieces = _pieces(arguments, size)
        out: list[Chunk | float] = [ToolCallChunk(index, call_id, call["name"], pieces[0])]
        out.extend(ToolCallChunk(index, arguments=p) for p in pieces[1:])
        return out
    if "raw_tool_call" in step:
        call = step["raw_tool_call"]
        return [
            ToolCallChunk(
                index, call.get("id") or f"call_{default_id}", call["name"], call.get("arguments", "")
            )
        ]
    if "usage" in step:
        return [UsageChunk(Usage.from_dict(step["usage"]))]
    if "sleep" in step:
        return [float(step["sleep"])]
    if "error" in step:
        error = step["error"]
        kind = error.get("kind", "server") if isinstance(error, dict) else str(error)
        message = error.get("message", f"scripted {kind} error") if isinstance(error, dict) else kind
        raise ERROR_KINDS.get(kind, ProviderError)(message)
    raise ProviderConfigError(f"unknown scripted step: {sorted(step)}")
