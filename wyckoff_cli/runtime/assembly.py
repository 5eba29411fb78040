"""Assemble a stream of chunks into ordered message parts.

Text, thinking and tool calls keep the order in which they began; tool-call fragments
are joined per index (they may interleave across calls), and arguments are parsed
leniently. Used by the runtime for every model round.

This is where a model's output enters the runtime, so bad input stops here:
- `clean_chunk` replaces lone UTF-16 surrogates (which no file, terminal or JSON
  encoder accepts) with U+FFFD in text, thinking and tool-call fragments, before they
  become events or messages; JSON `\\ud800` escapes in arguments are cleaned after
  parsing.
- Two calls of one response with the same id: the later ones get a unique id
  (`<id>_2`, …), the vendor's id is kept in `extra["vendor_call_id"]`. The unique id
  is used everywhere, on the wire too, so every result answers exactly one call.
- Arguments nested too deep or with an integer too long to convert are an
  `ArgumentsError` (a tool error the model sees), never a crash.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from wyckoff_cli.core.messages import Part, ServerToolPart, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.providers.base import (
    Chunk,
    FallbackChunk,
    ServerToolChunk,
    StopChunk,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
)

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
VENDOR_ID_KEY = "vendor_call_id"


def clean_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (a valid pair is joined)."""
    if text.isascii() or not _SURROGATE.search(text):  # isascii: a flag read, for most deltas
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def clean_chunk(chunk: Chunk) -> Chunk:
    """The chunk with lone surrogates replaced in every text it carries (the same
    object when there were none, which is nearly always)."""
    if isinstance(chunk, TextChunk):
        text = clean_text(chunk.text)
        return chunk if text is chunk.text else TextChunk(text, chunk.signature)
    if isinstance(chunk, ThinkingChunk):
        if not _SURROGATE.search(chunk.text) and not (chunk.signature and _SURROGATE.search(chunk.signature)):
            return chunk
        signature = clean_text(chunk.signature) if chunk.signature else chunk.signature
        return ThinkingChunk(clean_text(chunk.text), signature, chunk.redacted_data, chunk.extra)
    if isinstance(chunk, ToolCallChunk):
        fields = (chunk.id or "", chunk.name or "", chunk.arguments)
        if not any(_SURROGATE.search(f) for f in fields):
            return chunk
        return ToolCallChunk(
            chunk.index,
            clean_text(chunk.id) if chunk.id else chunk.id,
            clean_text(chunk.name) if chunk.name else chunk.name,
            clean_text(chunk.arguments),
            chunk.extra,
        )
    if isinstance(chunk, FallbackChunk) and _SURROGATE.search(chunk.error):
        return FallbackChunk(chunk.from_model, chunk.to_model, clean_text(chunk.error))
    return chunk


def _clean_value(value: Any) -> Any:
    """Parsed JSON with lone surrogates (from `\\ud800` escapes) replaced; depth is
    bounded by `MAX_DEPTH` before this runs."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k): _clean_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_value(v) for v in value]
    return value


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
        value = _loads(text)
    except json.JSONDecodeError as first:
        value = _repair(text, first)
    if isinstance(value, str):
        # Some models double-encode: "{\"path\": ...}".
        with contextlib.suppress(json.JSONDecodeError, ArgumentsError):
            value = _loads(value)
    if not isinstance(value, dict):
        raise ArgumentsError(
            f"tool arguments must be a JSON object, got {_json_type(value)}: {_clip(raw)}. "
            'Send one object with a key per argument, e.g. {"path": "a.py"}.'
        )
    problem = shape_problem(value)
    if problem:
        raise ArgumentsError(problem)
    if "\\u" in text or "\\U" in text:  # an escaped lone surrogate is possible
        value = dict(_clean_value(value))
    return value


MAX_DEPTH = 64  # nesting of objects and arrays in one call's arguments
MAX_INT_DIGITS = 4_000  # Python refuses to convert longer integers (sys.get_int_max_str_digits)


def _loads(text: str) -> Any:
    """`json.loads` with the limits of a tool call: too deep or too long an integer is
    an `ArgumentsError` saying so, not a RecursionError or a ValueError."""
    depth = _max_depth(text)
    if depth > MAX_DEPTH:
        raise ArgumentsError(
            f"tool arguments are nested {depth} levels deep; the limit is {MAX_DEPTH}. "
            "Send flatter arguments."
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except (ValueError, RecursionError) as exc:
        raise ArgumentsError(
            f"tool arguments could not be read: {_clip(str(exc), 160)}. "
            f"Numbers may have at most {MAX_INT_DIGITS} digits; send a long number as a string."
        ) from None


def _max_depth(text: str) -> int:
    """The deepest bracket nesting outside strings, counted without recursion."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0  # cannot be deeper than the limit: skip the scan
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        elif ch in "]}":
            depth -= 1
    return deepest


def shape_problem(value: Any) -> str | None:
    """Why parsed arguments cannot be used (too deep, an integer too long to print),
    or None. Iterative, so no input can exhaust the stack."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return f"tool arguments are nested more than {MAX_DEPTH} levels deep. Send flatter arguments."
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, int) and not isinstance(item, bool) and item.bit_length() > 13_000:
            return (
                f"an integer in the tool arguments is longer than {MAX_INT_DIGITS} digits. "
                "Send a long number as a string."
            )
    return None


def _json_type(value: Any) -> str:
    names = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def _repair(text: str, error: json.JSONDecodeError) -> Any:
    candidate = _TRAILING_COMMA.sub(r"\1", text)
    opened = candidate.count("{") - candidate.count("}")
    if opened > 0:
        candidate += "}" * opened
    try:
        return _loads(candidate)
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
    kind: str  # "text" | "thinking" | "call" | "server"
    texts: list[str] = field(default_factory=list)
    signature: str | None = None
    redacted: str | None = None
    closed: bool = False
    call: _PendingCall | None = None
    extra: dict[str, Any] | None = None
    server: ServerToolPart | None = None


class ResponseAssembler:
    """Feed chunks with `add`; read ordered parts with `parts()`."""

    def __init__(self, provider: str | None = None) -> None:
        self._provider = provider
        self._slots: list[_Slot] = []
        self._calls: dict[int, _PendingCall] = {}
        self._texts: list[str] = []  # all visible text so far (joined on demand: `text`)
        self.stop: StopChunk | None = None  # why the model stopped, once the stream ended

    @property
    def text(self) -> str:
        """All visible text so far."""
        if len(self._texts) > 1:
            self._texts = ["".join(self._texts)]
        return self._texts[0] if self._texts else ""

    def add(self, chunk: TextChunk | ThinkingChunk | ToolCallChunk | ServerToolChunk | StopChunk) -> None:
        if isinstance(chunk, TextChunk):
            if not chunk.text and chunk.signature is None:
                return
            self._texts.append(chunk.text)  # not `text +=`: that copies the whole answer per delta
            slot = self._slots[-1] if self._slots else None
            if slot is None or slot.kind != "text" or slot.closed:
                slot = _Slot("text")
                self._slots.append(slot)
            slot.texts.append(chunk.text)
            if chunk.signature is not None:  # a signed text part ends its block
                slot.signature = chunk.signature
                slot.closed = True
        elif isinstance(chunk, ThinkingChunk):
            slot = self._slots[-1] if self._slots else None
            if slot is None or slot.kind != "thinking" or slot.closed:
                if not (chunk.text or chunk.signature or chunk.redacted_data or chunk.extra):
                    return
                slot = _Slot("thinking")
                self._slots.append(slot)
            if chunk.text:
                slot.texts.append(chunk.text)
            if chunk.signature is not None or chunk.redacted_data is not None or chunk.extra:
                slot.signature = chunk.signature if chunk.signature is not None else slot.signature
                slot.redacted = chunk.redacted_data
                slot.extra = chunk.extra
                slot.closed = True
        elif isinstance(chunk, ServerToolChunk):
            if chunk.part is not None:
                self._slots.append(_Slot("server", server=chunk.part))
        elif isinstance(chunk, StopChunk):
            self.stop = chunk
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
        ids: set[str] = set()
        for slot in self._slots:
            if slot.kind == "text":
                if slot.signature is None:
                    parts.append(TextPart("".join(slot.texts)))
                else:
                    parts.append(TextPart("".join(slot.texts), slot.signature, self._provider))
            elif slot.kind == "thinking":
                parts.append(
                    ThinkingPart(
                        "".join(slot.texts),
                        signature=slot.signature,
                        provider=self._provider,
                        redacted_data=slot.redacted,
                        extra=dict(slot.extra or {}),
                    )
                )
            elif slot.server is not None:
                parts.append(slot.server)
            else:
                assert slot.call is not None
                raw = "".join(slot.call.fragments)
                try:
                    args, raw_kept = parse_arguments(raw), None
                except ArgumentsError:
                    args, raw_kept = {}, raw
                call_id = slot.call.id or f"call_{uuid.uuid4().hex[:16]}"
                extra = dict(slot.call.extra)
                if call_id in ids:  # the vendor sent one id twice: make each call's id unique
                    extra[VENDOR_ID_KEY] = call_id
                    call_id = _unique(call_id, ids)
                ids.add(call_id)
                parts.append(
                    ToolCallPart(
                        id=call_id,
                        name=slot.call.name or "",
                        arguments=args,
                        raw_arguments=raw_kept,
                        extra=extra,
                    )
                )
        return parts


def _unique(call_id: str, taken: set[str]) -> str:
    number = 2
    while f"{call_id}_{number}" in taken:
        number += 1
    return f"{call_id}_{number}"
