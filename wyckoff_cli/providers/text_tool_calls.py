"""Tool calls that a model prints as text: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.

Some OpenAI-compatible models (Qwen and Hermes-style templates behind vLLM, Ollama or
LM Studio) write their calls into the answer text. `TextToolCallParser` turns each
block into a real tool call and removes it from the visible text. It works on a
stream: a tag split across deltas is held back until it is complete, nested JSON is
fine (the block ends at the closing tag, not at a brace), a closing tag inside a
JSON string does not end the block, several blocks per message are found, and a
block that is not a valid call is shown as the text it was. Plain text without `<`
passes straight through, so the parser costs little on ordinary answers (trailing
whitespace of a delta is held until the next one, in case a block follows).
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from wyckoff_cli.providers.base import TextChunk, ToolCallChunk

OPEN = "<tool_call>"
CLOSE = "</tool_call>"
FIRST_INDEX = 1_000  # text calls get indices apart from the endpoint's native ones
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest end of `text` that could begin `tag`."""
    for size in range(min(len(text), len(tag) - 1), 0, -1):
        if text.endswith(tag[:size]):
            return size
    return 0


def parse_call(body: str) -> tuple[str, dict[str, Any]] | None:
    """`(name, arguments)` from the inside of a block, or None if it is not a call."""
    text = body.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        return None
    arguments: Any = next((data[k] for k in ("arguments", "parameters", "args", "input") if k in data), {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            return None
    if not isinstance(arguments, dict):
        return None
    return data["name"], arguments


def _unfinished(body: str) -> bool:
    """True if `body` stops inside a JSON string (a closing tag quoted in an argument)."""
    try:
        json.loads(body.strip())
    except json.JSONDecodeError as exc:
        return exc.msg.startswith("Unterminated string")
    return False


class TextToolCallParser:
    """Feed text deltas; get text and tool-call chunks back. Call `finish()` at the end."""

    def __init__(self, first_index: int = FIRST_INDEX) -> None:
        self._buffer = ""
        self._inside = False
        self._search_from = 0
        self._next_index = first_index
        self._after_call = False
        self.calls = 0

    def feed(self, text: str) -> list[TextChunk | ToolCallChunk]:
        if not self._buffer and not self._inside and "<" not in text and not text[-1:].isspace():
            return self._text(text)
        self._buffer += text
        out: list[TextChunk | ToolCallChunk] = []
        while True:
            if not self._inside:
                at = self._buffer.find(OPEN)
                if at < 0:
                    # Hold back what may start a tag, and the whitespace before it
                    # (dropped if a call follows).
                    keep = _partial_suffix(self._buffer, OPEN)
                    cut = len(self._buffer[: len(self._buffer) - keep].rstrip())
                    out += self._text(self._buffer[:cut])
                    self._buffer = self._buffer[cut:]
                    return out
                out += self._text(self._buffer[:at].rstrip())
                self._buffer = self._buffer[at + len(OPEN) :]
                self._inside, self._search_from = True, 0
                continue
            at = self._buffer.find(CLOSE, self._search_from)
            if at < 0:
                self._search_from = max(0, len(self._buffer) - len(CLOSE) + 1)
                return out
            body = self._buffer[:at]
            call = parse_call(body)
            if call is None and _unfinished(body):
                self._search_from = at + len(CLOSE)
                continue
            out += self._emit(body, call, closed=True)
            self._buffer = self._buffer[at + len(CLOSE) :]
            self._inside = False

    def finish(self) -> list[TextChunk | ToolCallChunk]:
        """Flush what is held: an unclosed block that parses is still a call."""
        buffer, self._buffer = self._buffer, ""
        if self._inside:
            self._inside = False
            return self._emit(buffer, parse_call(buffer), closed=False)
        return self._text(buffer)

    def _emit(
        self, body: str, call: tuple[str, dict[str, Any]] | None, *, closed: bool
    ) -> list[TextChunk | ToolCallChunk]:
        if call is None:
            self._after_call = False
            return [TextChunk(OPEN + body + (CLOSE if closed else ""))]
        name, arguments = call
        index = self._next_index
        self._next_index += 1
        self.calls += 1
        self._after_call = True
        return [
            ToolCallChunk(
                index, id=f"call_{uuid.uuid4().hex[:24]}", name=name, arguments=json.dumps(arguments)
            )
        ]

    def _text(self, text: str) -> list[TextChunk | ToolCallChunk]:
        if self._after_call:
            text = text.lstrip()
            if not text:
                return []
            self._after_call = False
        return [TextChunk(text)] if text else []
