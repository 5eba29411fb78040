"""One writer per session: an advisory lock on the session folder.

Two processes appending to one chat log interleave their turns and corrupt the
history the next request is built from. So whoever writes a session holds an
exclusive `flock` on `<session>/lock` for as long as it records (taken by
`SessionStore.create` and `.reopen`, released by `SessionRecorder.close`, and by the
kernel when the process dies). The file holds who holds it, as JSON:

    {"pid": 4242, "command": "wyckoff run --continue fix it", "since": "2026-12-01T10:12:03+00:00"}

A second writer gets `SessionLocked` (exit 2) naming that process, or, with
`wyckoff run --fork`, continues in a new session that starts from the same history.
A lock whose holder died (the kernel released the `flock`, the file still names the
pid) is taken over, with a notice in `SessionLock.taken_over`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import WyckoffError

LOCK_FILE = "lock"


class SessionLocked(WyckoffError):
    """Another live process is writing this session."""

    exit_code = 2

    def __init__(self, message: str, holder: dict[str, Any]) -> None:
        super().__init__(message)
        self.holder = holder


def current_command() -> str:
    """This process's command line, shortened, for the lock file."""
    words = [Path(sys.argv[0]).name if sys.argv else "wyckoff", *sys.argv[1:]]
    if words and words[0] in {"__main__.py", "-m", "-c"}:
        words[0] = "wyckoff"
    text = " ".join(words)
    return text if len(text) <= 200 else text[:199] + "…"


@dataclass
class SessionLock:
    """A held lock; `release()` (idempotent) gives it up."""

    path: Path
    fd: int | None
    taken_over: str | None = None  # a notice when a dead holder's lock was taken over

    @classmethod
    def acquire(cls, directory: Path, session_id: str, command: str | None = None) -> SessionLock:
        """Take the lock of the session in `directory` or raise `SessionLocked`."""
        import fcntl

        path = directory / LOCK_FILE
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise SessionLocked(busy_message(session_id, holder), holder) from None
        previous = _read(fd)
        notice = None
        pid = previous.get("pid")
        if isinstance(pid, int) and pid != os.getpid():
            state = "is no longer running" if not pid_alive(pid) else "no longer holds it"
            notice = (
                f"session {session_id}: took over the lock left by pid {pid} "
                f"({previous.get('command', '?')}, since {_shown_time(previous.get('since'))}), which {state}"
            )
        record = {
            "pid": os.getpid(),
            "command": command or current_command(),
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", "replace"), 0)
        return cls(path, fd, notice)

    def release(self) -> None:
        if self.fd is None:
            return
        import fcntl

        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)  # a clean exit leaves nothing to take over
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None


def holder_of(directory: Path) -> dict[str, Any] | None:
    """Who holds the session's lock right now (without taking it), or None when free."""
    import fcntl

    try:
        fd = os.open(directory / LOCK_FILE, os.O_RDWR)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return _read(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def busy_message(session_id: str, holder: dict[str, Any], *, fork_hint: bool = True) -> str:
    pid = holder.get("pid", "?")
    command = holder.get("command") or "an unknown command"
    since = _shown_time(holder.get("since"))
    hint = ", or add --fork to continue in a new session with the same history" if fork_hint else ""
    return (
        f"session {session_id} is in use by another Wyckoff process (pid {pid}: {command}, "
        f"since {since}); wait for it to finish{hint}"
    )


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def _read(fd: int) -> dict[str, Any]:
    try:
        data = os.pread(fd, 4096, 0)
        value = json.loads(data.decode("utf-8", "replace")) if data.strip() else {}
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _shown_time(text: object) -> str:
    try:
        moment = datetime.fromisoformat(str(text))
    except ValueError:
        return "an unknown time"
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
