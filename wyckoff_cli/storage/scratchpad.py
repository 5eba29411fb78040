"""`scratchpad.jsonl`: the run trace of a session, for people and tools debugging a run.

Every runtime event is recorded except the per-token deltas, which are folded into one
record per block (`text_block`, `thinking_block`, `tool_output_block`). Each record has
`ts` (wall clock, UTC), `t_ms` (milliseconds since the turn's first event) and `turn`,
plus timings the events lack: `call_ms` on `usage` (since the round's `model_start`),
`wait_ms` on `approval_result` (since its request), `turn_ms` on `done`. `message`
events are recorded by reference (`chat_line`, role, part types, size); the content is
in chat.jsonl. Everything written is redacted. Full description: docs/SESSIONS.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.storage.chatlog import JsonlFile, now_iso
from wyckoff_cli.storage.redact import Redactor

_BLOCK_TYPES: dict[type[ev.RuntimeEvent], str] = {
    ev.TextDelta: "text_block",
    ev.ThinkingDelta: "thinking_block",
}


_SKIPPED_CHILD_EVENTS = (ev.TextDelta, ev.ThinkingDelta, ev.ToolOutput, ev.MessageCommitted)


@dataclass
class _Block:
    type: str
    started: float
    since_model_ms: int | None
    last: float = 0.0
    chunks: int = 0
    parts: list[str] = field(default_factory=list)

    def add(self, text: str, now: float) -> None:
        self.parts.append(text)
        self.chunks += 1
        self.last = now


class Scratchpad:
    """Folds and writes events. `clock` is a monotonic clock in seconds (injectable)."""

    def __init__(
        self,
        file: JsonlFile,
        redactor: Redactor,
        *,
        clock: Callable[[], float] = time.monotonic,
        turn: int = 0,
    ) -> None:
        self.file = file
        self.redactor = redactor
        self.clock = clock
        self.turn = turn
        self._turn_started: float | None = None
        self._model_started: float | None = None
        self._block: _Block | None = None
        self._outputs: dict[str, _Block] = {}
        self._approvals: dict[str, float] = {}

    def record(
        self, event: ev.RuntimeEvent, *, chat_line: int | None = None, extra: dict[str, Any] | None = None
    ) -> None:
        """Record `event`; `extra` fields are added to its record (e.g. `cost_usd`)."""
        now = self.clock()
        if self._turn_started is None:
            self._turn_started = now
            self.turn += 1
            self.write("turn_start", {})
        if isinstance(event, ev.SubagentEvent) and type(event.inner) in _SKIPPED_CHILD_EVENTS:
            return  # a child's deltas: its transcript is saved beside the session (agents/)
        block_type = _BLOCK_TYPES.get(type(event))
        if block_type is not None:
            if self._block is None or self._block.type != block_type:
                self._close_block()
                self._block = _Block(block_type, now, self._ms(self._model_started, now))
            self._block.add(getattr(event, "text", ""), now)
            return
        if isinstance(event, ev.ToolOutput):
            output = self._outputs.get(event.id)
            if output is None:
                output = self._outputs[event.id] = _Block("tool_output_block", now, None)
            output.add(event.text, now)
            return
        self._close_block()
        data = event.to_dict()
        del data["type"]
        match event:
            case ev.ModelStart():
                self._model_started = now
            case ev.UsageReported():
                data["call_ms"] = self._ms(self._model_started, now)
            case ev.ApprovalRequested():
                self._approvals[event.id] = now
            case ev.ApprovalDecided():
                data["wait_ms"] = self._ms(self._approvals.pop(event.id, None), now)
            case ev.ToolSucceeded() | ev.ToolFailed():
                self._close_output(event.id)
            case ev.MessageCommitted():
                data = _message_summary(event.message, chat_line)
            case ev.TurnDone():
                for call_id in list(self._outputs):
                    self._close_output(call_id)
                data["turn_ms"] = self._ms(self._turn_started, now)
        if extra:
            data.update(extra)
        self.write(event.type, data, now)
        if isinstance(event, ev.TurnDone):
            self._turn_started = None
            self._model_started = None
            self._approvals.clear()

    def write(self, type_: str, data: dict[str, Any], now: float | None = None) -> None:
        """Append one record (redacted) of `type_` with the common fields."""
        now = self.clock() if now is None else now
        record: dict[str, Any] = {
            "kind": "event",
            "type": type_,
            "ts": now_iso(),
            "turn": self.turn,
            "t_ms": self._ms(self._turn_started, now) or 0,
        }
        record.update(self.redactor.value(data))
        self.file.append(record)

    def flush_blocks(self) -> None:
        """Write pending folded blocks (before closing, or when a turn ends abruptly)."""
        self._close_block()
        for call_id in list(self._outputs):
            self._close_output(call_id)

    def _close_block(self) -> None:
        block, self._block = self._block, None
        if block is not None:
            self._write_block(block, {})

    def _close_output(self, call_id: str) -> None:
        block = self._outputs.pop(call_id, None)
        if block is not None:
            self._write_block(block, {"id": call_id})

    def _write_block(self, block: _Block, extra: dict[str, Any]) -> None:
        data: dict[str, Any] = {
            **extra,
            "text": "".join(block.parts),
            "chunks": block.chunks,
            "duration_ms": int((block.last - block.started) * 1000),
        }
        if block.since_model_ms is not None:
            data["after_model_start_ms"] = block.since_model_ms
        self.write(block.type, data, block.started)

    @staticmethod
    def _ms(start: float | None, now: float) -> int | None:
        return None if start is None else int((now - start) * 1000)


def _message_summary(message: dict[str, Any], chat_line: int | None) -> dict[str, Any]:
    parts = message.get("parts", [])
    summary: dict[str, Any] = {
        "role": message.get("role"),
        "chat_line": chat_line,
        "parts": [p.get("type") for p in parts],
        "chars": sum(len(p.get("text", "")) for p in parts),
    }
    for key in ("tool_call_id", "tool_name", "is_error", "meta"):
        if key in message:
            summary[key] = message[key]
    return summary
