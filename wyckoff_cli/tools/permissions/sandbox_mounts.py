"""What the sandbox keeps read-only or out of reach, and the mount points that needs.

- `protected_entries`: the paths that change what Wyckoff (or git, Claude Code,
  direnv) runs or allows, from protected.py's one list: the workspace's `.wyckoff/`,
  `.claude/`, `.git`, `.mcp.json`, `.envrc`, and Claude Code's `~/.claude/` and
  `~/.claude.json`. Each top-level name is mounted read-only as a whole, so it is
  also a mount point: a sandboxed command can neither write into it nor rename,
  delete or replace it.
- `MountPoints`: a protected path that does not exist still needs something to mount
  on (else a command could create it). An empty placeholder is made from Wyckoff's
  side and kept while any sandboxed command may run: in this process (a count) and
  in every other Wyckoff process (a shared lock on a file in Wyckoff's cache folder,
  which sandboxed commands cannot see: `bwrap_args` hides `state_dir`). Only the last one out, holding the lock
  exclusively, removes the placeholders (those still empty), so no command ever
  sees a protected path unprotected.
- `outside_sockets`: every Unix socket bound on the file system in Wyckoff's network
  namespace (`/proc/net/unix`), to be masked inside the sandbox (`/dev/null` mounted
  over it: connecting is refused; the user's runtime folder is emptied as a whole,
  sandbox.py), except the ones `[shell] allow_unix_sockets` names. Abstract sockets are unreachable because the sandbox has its own network
  namespace (without `network`).
- `sandbox_env`: variables pointing at such sockets (`SSH_AUTH_SOCK`, the session
  bus, `DOCKER_HOST` …) are left out unless they name an allowed socket.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from wyckoff_cli.tools.permissions.protected import HOME_FILES, PROJECT_FILES, PROJECT_FOLDERS

# Variables whose value names a socket: left out of sandboxed commands' environment.
SOCKET_VARIABLES = (
    "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "DOCKER_HOST", "CONTAINER_HOST",
    "PODMAN_HOST", "GPG_AGENT_INFO", "WAYLAND_DISPLAY", "PULSE_SERVER", "SWAYSOCK", "I3SOCK", "TMUX",
    "KITTY_LISTEN_ON", "NVIM", "NVIM_LISTEN_ADDRESS", "VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_IPC_HANDLE",
    "GIT_ASKPASS", "SSH_ASKPASS", "XAUTHORITY", "DISPLAY",
)  # fmt: skip


def _top_level(names: Iterable[str], folders: Iterable[str]) -> list[tuple[str, bool]]:
    """(first path component, is a folder) of each protected name, once each."""
    folder_names = set(folders)
    seen: dict[str, bool] = {}
    for name in names:
        head, _, rest = name.partition("/")
        seen.setdefault(head, bool(rest) or name in folder_names)
    return list(seen.items())


# The workspace's protected names, whole: `.claude` covers settings*, commands, hooks …
PROJECT_ENTRIES = _top_level([".git", *PROJECT_FOLDERS, *PROJECT_FILES], [".git", *PROJECT_FOLDERS])
HOME_ENTRIES = _top_level(HOME_FILES, ())


def protected_entries(workspace: Path, home: Path) -> list[tuple[Path, bool]]:
    """(path, is a folder) the sandbox keeps read-only: the workspace's own, then the
    home folder's (those matter only where the home folder is writable)."""
    found = [(workspace / name, folder) for name, folder in PROJECT_ENTRIES]
    return found + [(home / name, folder) for name, folder in HOME_ENTRIES]


class MountPoints:
    """Placeholders for protected paths that do not exist, kept while sandboxed
    commands may run (see the module docstring). `state_dir` holds the lock and the
    record of placeholders made; it must be hidden from the sandbox."""

    def __init__(self, state_dir: Path | None = None) -> None:
        self._state_dir = state_dir
        self._private = state_dir is None  # a folder of its own, made while held
        self._mutex = threading.Lock()
        self._users = 0
        self._fd: int | None = None

    @property
    def state_dir(self) -> Path | None:
        """The session builder passes Wyckoff's cache folder (shared by every Wyckoff
        process); without one, a private folder in the temp folder exists while held."""
        return self._state_dir

    def acquire(self, wanted: Iterable[tuple[Path, bool]]) -> None:
        """Hold the placeholders (shared with every other sandboxed command), making
        the missing ones in `wanted`. Raises OSError when the lock cannot be taken."""
        with self._mutex:
            if self._users == 0:
                if self._private:
                    self._state_dir = Path(tempfile.mkdtemp(prefix="wyckoff-sandbox-"))
                folder = self._folder()
                folder.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(folder / "mounts.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH)
                except OSError:
                    os.close(fd)
                    raise
                self._fd = fd
            self._users += 1
        try:
            self._make(list(wanted))
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        """Let go; the last holder of all removes the placeholders."""
        with self._mutex:
            self._users -= 1
            if self._users > 0 or self._fd is None:
                return
            fd, self._fd = self._fd, None
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    return  # another sandboxed command runs: it removes them later
                with self._record() as record:
                    for path in reversed(record):
                        _remove_placeholder(Path(path))
                    record.clear()
            finally:
                os.close(fd)
                if self._private and self._state_dir is not None:
                    shutil.rmtree(self._state_dir, ignore_errors=True)
                    self._state_dir = None

    def _folder(self) -> Path:
        assert self._state_dir is not None, "held without a folder"
        return self._state_dir

    def _make(self, wanted: list[tuple[Path, bool]]) -> None:
        missing = [(p, d) for p, d in wanted if not os.path.lexists(p) and p.parent.is_dir()]
        if not missing:
            return
        with self._record() as record:
            for path, folder in missing:
                try:
                    if folder:
                        path.mkdir(mode=0o755)
                    else:
                        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644))
                except FileExistsError:
                    continue
                record.append(str(path))

    @contextlib.contextmanager
    def _record(self) -> Iterator[list[str]]:
        """The list of placeholders made, read and written under an exclusive lock."""
        folder = self._folder()
        fd = os.open(folder / "record.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            file = folder / "placeholders.json"
            try:
                record = [str(p) for p in json.loads(file.read_text(encoding="utf-8"))]
            except (OSError, ValueError, TypeError):
                record = []
            before = list(record)
            yield record
            if record != before:
                temp = file.with_suffix(".tmp")
                temp.write_text(json.dumps(record), encoding="utf-8")
                os.replace(temp, file)
        finally:
            os.close(fd)


def _remove_placeholder(path: Path) -> None:
    """Remove a placeholder that is still empty (a person may have filled it since)."""
    with contextlib.suppress(OSError):
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode):
            path.rmdir()  # fails when not empty
        elif stat.S_ISREG(info.st_mode) and info.st_size == 0:
            path.unlink()


def outside_sockets(allowed: Iterable[Path] = (), table: str = "/proc/net/unix") -> list[Path]:
    """The file-system Unix sockets bound now in this network namespace, except
    `allowed`, that exist as sockets on this file system."""
    keep = {os.path.realpath(p) for p in allowed}
    try:
        lines = Path(table).read_text(encoding="utf-8", errors="replace").splitlines()[1:]
    except OSError:
        return []
    found: list[Path] = []
    seen: set[str] = set()
    for line in lines:
        fields = line.split(maxsplit=7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue  # unnamed or abstract
        path = os.path.realpath(fields[7])
        if path in seen or path in keep:
            continue
        seen.add(path)
        with contextlib.suppress(OSError):
            if stat.S_ISSOCK(os.stat(path).st_mode):
                found.append(Path(path))
    return found


def sandbox_env(env: Mapping[str, str], allowed: Iterable[Path] = ()) -> dict[str, str]:
    """`env` without the variables pointing at sockets, except those naming an allowed one."""
    allowed_text = [str(p) for p in allowed] + [os.path.realpath(p) for p in allowed]
    kept: dict[str, str] = {}
    for key, value in env.items():
        if key.upper() in SOCKET_VARIABLES and not any(a and a in value for a in allowed_text):
            continue
        kept[key] = value
    return kept
