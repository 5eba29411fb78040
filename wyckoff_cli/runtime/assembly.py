"""Assemble a stream of chunks into ordered message parts.

Text, thinking and tool calls keep the order in which they began; tool-call fragments
are joined per index (they may interleave across calls), and arguments are parsed
leniently. Used by the runtime for every model round.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from wyckoff_cli.core.messages import Part, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.providers.base import TextChunk, ThinkingChunk, ToolCallChunk


class ArgumentsError(ValueError):
    """Tool-call arguments that are not a JSON object. The message is written for the
    model, saying what was wrong and where."""


_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_arguments(raw: str) -> dict[str, Any]:
    """Parse tool-call arguments leniently: empty means `{}`; code fences, trailing
    commas and a missing closing brace are forgiven. Raises `ArgumentsError`."""
    text = raw.strip()
    if not text:
        return {}
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as first:
        value = _repair(text, first)
    if isinstance(value, str):
        # Some models double-encode: "{\"path\": ...}".
        with contextlib.suppress(json.JSONDecodeError):
            value = json.loads(value)
    if not isinstance(value, dict):
        raise ArgumentsError(
            f"tool arguments must be a JSON object, got {type(value).__name__}: {_clip(raw)}"
        )
    return value


def _repair(text: str, error: json.JSONDecodeError) -> Any:
    candidate = _TRAILING_COMMA.sub(r"\1", text)
    opened = candidate.count("{") - candidate.count("}")
    if opened > 0:
        candidate += "}" * opened
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        raise ArgumentsError(
            f"tool arguments are not valid JSON ({error.msg} at line {error.lineno}, "
            f"column {error.colno}): {_clip(text)}. Send the arguments as one JSON object."
        ) from None


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} characters)"


@dataclass
class _PendingCall:
    index: int
    id: str | None = None
    name: str | None = None
    fragments: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Slot:
    kind: str  # "text" | "thinking" | "call"
    texts: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None
    closed: bool = False
    call: _PendingCall | None = None


class ResponseAssembler:
    """Feed chunks with `add`; read ordered parts with `parts()`."""

    def __init__(self, provider: str | None = None) -> None:
        self._provider = provider
        self._slots: list[_Slot] = []
        self._calls: dict[int, _PendingCall] = {}
        self.text = ""  # all visible text so far, for cheap access

    def add(self, chunk: TextChunk | ThinkingChunk | ToolCallChunk) -> None:
        if isinstance(chunk, TextChunk):
            if not chunk.text:
                return
            self.text += chunk.text
            slot = self._slots[-1] if self._slots else None
            if slot is None or slot.kind != "text":
                slot = _Slot("text")
                self._slots.append(slot)
            slot.texts.append(chunk.text)
        elif isinstance(chunk, ThinkingChunk):
            slot = self._slots[-1] if self._slots else None
            if slot is None or slot.kind != "thinking" or slot.closed:
                if not (chunk.text or chunk.signature or chunk.redacted_data):
                    return
                slot = _Slot("thinking")
                self._slots.append(slot)
            if chunk.text:
                slot.texts.append(chunk.text)
            if chunk.signature is not None or chunk.redacted_data is not None:
                slot.signature = chunk.signature
                slot.redacted = chunk.redacted_data
                slot.closed = True
        else:
            pending = self._calls.get(chunk.index)
            if pending is None:
                pending = _PendingCall(chunk.index)
                self._calls[chunk.index] = pending
                self._slots.append(_Slot("call", call=pending))
            if chunk.id:
                pending.id = chunk.id
            if chunk.name:
                pending.name = chunk.name
            if chunk.arguments:
                pending.fragments.append(chunk.arguments)
            if chunk.extra:
                pending.extra.update(chunk.extra)

    @property
    def thinking_text(self) -> str:
        return "".join("".join(s.texts) for s in self._slots if s.kind == "thinking")

    def parts(self) -> list[Part]:
        """The assembled parts. A call whose arguments do not parse keeps them in
        `raw_arguments` with empty `arguments`; the runtime reports the error."""
        parts: list[Part] = []
        for slot in self._slots:
            if slot.kind == "text":
                parts.append(TextPart("".join(slot.texts)))
            elif slot.kind == "thinking":
                parts.append(
                    ThinkingPart(
                        "".join(slot.texts),
                        signature=slot.signature,
                        provider=self._provider,
                        redacted_data=slot.redacted,
                    )
                )
            else:
                assert slot.call is not None
                raw = "".join(slot.call.fragments)
                try:
                    args, raw_kept = parse_arguments(raw), None
                except ArgumentsError:
                    args, raw_kept = {}, raw
                parts.append(
                    ToolCallPart(
                        id=slot.call.id or f"call_{uuid.uuid4().hex[:16]}",
                        name=slot.call.name or "",
                        arguments=args,
                        raw_arguments=raw_kept,
                        extra=dict(slot.call.extra),
                    )
                )
        return parts
