"""`chat.jsonl`: the conversation as the model saw it, append-only, one JSON object a line.

The first line is a header; every other line has a `kind`:

    {"kind": "header", "format": "wyckoff.chat", "version": 1, "session_id": "...",
     "project_root": "/abs/path", "created": "2026-11-30T12:34:56.789+00:00", "model": "..."}
    {"kind": "message", "ts": "...", "message": {Message.to_dict()}}
    {"kind": "compaction", "ts": "...", "archive": "archive/001-....jsonl", "replaced": 40,
     "history": [{Message.to_dict()}, ...]}       # the whole history after compaction
    {"kind": "rewind", "ts": "...", "to": "MESSAGE_ID", "removed": 7, "kept": 12}   # that message and all after it
    {"kind": "turn_end", "ts": "...", "reason": "completed", "usage": {...}}
    {"kind": "title", "ts": "...", "title": "Fix the login redirect"}   # a model-made title

The history is rebuilt by appending each `message`, replacing everything with a
`compaction` record's `history`, and cutting it before the message a `rewind` names
(or, when no message has that id — a log written before messages had ids gets fresh
ones on every read — to its first `kept` messages). A line is written (one `write` call, no buffering in
the process) as soon as its message is final, and the file is fsynced at each turn end,
so `kill -9` loses at most the message being streamed. The reader skips a torn last
line (and reports it), skips and counts any other unreadable line, and ignores kinds
it does not know. Full description: docs/SESSIONS.md.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import WyckoffError
from wyckoff_cli.core.messages import Message

CHAT_FORMAT = "wyckoff.chat"
SCRATCHPAD_FORMAT = "wyckoff.scratchpad"
ARCHIVE_FORMAT = "wyckoff.archive"
FORMAT_VERSION = 1


class SessionFormatError(WyckoffError):
    """A session file is not one this version can read."""

    exit_code = 2


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def dumps(record: Any) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)


class JsonlFile:
    """An append-only JSONL file opened 0600 with O_APPEND. Every `append` is a single
    unbuffered write of a whole line, so a killed process leaves whole lines behind."""

    def __init__(self, path: Path, *, lines: int = 0) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.lines = lines  # lines in the file: the number of the last one written
        self._unsynced = False

    @classmethod
    def create(cls, path: Path, header: dict[str, Any]) -> JsonlFile:
        """A new file whose first line is `header` (fails if the file exists)."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        handle = cls(path)
        handle.append(header)
        return handle

    @classmethod
    def reopen(cls, path: Path) -> JsonlFile:
        """Open an existing file for appending after repairing a torn last line."""
        repair_tail(path)
        with open(path, "rb") as handle:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 16), b""))
        return cls(path, lines=lines)

    def append(self, record: dict[str, Any]) -> None:
        if self._fd is None:
            raise ValueError(f"{self.path} is closed")
        data = (dumps(record) + "\n").encode("utf-8", "replace")
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self.lines += 1
        self._unsynced = True

    def sync(self) -> None:
        """fsync, when anything was appended since the last time."""
        if self._fd is not None and self._unsynced:
            os.fsync(self._fd)
            self._unsynced = False

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                self.sync()
            os.close(self._fd)
            self._fd = None


def repair_tail(path: Path) -> bool:
    """Make `path` end with a newline: complete a whole last record, cut a torn one.
    Returns True when a torn line was cut."""
    with open(path, "rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size == 0:
            return False
        handle.seek(max(0, size - 1))
        if handle.read(1) == b"\n":
            return False
        start = max(0, size - (1 << 16))
        handle.seek(start)
        tail = handle.read()
        cut = tail.rfind(b"\n")
        if cut < 0 and start > 0:  # a huge torn line: find its start the slow way
            handle.seek(0)
            whole = handle.read()
            cut, start, tail = whole.rfind(b"\n"), 0, whole
        if _parses(tail[cut + 1 :]):
            handle.write(b"\n")
            return False
        handle.truncate(start + cut + 1)
        return True


def _parses(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False


@dataclass
class JsonlRead:
    records: list[dict[str, Any]]
    torn: bool  # the last line was incomplete and was skipped
    skipped: int  # other unreadable lines
    size: int  # bytes read


def read_jsonl(path: Path) -> JsonlRead:
    """Every record of a JSONL file. Lines are split on b"\\n" only (never on the
    Unicode line separators JSON may carry raw)."""
    data = path.read_bytes()
    lines = data.split(b"\n")
    last = lines.pop()  # b"" when the file ends with a newline
    records: list[dict[str, Any]] = []
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        record = _load(line)
        if record is None:
            skipped += 1
        else:
            records.append(record)
    torn = False
    if last.strip():
        record = _load(last)
        if record is None:
            torn = True
        else:
            records.append(record)
    return JsonlRead(records, torn, skipped, len(data))


def _load(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def check_header(path: Path, records: list[dict[str, Any]], expected: str) -> dict[str, Any]:
    header = records[0] if records else None
    if header is None or header.get("kind") != "header" or header.get("format") != expected:
        raise SessionFormatError(f"{path}: not a {expected} file (no header line)")
    version = header.get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise SessionFormatError(
            f"{path}: format version {version!r} is newer than this Wyckoff reads ({FORMAT_VERSION}); upgrade"
        )
    return header


# --------------------------------------------------------------------------- the chat log


def chat_header(session_id: str, project_root: Path, created: str, model: str) -> dict[str, Any]:
    return {
        "kind": "header",
        "format": CHAT_FORMAT,
        "version": FORMAT_VERSION,
        "session_id": session_id,
        "project_root": str(project_root),
        "created": created,
        "model": model,
    }


def scratchpad_header(session_id: str, created: str) -> dict[str, Any]:
    return {
        "kind": "header",
        "format": SCRATCHPAD_FORMAT,
        "version": FORMAT_VERSION,
        "session_id": session_id,
        "created": created,
    }


def message_record(message: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "message", "ts": now_iso(), "message": message}


def compaction_record(archive: str, replaced: int, history: Iterable[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": "compaction",
        "ts": now_iso(),
        "archive": archive,
        "replaced": replaced,
        "history": list(history),
    }


def rewind_record(message_id: str, removed: int, kept: int | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": "rewind", "ts": now_iso(), "to": message_id, "removed": removed}
    if kept is not None:
        record["kept"] = kept
    return record


def title_record(title: str) -> dict[str, Any]:
    """The session's title, made by a model after its first turn (`[routing]`)."""
    return {"kind": "title", "ts": now_iso(), "title": title}


def turn_end_record(reason: str, usage: dict[str, int]) -> dict[str, Any]:
    return {"kind": "turn_end", "ts": now_iso(), "reason": reason, "usage": usage}


@dataclass
class ChatLog:
    """A chat log as read back."""

    header: dict[str, Any]
    history: list[Message]
    torn: bool = False  # a torn last line (a crash mid-write) was skipped
    skipped: int = 0  # other unreadable lines
    size: int = 0
    turns_ended: int = 0
    compactions: int = 0
    interrupted: bool = False  # messages follow the last `turn_end`: a turn did not finish
    records: list[dict[str, Any]] = field(default_factory=list, repr=False)


def read_chat(path: Path) -> ChatLog:
    """Rebuild the history from `chat.jsonl`."""
    read = read_jsonl(path)
    header = check_header(path, read.records, CHAT_FORMAT)
    log = ChatLog(header, [], read.torn, read.skipped, read.size, records=read.records)
    for record in read.records[1:]:
        kind = record.get("kind")
        try:
            if kind == "message":
                log.history.append(Message.from_dict(record["message"]))
                log.interrupted = True
            elif kind == "compaction":
                log.history = [Message.from_dict(m) for m in record["history"]]
                log.compactions += 1
            elif kind == "rewind":
                ids = [m.id for m in log.history]
                kept = record.get("kept")
                if str(record["to"]) in ids:
                    log.history = log.history[: ids.index(str(record["to"]))]
                elif isinstance(kept, int) and 0 <= kept < len(log.history):
                    log.history = log.history[:kept]
                else:
                    log.skipped += 1
            elif kind == "turn_end":
                log.turns_ended += 1
                log.interrupted = False
        except (KeyError, TypeError, ValueError):
            log.skipped += 1
    return log


def write_archive(path: Path, session_id: str, messages: Iterable[dict[str, Any]]) -> int:
    """Write replaced messages to a new archive file (header + one message a line)."""
    items = list(messages)
    handle = JsonlFile.create(
        path,
        {
            "kind": "header",
            "format": ARCHIVE_FORMAT,
            "version": FORMAT_VERSION,
            "session_id": session_id,
            "created": now_iso(),
            "messages": len(items),
        },
    )
    try:
        for item in items:
            handle.append(message_record(item))
    finally:
        handle.close()
    return len(items)


def transcript(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The whole conversation for people: every record after the header, in order,
    where a `compaction` record's `history` is replaced by `added`, the messages it
    brought in (the summary) that were not logged before. Nothing is shown twice, and
    the messages compaction replaced stay in place."""
    seen: set[str] = set()
    items: list[dict[str, Any]] = []
    for record in records[1:]:
        kind = record.get("kind")
        if kind == "message" and isinstance(record.get("message"), dict):
            seen.add(dumps(record["message"]))
            items.append(record)
        elif kind == "compaction":
            history = record.get("history") or []
            added = [m for m in history if isinstance(m, dict) and dumps(m) not in seen]
            seen.update(dumps(m) for m in added)
            items.append({k: v for k, v in record.items() if k != "history"} | {"added": added})
        elif kind in ("turn_end", "rewind"):
            items.append(record)
    return items
