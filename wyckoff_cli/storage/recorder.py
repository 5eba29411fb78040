"""SessionRecorder: turns the runtime's event stream into a session on disk.

The TUI and the headless runner both feed it every event of `run_stream`:

    recorder = store.create(project_root, model=model)      # or store.reopen(loaded)
    runtime = build_runtime(..., results_dir=recorder.results_dir)
    async for event in runtime.run_stream(recorder.history, prompt):
        recorder.record(event)
    recorder.close()

A `message` event appends a line to chat.jsonl at once; `done` appends a `turn_end`
line, fsyncs both logs and rewrites session.json. Compaction code calls
`record_compaction(before, after)` before it replaces the history.

Recording never breaks a turn: an OSError (disk full, folder removed) is logged, kept
in `write_error` for the host to show, and later events are still attempted; a call
that cannot be priced counts as uncosted.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.storage.chatlog import (
    JsonlFile,
    compaction_record,
    message_record,
    now_iso,
    rewind_record,
    truncate_before,
    turn_end_record,
    write_archive,
)
from wyckoff_cli.storage.redact import Redactor
from wyckoff_cli.storage.scratchpad import Scratchpad
from wyckoff_cli.storage.sessions import ARCHIVE_DIR, RESULTS_DIR, CallCost, SessionInfo

log = logging.getLogger(__name__)


class SessionRecorder:
    """Records one session. Create it with `SessionStore.create` or `.reopen`."""

    def __init__(
        self,
        info: SessionInfo,
        chat: JsonlFile,
        scratchpad: JsonlFile,
        redactor: Redactor,
        history: list[Message],
        *,
        call_cost: CallCost | None = None,
    ) -> None:
        self.info = info
        self.call_cost = call_cost
        self.redactor = redactor
        self.history = history  # pass this list to run_stream; the runtime appends to it
        self.chat = chat
        self.scratchpad = Scratchpad(scratchpad, redactor, turn=info.turns)
        self.write_error: OSError | None = None
        self._closed = False
        self._dirty = False  # something was recorded since session.json was written
        self._logged = len(history)  # messages in the history the chat log rebuilds
        self._pending: deque[tuple[int, int, dict[str, Any]]] = deque()  # compactions not logged yet

    # ---------------------------------------------------------------- where things are

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def directory(self) -> Path:
        return self.info.directory

    @property
    def results_dir(self) -> Path:
        """Give this to the runtime as `results_dir`: offloaded results stay valid on resume."""
        return self.directory / RESULTS_DIR

    @property
    def archive_dir(self) -> Path:
        return self.directory / ARCHIVE_DIR

    # ---------------------------------------------------------------- recording

    def record(self, event: ev.RuntimeEvent) -> None:
        """Record one runtime event (call it for every event, deltas included).
        Events after `close()` are ignored."""
        if self._closed:
            return
        self._dirty = True
        try:
            chat_line = None
            extra: dict[str, Any] = {}
            if isinstance(event, ev.MessageCommitted):
                chat_line = self._append_message_dict(event.message)
            elif isinstance(event, ev.UsageReported):
                usage = event.usage
                cost = self._price(event.model, usage)
                self.info.add_usage(event.model, usage, cost)
                extra = {} if cost is None else {"cost_usd": round(cost, 8)}
            elif isinstance(event, ev.TurnDone):
                self.info.last_reason = event.reason
                self.chat.append(turn_end_record(event.reason, dict(event.usage)))
            self.scratchpad.record(event, chat_line=chat_line, extra=extra)
            if isinstance(event, ev.TurnDone):
                self.flush()
        except OSError as exc:
            self._failed(exc)

    def _price(self, model: str, usage: Usage) -> float | None:
        if self.call_cost is None:
            return None
        try:
            return self.call_cost(model, usage)
        except Exception:  # a pricing problem must never break a turn
            log.warning("cannot price a call to %s", model, exc_info=True)
            return None

    def append_message(self, message: Message) -> None:
        """Write a message the runtime did not announce (e.g. a repair on resume) and
        append it to `history`."""
        self._dirty = True
        self.history.append(message)
        self._append_message_dict(message.to_dict())

    def _append_message_dict(self, message: dict[str, Any]) -> int:
        redacted = self.redactor.message(message)
        self.chat.append(message_record(redacted))
        self.info.add_message(redacted)
        self._logged += 1
        line = self.chat.lines
        self._write_due_compactions()
        return line

    def record_compaction(self, before: Sequence[Message], after: Sequence[Message]) -> Path:
        """Log a compaction: call it with the history as it was (`before`) and as it will
        be (`after`, the whole new list), before replacing the history in place. The
        messages of `before` that are not (the same objects) in `after` are archived
        now; returns the archive file's path (the `compaction` event's `archive_path`).

        The runtime's events reach the recorder through a queue, so messages committed
        before the compaction may not be logged yet: the chat log's `compaction` line is
        written once the log holds `len(before)` messages, keeping the order exact."""
        self._dirty = True
        kept = {id(m) for m in after}
        replaced = [m for m in before if id(m) not in kept]
        self.archive_dir.mkdir(mode=0o700, exist_ok=True)
        number = sum(1 for _ in self.archive_dir.glob("*.jsonl")) + 1
        stamp = now_iso().replace(":", "").replace("-", "")[:15]
        path = self.archive_dir / f"{number:03d}-{stamp}.jsonl"
        redact = self.redactor.message
        write_archive(path, self.id, [redact(m.to_dict()) for m in replaced])
        record = compaction_record(
            path.relative_to(self.directory).as_posix(),
            len(replaced),
            [redact(m.to_dict()) for m in after],
        )
        self._pending.append((len(before), len(after), record))
        self._write_due_compactions()
        return path

    def record_rewind(self, message_id: str) -> int:
        """Truncate the history (in place) to before the message `message_id` and log
        a `rewind` record, so resume rebuilds the same state. Call between turns.
        Returns how many messages were removed (0: no such message, nothing logged)."""
        self._write_due_compactions(force=True)
        removed = truncate_before(self.history, message_id)
        if removed:
            self._dirty = True
            self._logged = len(self.history)
            try:
                self.chat.append(rewind_record(message_id, removed, len(self.history)))
            except OSError as exc:
                self._failed(exc)
            self.flush()
        return removed

    def _write_due_compactions(self, *, force: bool = False) -> None:
        while self._pending and (force or self._logged >= self._pending[0][0]):
            _, length, record = self._pending.popleft()
            self.chat.append(record)
            self._logged = length
            self.info.compactions += 1

    def flush(self) -> None:
        """fsync both logs and rewrite session.json (done automatically at turn end;
        nothing to do when nothing was recorded since)."""
        if not self._dirty:
            return
        self._dirty = False
        try:
            self.chat.sync()
            self.scratchpad.file.sync()
            self.info.updated = now_iso()
            self.info.save()
        except OSError as exc:
            self._failed(exc)

    def close(self) -> None:
        """Write what is pending, save the summary and close the files."""
        if self._closed:
            return
        self._closed = True
        try:
            self._write_due_compactions(force=True)
            self.scratchpad.flush_blocks()
        except OSError as exc:
            self._failed(exc)
        self.flush()
        self.chat.close()
        self.scratchpad.file.close()

    def __enter__(self) -> SessionRecorder:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _failed(self, exc: OSError) -> None:
        if self.write_error is None:
            log.warning("session %s: cannot write to %s: %s", self.id, self.directory, exc)
        self.write_error = exc
