"""Sessions on disk: create, list, find, load, resume, delete and prune.

Layout (docs/SESSIONS.md has the formats):

    <data dir>/sessions/<project-key>/<session-id>/
        session.json        summary used by `list` (rewritten atomically at each turn end)
        chat.jsonl          the conversation (see chatlog.py)
        scratchpad.jsonl    the run trace (see scratchpad.py)
        tool-results/       results the runtime offloaded (paths the model was given)
        archive/            messages replaced by compaction

`<project-key>` is the project folder's name plus a hash of its absolute path.
Session ids are `YYYYMMDD-HHMMSS-xxxx` (UTC time, 4 random hex digits), so they sort by
time. `list` reads only the small `session.json` files; one whose `chat_bytes` no
longer matches its chat log (a crash mid-turn, or a turn still running) is rebuilt
from the logs. Folders are created 0700 and files 0600.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wyckoff_cli.core.errors import WyckoffError
from wyckoff_cli.core.messages import Message
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.chatlog import (
    JsonlFile,
    SessionFormatError,
    chat_header,
    read_chat,
    read_jsonl,
    scratchpad_header,
)
from wyckoff_cli.storage.redact import Redactor
from wyckoff_cli.storage.session_info import (
    CHAT_FILE,
    RESULTS_DIR,
    SCRATCHPAD_FILE,
    SUMMARY_FILE,
    CallCost,
    SessionInfo,
    parse_time,
)
from wyckoff_cli.storage.session_lock import SessionLock, SessionLocked, busy_message, holder_of

if TYPE_CHECKING:
    from wyckoff_cli.storage.recorder import SessionRecorder


_ID = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{4}$")
_PREFIX = re.compile(r"^[0-9a-f-]{1,40}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class SessionNotFound(WyckoffError):
    """No session, or more than one, matches an id or prefix."""

    exit_code = 2


def project_key(project_root: Path) -> str:
    """`<folder name>-<12 hex digits of sha256(absolute path)>`: readable and unique."""
    resolved = str(project_root.resolve())
    name = _UNSAFE.sub("_", project_root.resolve().name).strip("._")[:40] or "root"
    return f"{name}-{hashlib.sha256(resolved.encode('utf-8', 'surrogateescape')).hexdigest()[:12]}"


def new_session_id(now: datetime) -> str:
    return f"{now.astimezone(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def _utcnow() -> datetime:
    return datetime.now(UTC)


# --------------------------------------------------------------------------- the summary


def summarize(directory: Path) -> SessionInfo:
    """Rebuild a summary from the logs (when `session.json` is missing or stale)."""
    chat = read_chat(directory / CHAT_FILE)
    header = chat.header
    root = str(header.get("project_root", ""))
    info = SessionInfo(
        id=str(header.get("session_id", directory.name)),
        project_root=root,
        project_key=directory.parent.name,
        created=str(header.get("created", "")),
        updated=str(header.get("created", "")),
        model=str(header.get("model", "")),
        chat_bytes=chat.size,
        directory=directory,
    )
    for record in chat.records[1:]:
        kind = record.get("kind")
        if kind == "message" and isinstance(record.get("message"), dict):
            info.add_message(record["message"])
        elif kind == "compaction":
            info.compactions += 1
        elif kind == "turn_end":
            info.last_reason = record.get("reason")
        elif kind == "title" and isinstance(record.get("title"), str) and record["title"].strip():
            info.title = record["title"]  # a model-made title replaces the first message's
        info.updated = str(record.get("ts", info.updated))
    with contextlib.suppress(OSError):
        for record in read_jsonl(directory / SCRATCHPAD_FILE).records:
            usage, agent = record, None
            if record.get("type") == "subagent" and isinstance(record.get("event"), dict):
                usage, agent = record["event"], str(record.get("agent", ""))
            if usage.get("type") == "usage":
                cost = record.get("cost_usd")
                cost = float(cost) if isinstance(cost, int | float) else None
                info.add_usage(str(usage.get("model", "")), Usage.from_dict(usage), cost, agent)
    return info


def read_info(directory: Path) -> SessionInfo | None:
    """The summary of the session in `directory`, rebuilt from the logs when needed;
    None when the folder holds no readable session."""
    try:
        with open(directory / SUMMARY_FILE, encoding="utf-8") as handle:
            info = SessionInfo.from_dict(json.load(handle), directory)
        stale_title = info.title.startswith("<system-reminder>")  # saved before titles left notes out
        if os.stat(directory / CHAT_FILE).st_size == info.chat_bytes and not stale_title:
            return info
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        return summarize(directory)
    except (OSError, SessionFormatError):
        return None


# --------------------------------------------------------------------------- loading


@dataclass
class LoadedSession:
    """A session read back. `history` is exactly what the chat log holds (after a
    crash, up to the last complete message); `torn` says a cut last line was skipped."""

    info: SessionInfo
    header: dict[str, Any]
    history: list[Message]
    torn: bool = False
    skipped: int = 0  # unreadable lines other than a torn tail
    interrupted: bool = False  # the last turn has no `turn_end` (crash or kill mid-turn)

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def directory(self) -> Path:
        return self.info.directory

    @property
    def results_dir(self) -> Path:
        return self.directory / RESULTS_DIR


def answer_dangling_calls(history: Sequence[Message]) -> list[Message]:
    """Tool results for the calls of the last assistant message that a crash left
    unanswered, so the history is valid for every provider again."""
    index = next((i for i in range(len(history) - 1, -1, -1) if history[i].role == "assistant"), None)
    if index is None or not history[index].tool_calls:
        return []
    after = history[index + 1 :]
    if any(m.role != "tool" for m in after):
        return []
    answered = {m.tool_call_id for m in after}
    note = "Not run: Wyckoff stopped before this call finished (the session was resumed)."
    return [
        Message.tool_result(call.id, call.name, note, is_error=True, interrupted=True)
        for call in history[index].tool_calls
        if call.id not in answered
    ]


def finished_turns(history: list[Message]) -> list[Message]:
    """`history` without its last turn (from the last message a person typed on)."""
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if message.role == "user" and not message.meta.get("synthetic"):
            return history[:index]
    return list(history)


# --------------------------------------------------------------------------- the store


class SessionStore:
    """All sessions under `root` (default: `<data dir>/sessions`)."""

    def __init__(
        self,
        root: Path | None = None,
        *,
        redactor: Redactor | None = None,
        clock: Callable[[], datetime] = _utcnow,
        call_cost: CallCost | None = None,
    ) -> None:
        self.root = root if root is not None else paths.data_dir() / "sessions"
        self.redactor = redactor if redactor is not None else Redactor.from_environment()
        self.clock = clock
        self.call_cost = call_cost  # prices each model call as it is recorded

    def project_dir(self, project_root: Path) -> Path:
        return self.root / project_key(project_root)

    # ---------------------------------------------------------------- writing

    def create(self, project_root: Path, *, model: str) -> SessionRecorder:
        """A new, empty session for `project_root`, ready to record events. Raises
        `StorageError` (one line: which folder, why) when it cannot be written."""
        try:
            return self._create(project_root, model=model)
        except paths.StorageError:
            raise
        except OSError as exc:
            raise paths.StorageError(
                f"cannot create a session under {self.root}: {exc.strerror or exc}{paths.home_hint()}"
            ) from None

    def _create(self, project_root: Path, *, model: str) -> SessionRecorder:
        from wyckoff_cli.storage.recorder import SessionRecorder

        project_root = project_root.resolve()
        paths.ensure_private_dir(self.root)
        parent = paths.ensure_private_dir(self.project_dir(project_root))
        now = self.clock()
        while True:
            session_id = new_session_id(now)
            directory = parent / session_id
            try:
                directory.mkdir(mode=0o700)
                break
            except FileExistsError:
                continue
        lock = SessionLock.acquire(directory, session_id)  # nobody else can know it yet
        (directory / RESULTS_DIR).mkdir(mode=0o700)
        created = now.astimezone(UTC).isoformat(timespec="milliseconds")
        chat = JsonlFile.create(directory / CHAT_FILE, chat_header(session_id, project_root, created, model))
        pad = JsonlFile.create(directory / SCRATCHPAD_FILE, scratchpad_header(session_id, created))
        info = SessionInfo(
            id=session_id,
            project_root=str(project_root),
            project_key=parent.name,
            created=created,
            updated=created,
            model=model,
            directory=directory,
        )
        info.save()
        recorder = SessionRecorder(info, chat, pad, self.redactor, [], call_cost=self.call_cost)
        recorder.lock = lock
        return recorder

    def reopen(self, loaded: LoadedSession) -> SessionRecorder:
        """Continue a loaded session: append to its logs. A torn last line is cut off
        the files, and tool calls a crash left unanswered get an error result (written
        to the log through `recorder.conversation`, so the runtime sees them too). Raises
        `StorageError` when the session's files cannot be written, `SessionLocked` when
        another process writes the session."""
        try:
            return self._reopen(loaded)
        except paths.StorageError:
            raise
        except OSError as exc:
            raise paths.StorageError(
                f"cannot continue session {loaded.id} in {loaded.directory}: {exc.strerror or exc}"
            ) from None

    def _reopen(self, loaded: LoadedSession) -> SessionRecorder:
        directory = loaded.directory
        lock = SessionLock.acquire(directory, loaded.id)  # SessionLocked when another process writes it
        try:
            recorder = self._append_to(loaded)
        except BaseException:
            lock.release()
            raise
        recorder.lock = lock
        return recorder

    def _append_to(self, loaded: LoadedSession) -> SessionRecorder:
        from wyckoff_cli.storage.recorder import SessionRecorder

        directory = loaded.directory
        chat = JsonlFile.reopen(directory / CHAT_FILE)
        pad_path = directory / SCRATCHPAD_FILE
        if pad_path.exists():
            pad = JsonlFile.reopen(pad_path)
        else:
            pad = JsonlFile.create(pad_path, scratchpad_header(loaded.id, loaded.info.created))
        (directory / RESULTS_DIR).mkdir(mode=0o700, exist_ok=True)
        recorder = SessionRecorder(
            loaded.info, chat, pad, self.redactor, list(loaded.history), call_cost=self.call_cost
        )
        repairs = answer_dangling_calls(recorder.conversation)
        for message in repairs:
            recorder.conversation.append(message)
        recorder.scratchpad.write(
            "resumed",
            {
                "history_messages": len(loaded.history),
                "torn_tail": loaded.torn,
                "interrupted": loaded.interrupted,
                "answered_dangling_calls": [m.tool_call_id for m in repairs],
            },
        )
        recorder.flush()
        return recorder

    def fork(self, loaded: LoadedSession, project_root: Path, *, model: str) -> SessionRecorder:
        """A new session whose chat log starts with `loaded`'s history, for continuing a
        session another process is writing. A turn still in progress there (no
        `turn_end` yet) is left out: the fork starts from the last finished turn."""
        recorder = self.create(project_root, model=model)
        try:
            history = finished_turns(loaded.history) if loaded.interrupted else list(loaded.history)
            for message in [*history, *answer_dangling_calls(history)]:
                recorder.conversation.append(message)
            recorder.scratchpad.write(
                "forked",
                {
                    "from_session": loaded.id,
                    "history_messages": len(history),
                    "left_out_in_progress": len(loaded.history) - len(history),
                },
            )
            recorder.flush()
        except OSError as exc:
            recorder.close()
            raise paths.StorageError(f"cannot fork session {loaded.id}: {exc.strerror or exc}") from None
        return recorder

    def in_use(self, loaded: LoadedSession, *, fork_hint: bool = False) -> str | None:
        """Why `loaded` cannot be continued right now (another process writes it), or
        None; this process's own lock does not count (it is closed before a resume)."""
        holder = _other_holder(loaded.directory)
        return None if holder is None else busy_message(loaded.id, holder, fork_hint=fork_hint)

    # ---------------------------------------------------------------- reading

    def _session_dirs(self, project_root: Path | None) -> Iterator[Path]:
        projects = [self.project_dir(project_root)] if project_root is not None else self._projects()
        for project in projects:
            try:
                entries = os.scandir(project)
            except OSError:
                continue
            with entries:
                for entry in entries:
                    if _ID.match(entry.name) and entry.is_dir(follow_symlinks=False):
                        yield Path(entry.path)

    def _projects(self) -> list[Path]:
        try:
            with os.scandir(self.root) as entries:
                return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            return []

    def list(self, project_root: Path | None = None) -> list[SessionInfo]:
        """Sessions of one project (or of all when None), newest first."""
        found = [info for d in self._session_dirs(project_root) if (info := read_info(d)) is not None]
        found.sort(key=lambda info: info.id, reverse=True)
        return found

    def latest(self, project_root: Path) -> SessionInfo | None:
        """The project's most recently used session."""
        sessions = self.list(project_root)
        return max(sessions, key=lambda info: (info.updated, info.id), default=None)

    def find(self, id_or_prefix: str) -> SessionInfo:
        """The session whose id is `id_or_prefix` or uniquely starts with it, in any project."""
        text = id_or_prefix.strip().lower()
        if not _PREFIX.match(text):
            raise SessionNotFound(f"no session matches {id_or_prefix!r} (ids look like 20261130-123456-abcd)")
        matches = [d for d in self._session_dirs(None) if d.name.startswith(text)]
        exact = [d for d in matches if d.name == text]
        if exact:
            matches = exact
        if not matches:
            raise SessionNotFound(
                f"no session matches {id_or_prefix!r} (see `wyckoff sessions list --all-projects`)"
            )
        if len(matches) > 1:
            names = ", ".join(sorted(d.name for d in matches)[:5])
            raise SessionNotFound(
                f"{id_or_prefix!r} matches {len(matches)} sessions ({names}…); give more of the id"
            )
        info = read_info(matches[0])
        if info is None:
            raise SessionNotFound(
                f"session {matches[0].name} cannot be read (its chat log is missing or damaged)"
            )
        return info

    def load(self, id_or_prefix: str) -> LoadedSession:
        """Read a session back, rebuilding the history exactly as the runtime had it."""
        info = self.find(id_or_prefix)
        chat = read_chat(info.directory / CHAT_FILE)
        return LoadedSession(info, chat.header, chat.history, chat.torn, chat.skipped, chat.interrupted)

    # ---------------------------------------------------------------- removing

    def delete(self, id_or_prefix: str) -> SessionInfo:
        """Remove a session; one another process is writing is refused (`SessionLocked`)."""
        info = self.find(id_or_prefix)
        holder = _other_holder(info.directory)
        if holder is not None:
            message = busy_message(info.id, holder, fork_hint=False).replace("; wait", "; not deleted; wait")
            raise SessionLocked(message, holder)
        self._remove(info.directory)
        return info

    def prune(
        self, older_than: timedelta, *, project_root: Path | None = None, dry_run: bool = False
    ) -> builtins.list[SessionInfo]:
        """Delete sessions last used more than `older_than` ago; returns them. Sessions
        another process is writing are left alone."""
        cutoff = self.clock() - older_than
        old = [
            info
            for info in self.list(project_root)
            if (parse_time(info.updated) or parse_time(info.created) or cutoff) < cutoff
            and _other_holder(info.directory) is None
        ]
        if not dry_run:
            for info in old:
                self._remove(info.directory)
        return old

    def _remove(self, directory: Path) -> None:
        root = self.root.resolve()
        target = directory.resolve()
        if target.parent.parent != root or not _ID.match(target.name):
            raise WyckoffError(f"refusing to delete {target}: not a session folder under {root}")
        shutil.rmtree(target)
        with contextlib.suppress(OSError):
            target.parent.rmdir()  # the project folder, when it was the last session


def _other_holder(directory: Path) -> dict[str, Any] | None:
    """Who (another process) holds the session's writer lock, or None."""
    holder = holder_of(directory)
    return None if holder is None or holder.get("pid") == os.getpid() else holder
