"""The registry of background sessions: one small JSON file per session.

A background session (`wyckoff run --background`) writes `<data dir>/running/ID.json`
atomically whenever its state changes; `wyckoff ps`, `/agents` and every open app's
status bar read them. The session is the only writer of its file. A reader never
trusts a `running` or `waiting` state alone: if the recorded process is gone (or its
pid now names another process) and it did not end cleanly, the session crashed and
reads as `failed`.

Where the sockets live (`socket_dir()`) is decided here too: a 0700 folder of this
user's, short enough for a Unix socket path.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from wyckoff_cli.storage import paths
from wyckoff_cli.storage.atomic import write_atomic

State = Literal["running", "waiting", "done", "failed", "stopped"]
STATES: tuple[State, ...] = ("running", "waiting", "done", "failed", "stopped")
LIVE_STATES = ("running", "waiting")
SOCKET_PATH_LIMIT = 100  # sun_path holds 108 bytes; leave room for the file name


class RegistryError(paths.StorageError):
    """No such background session, or a registry file that cannot be read."""


@dataclass(slots=True)
class RunningSession:
    """One background session as its process last wrote it."""

    id: str
    pid: int
    project: str  # the project root the session belongs to (a worktree's main repository root)
    root: str  # the workspace root the session runs in (a worktree's own folder)
    model: str
    started: str  # ISO 8601, UTC
    state: State = "running"
    waiting_for: str | None = None  # e.g. `run_shell: pytest -q` while `waiting`
    title: str = ""  # the session's title, else its first prompt
    cost_usd: float = 0.0
    session_id: str | None = None  # the chat log's id (`wyckoff sessions show ID`)
    ended: str | None = None  # ISO 8601 once it ended (done, failed or stopped)
    pid_start: str | None = None  # the process's start time from /proc: a reused pid does not match
    log: str = ""  # the detached process's stdout and stderr
    worktree: str | None = None  # the linked git worktree's folder name, when `root` is one
    branch: str | None = None  # the branch checked out in `root` when the session started
    current_tool: str | None = None  # the tool running now, for `/agents`
    agents: list[dict[str, Any]] = field(default_factory=list)  # sub-agents: {id, agent, state, tool}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunningSession:
        known = {f.name for f in fields(cls)}
        entry = cls(**{k: v for k, v in data.items() if k in known})
        if entry.state not in STATES:
            raise ValueError(f"unknown state {entry.state!r}")
        return entry

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def elapsed_s(self, now: datetime | None = None) -> float:
        start = datetime.fromisoformat(self.started)
        end = datetime.fromisoformat(self.ended) if self.ended else (now or datetime.now(UTC))
        return max(0.0, round((end - start).total_seconds(), 1))


def new_background_id() -> str:
    """`bg-` and six hex digits: short enough to type after `wyckoff attach`."""
    return f"bg-{secrets.token_hex(3)}"


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def registry_dir() -> Path:
    return paths.data_dir() / "running"


def process_start(pid: int) -> str | None:
    """The kernel's start time of `pid` (field 22 of /proc/PID/stat), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()[19] if ")" in text else None


def process_alive(pid: int, start: str | None) -> bool:
    """Whether `pid` is alive and is still the process that started (not a reused pid)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process: not ours, so not our session
    if _zombie(pid):
        return False
    return start is None or process_start(pid) in (None, start)


def _zombie(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text.rpartition(")")[2].split()[:1] == ["Z"]


class RunningRegistry:
    """Reads and writes the registry under `root` (default: `<data dir>/running`)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else registry_dir()

    def path(self, session_id: str) -> Path:
        return self.root / f"{session_id}.json"

    def write(self, entry: RunningSession) -> None:
        write_atomic(self.path(entry.id), json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")

    def update(self, entry: RunningSession, **changes: Any) -> RunningSession:
        """Write `entry` with `changes` and return the new entry."""
        new = replace(entry, **changes)
        self.write(new)
        return new

    def read(self, session_id: str) -> RunningSession:
        """The entry for `session_id` (a unique prefix will do), its state checked
        against its process. Raises `RegistryError` naming what is wrong."""
        path = self.path(session_id)
        if not path.is_file():
            matches = [p for p in self._files() if p.stem.startswith(session_id)]
            if len(matches) != 1:
                why = "no" if not matches else "more than one"
                raise RegistryError(
                    f"{why} background session matches {session_id!r} (see `wyckoff ps --all`)"
                )
            path = matches[0]
        entry = self._load(path)
        if entry is None:
            raise RegistryError(f"the registry file {path} cannot be read")
        return entry

    def entries(self, project: Path | None = None) -> list[RunningSession]:
        """Every readable entry (of `project` only, when given), newest first; a
        torn or foreign file is skipped."""
        wanted = str(project) if project is not None else None
        found = [e for e in (self._load(p) for p in self._files()) if e is not None]
        if wanted is not None:
            found = [e for e in found if wanted in (e.project, e.root)]
        return sorted(found, key=lambda e: e.started, reverse=True)

    def waiting(self, project: Path | None = None) -> list[RunningSession]:
        return [e for e in self.entries(project) if e.state == "waiting"]

    def _files(self) -> Iterator[Path]:
        with contextlib.suppress(OSError):
            yield from (p for p in self.root.iterdir() if p.suffix == ".json" and not p.name.startswith("."))

    def _load(self, path: Path) -> RunningSession | None:
        try:
            entry = RunningSession.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None
        if entry.state in LIVE_STATES and not process_alive(entry.pid, entry.pid_start):
            entry.state = "failed"  # the process died without saying it ended: a crash
            entry.waiting_for = None
            entry.current_tool = None
        return entry


# --------------------------------------------------------------------------- sockets


def socket_dir() -> Path:
    """The 0700 folder of this user's background-session sockets: `<data dir>/run`,
    or, when that path is too long for a socket, `/tmp/wyckoff-UID-HASH`. Raises
    `StorageError` when the folder is not this user's private folder."""
    preferred = paths.data_dir() / "run"
    if len(str(preferred)) + 16 <= SOCKET_PATH_LIMIT:
        folder = preferred
    else:
        digest = hashlib.sha256(str(paths.data_dir()).encode("utf-8", "surrogateescape")).hexdigest()[:10]
        folder = Path("/tmp") / f"wyckoff-{os.getuid()}-{digest}"
    paths.ensure_private_dir(folder)
    check_private_dir(folder)
    return folder


def check_private_dir(folder: Path) -> None:
    """Refuse a folder that is a symlink, is another user's, or is open to others
    (someone could have made it first in /tmp)."""
    info = folder.lstat()
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise paths.StorageError(f"{folder} is not a folder (a symlink?); refusing to put sockets there")
    if info.st_uid != os.getuid():
        raise paths.StorageError(f"{folder} belongs to another user; refusing to put sockets there")
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)


def socket_path(session_id: str) -> Path:
    return socket_dir() / f"{session_id}.sock"


# --------------------------------------------------------------------------- where a session runs


@dataclass(frozen=True, slots=True)
class GitPlace:
    """Where a workspace root sits in git: the project (the main work tree's root, so
    a worktree's session lists with its repository), the linked worktree's name, the branch."""

    project: Path
    worktree: str | None
    branch: str | None


def git_place(root: Path) -> GitPlace:
    """Read where `root` sits from git's own files, without running git (`ps` must be
    quick): the nearest `.git` folder, or a linked worktree's `.git` file naming its
    git dir, whose `commondir` leads to the main repository. Outside a repository (or
    with files git itself would not accept) the root is its own project."""
    root = root.resolve()
    top = next((folder for folder in (root, *root.parents) if (folder / ".git").exists()), None)
    if top is None:
        return GitPlace(root, None, None)
    dot_git = top / ".git"
    try:
        if dot_git.is_dir():
            git_dir = dot_git
        else:
            pointer = dot_git.read_text(encoding="utf-8").strip()
            if not pointer.startswith("gitdir:"):
                return GitPlace(root, None, None)
            git_dir = (top / pointer.removeprefix("gitdir:").strip()).resolve()
        common = git_dir
        if (git_dir / "commondir").is_file():
            common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return GitPlace(root, None, None)
    project = common.parent if common.name == ".git" else top
    branch = head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None
    worktree = top.name if project != top else None
    return GitPlace(project, worktree, branch)
