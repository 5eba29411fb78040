"""SessionRecorder: writes a session to disk as it happens.

It observes the session's `Conversation` (it creates it, and is subscribed to it):
every append is a line in chat.jsonl at once, a compaction (`replace_range`) a
`compaction` line, a rewind (`truncate_to`) a `rewind` line — exactly what happened,
in order. The hosts feed it every event of `run_stream` for the scratchpad, usage and
turn ends:

    recorder = store.create(project_root, model=model)      # or store.reopen(loaded)
    runtime = AgentRuntime(..., results_dir=recorder.results_dir)
    async for event in runtime.run_stream(recorder.conversation, prompt):
        recorder.record(event)
    recorder.close()

`done` appends a `turn_end` line, fsyncs both logs and rewrites session.json. The
compaction code calls `archive_replaced(before, after)` to archive what it replaces
(and learn the archive's path) before it hands the new history over.

Recording never breaks a turn: an OSError (disk full, folder removed) is logged, kept
in `write_error` for the host to show, and later events are still attempted; a call
that cannot be priced counts as uncosted.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.conversation import Conversation, ConversationObserver
from wyckoff_cli.core.messages import Message
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.storage.chatlog import (
    JsonlFile,
    compaction_record,
    message_record,
    now_iso,
    rewind_record,
    title_record,
    turn_end_record,
    write_archive,
)
from wyckoff_cli.storage.redact import Redactor
from wyckoff_cli.storage.scratchpad import Scratchpad
from wyckoff_cli.storage.session_info import ARCHIVE_DIR, RESULTS_DIR, CallCost, SessionInfo
from wyckoff_cli.storage.session_lock import SessionLock

log = logging.getLogger(__name__)


class SessionRecorder(ConversationObserver):
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
        self.chat = chat
        self.scratchpad = Scratchpad(scratchpad, redactor, turn=info.turns)
        self.write_error: OSError | None = None
        self._closed = False
        self._dirty = False  # something was recorded since session.json was written
        self._lines: dict[str, int] = {}  # message id -> its chat.jsonl line (for the scratchpad)
        # the one owner of the messages: pass it to run_stream
        self.conversation = Conversation(history)
        self.conversation.subscribe(self)
        self.lock: SessionLock | None = None  # the session's writer lock (storage/session_lock.py)

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
                chat_line = self._lines.get(str(event.message.get("id")))
            elif isinstance(usage_event := _usage_of(event), ev.UsageReported):
                usage = usage_event.usage  # a sub-agent's calls count in the session's totals too
                cost = self._price(usage_event.model, usage)
                agent = event.agent if isinstance(event, ev.SubagentEvent) else None
                if agent is None and usage_event.source:  # an MCP server's sampling request
                    agent = ev.source_agent(usage_event.source)
                context = self.info.context_tokens
                self.info.add_usage(usage_event.model, usage, cost, agent)
                if usage_event.purpose != "turn":  # a side job's call does not fill the context
                    self.info.context_tokens = context
                extra = {} if cost is None else {"cost_usd": round(cost, 8)}
            elif isinstance(event, ev.TurnDone):
                self.info.last_reason = event.reason
                self.chat.append(turn_end_record(event.reason, dict(event.usage)))
            self.scratchpad.record(event, chat_line=chat_line, extra=extra)
            if isinstance(event, ev.TurnDone):
                self.flush()
        except OSError as exc:
            self._failed(exc)

    def set_title(self, title: str) -> None:
        """Give the session a model-made title (kept in the chat log, shown by
        `sessions list`, the resume picker and ACP session lists)."""
        if self._closed:
            return
        try:
            self.chat.append(title_record(title))
        except OSError as exc:
            self._failed(exc)
            return
        self.info.title = title
        self._dirty = True
        self.flush()

    def _price(self, model: str, usage: Usage) -> float | None:
        if self.call_cost is None:
            return None
        try:
            return self.call_cost(model, usage)
        except Exception:  # a pricing problem must never break a turn
            log.warning("cannot price a call to %s", model, exc_info=True)
            return None

    # ---------------------------------------------------------------- the conversation

    def on_append(self, message: Message) -> None:
        self._dirty = True
        redacted = self.redactor.message(message.to_dict())
        try:
            self.chat.append(message_record(redacted))
        except OSError as exc:
            self._failed(exc)
            return
        self.info.add_message(redacted)
        self._lines[message.id] = self.chat.lines

    def on_replace(
        self,
        start: int,
        stop: int,
        replaced: Sequence[Message],
        messages: Sequence[Message],
        note: dict[str, Any],
    ) -> None:
        self._dirty = True
        archive = note.get("archive_path")
        if archive:
            with contextlib.suppress(ValueError):
                archive = Path(archive).relative_to(self.directory).as_posix()
        history = self.conversation.messages  # observers are told after the change
        redact = self.redactor.message
        record = compaction_record(
            str(archive or ""), len(_not_kept(replaced, messages)), [redact(m.to_dict()) for m in history]
        )
        try:
            self.chat.append(record)
        except OSError as exc:
            self._failed(exc)
            return
        self.info.compactions += 1

    def on_truncate(self, message_id: str, removed: Sequence[Message]) -> None:
        self._dirty = True
        try:
            self.chat.append(rewind_record(message_id, len(removed), len(self.conversation)))
        except OSError as exc:
            self._failed(exc)

    def archive_replaced(self, before: Sequence[Message], after: Sequence[Message]) -> Path:
        """Archive what a compaction is about to replace: the messages of `before` that
        are not (the same objects) in `after`. Returns the archive file's path (the
        `compaction` event's `archive_path`); the chat log's `compaction` line is
        written when the conversation is replaced."""
        self.archive_dir.mkdir(mode=0o700, exist_ok=True)
        number = sum(1 for _ in self.archive_dir.glob("*.jsonl")) + 1
        stamp = now_iso().replace(":", "").replace("-", "")[:15]
        path = self.archive_dir / f"{number:03d}-{stamp}.jsonl"
        redact = self.redactor.message
        write_archive(path, self.id, [redact(m.to_dict()) for m in _not_kept(before, after)])
        return path

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
            self.scratchpad.flush_blocks()
        except OSError as exc:
            self._failed(exc)
        self.flush()
        self.chat.close()
        self.scratchpad.file.close()
        if self.lock is not None:
            self.lock.release()

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


def _usage_of(event: ev.RuntimeEvent) -> ev.RuntimeEvent:
    return event.inner if isinstance(event, ev.SubagentEvent) else event


def _not_kept(before: Sequence[Message], after: Sequence[Message]) -> list[Message]:
    """The messages of `before` that are not (the same objects) in `after`: a message a
    compaction shrank is a new object, so its full original is archived."""
    kept = {id(m) for m in after}
    return [m for m in before if id(m) not in kept]
