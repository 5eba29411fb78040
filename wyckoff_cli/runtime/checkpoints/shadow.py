"""The shadow git repository: snapshots of a work tree kept outside it.

Two backends share one interface (`ShadowBackend`): the git binary (`ShadowRepo`,
used whenever `git` is on PATH) and dulwich (`dulwich_repo.DulwichShadowRepo`, the
fallback). Both write the same bare repository format.

One bare repository per workspace under the data dir. Every git command runs with
`GIT_DIR` pointing at it, `GIT_WORK_TREE` at the workspace and a private index, with
the system and global git config left out (no filters, hooks or fsmonitor of the
user's apply) and `$GIT_DIR/info/attributes` turning off line-ending conversion and
filters, so a snapshot stores the bytes on disk. The user's own `.git` is never
opened: git skips `.git` folders when it scans a tree, and nothing here writes there.

A snapshot is incremental: the private index keeps each file's stat data, so only
files whose size or time changed since the last snapshot are read and hashed again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from wyckoff_cli.core.errors import WyckoffError
from wyckoff_cli.storage.paths import ensure_private_dir
from wyckoff_cli.tools.permissions.git_env import hardened_git_argv, hardened_git_env

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_ATTRIBUTES = "* -text -filter -ident -eol\n"
PRIVATE_UMASK = 0o077  # what git creates is the owner's only (folders 0700, files 0600, objects 0400)
_PASSED_ON = (
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "TMPDIR",
    "SYSTEMROOT",
)  # the rest of the environment stays out
_IDENTITY = {
    "GIT_AUTHOR_NAME": "wyckoff",
    "GIT_AUTHOR_EMAIL": "checkpoints@wyckoff.invalid",
    "GIT_COMMITTER_NAME": "wyckoff",
    "GIT_COMMITTER_EMAIL": "checkpoints@wyckoff.invalid",
}


class CheckpointError(WyckoffError):
    """A checkpoint could not be made, read or restored."""

    exit_code = 2


class GitMissing(CheckpointError):
    """No git binary: checkpoints are off."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One snapshot of the work tree: a commit in the shadow repository."""

    commit: str
    tree: str
    skipped: tuple[str, ...] = ()  # files over max_file_size, left out
    nested: tuple[str, ...] = ()  # folders holding another git repository, left out


@dataclass(frozen=True, slots=True)
class Change:
    """How one path differs between two snapshots: `A` added, `D` deleted,
    `M` modified, `T` changed type (file ↔ symlink)."""

    status: str
    path: str


@dataclass
class ShadowRepo:
    """The shadow repository for `workspace`, kept in `git_dir`."""

    workspace: Path
    git_dir: Path
    git: str = field(default_factory=lambda: shutil.which("git") or "")

    def __post_init__(self) -> None:
        self.workspace = self.workspace.resolve()
        if not self.git:
            raise GitMissing("checkpoints need the git binary, and none is on PATH")

    # ---------------------------------------------------------------- plumbing

    def _env(self) -> dict[str, str]:
        """Only what git needs: no API keys or tokens, no inherited `GIT_*` settings."""
        env = hardened_git_env(base={k: os.environ[k] for k in _PASSED_ON if k in os.environ})
        env.update(_IDENTITY)
        env.update(
            {
                "GIT_DIR": str(self.git_dir),
                "GIT_WORK_TREE": str(self.workspace),
                "GIT_INDEX_FILE": str(self.git_dir / "wyckoff-index"),
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_LITERAL_PATHSPECS": "1",
                "GIT_TERMINAL_PROMPT": "0",
                "LC_ALL": "C",
            }
        )
        return env

    def run(
        self, *args: str, input: bytes | None = None, check: bool = True, ok: Sequence[int] = (0,)
    ) -> bytes:
        """Run `git ARGS` against the shadow repository; returns stdout."""
        try:
            done = subprocess.run(
                hardened_git_argv(self.git, "-c", "core.quotepath=off", *args),
                umask=PRIVATE_UMASK,
                input=input,
                capture_output=True,
                env=self._env(),
                cwd=self.workspace,
                check=False,
            )
        except OSError as exc:
            raise CheckpointError(f"cannot run git: {exc}") from exc
        if check and done.returncode not in ok:
            message = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
            raise CheckpointError(f"git {args[0]} failed in the checkpoint repository: {message}")
        return done.stdout

    def ensure(self) -> None:
        """Create the repository on first use."""
        if (self.git_dir / "HEAD").is_file():
            return
        ensure_private_dir(self.git_dir)
        env = {k: v for k, v in self._env().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
        subprocess.run(
            hardened_git_argv(self.git, "init", "-q", "--bare", "--template=", str(self.git_dir)),
            umask=PRIVATE_UMASK,
            env=env,
            capture_output=True,
            check=True,
        )
        for key, value in (
            ("core.bare", "false"),
            ("core.autocrlf", "false"),
            ("core.symlinks", "true"),
            ("core.logAllRefUpdates", "false"),
            ("core.untrackedCache", "true"),
            ("gc.auto", "0"),
        ):
            self.run("config", key, value)
        info = self.git_dir / "info"
        ensure_private_dir(info)
        write_private(info / "attributes", _ATTRIBUTES)

    def set_excludes(self, patterns: Iterable[str]) -> None:
        write_excludes(self.workspace, self.git_dir, patterns)

    # ---------------------------------------------------------------- snapshots

    def snapshot(self, max_file_size: int, message: str = "checkpoint") -> Snapshot:
        """Bring the private index up to date with the work tree and commit it."""
        self.ensure()
        self.run("update-index", "-q", "--refresh", "--ignore-missing", ok=(0, 1))
        listed = _split(self.run("ls-files", "-z", "-m", "-d", "-o", "--exclude-standard"))
        ignored = _split(self.run("ls-files", "-z", "-c", "-i", "--exclude-standard"))
        update: list[str] = []
        drop: list[str] = list(ignored)
        skipped: list[str] = []
        nested: list[str] = []
        real_dirs: dict[str, bool] = {}
        for path in dict.fromkeys(listed):
            if path.endswith("/"):
                nested.append(path.rstrip("/"))
                continue
            if not self._real_parents(path, real_dirs):  # gone, or now beyond a symlink
                drop.append(path)
                continue
            try:
                info = os.lstat(self.workspace / path)
            except FileNotFoundError:
                drop.append(path)
                continue
            except OSError:
                continue
            if info.st_size > max_file_size and not _is_link(info.st_mode):
                skipped.append(path)
                drop.append(path)
            else:
                update.append(path)
        if drop:
            self.run("update-index", "-z", "--force-remove", "--stdin", input=_join(drop))
        if update:
            self.run("update-index", "-z", "--add", "--remove", "--replace", "--stdin", input=_join(update))
        tree = self.run("write-tree").decode().strip()
        commit = self.run("commit-tree", tree, "-m", message).decode().strip()
        return Snapshot(commit, tree, tuple(sorted(skipped)), tuple(sorted(nested)))

    def _real_parents(self, path: str, cache: dict[str, bool]) -> bool:
        """Whether every folder above `path` is a real folder (no symlink, nothing
        missing), so the path is inside the work tree."""
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = "/".join(parts[:depth])
            known = cache.get(folder)
            if known is None:
                try:
                    known = cache[folder] = stat.S_ISDIR(os.lstat(self.workspace / folder).st_mode)
                except OSError:
                    known = cache[folder] = False
            if not known:
                return False
        return True

    def keep(self, ref: str, commit: str) -> None:
        self.run("update-ref", f"refs/wyckoff/{ref}", commit)

    def forget(self, refs: Iterable[str]) -> None:
        lines = "".join(f"delete refs/wyckoff/{ref}\n" for ref in refs)
        if lines:
            self.run("update-ref", "--stdin", input=lines.encode())

    def collect_garbage(self) -> None:
        """Drop the objects no checkpoint needs any more."""
        self.run("gc", "--quiet", "--prune=now")

    # ---------------------------------------------------------------- reading

    def changes(self, old: str, new: str) -> list[Change]:
        """What changed from commit (or tree) `old` to `new`, by path."""
        if old == new:
            return []
        raw = self.run("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new)
        items = _split(raw)
        return [Change(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)]

    def diff(self, old: str, new: str, paths: Sequence[str] = ()) -> str:
        """A unified diff from `old` to `new` (text; binary files named)."""
        args = ["diff", "--no-color", "--no-ext-diff", "--no-renames", old, new]
        if paths:
            args += ["--", *paths]
        return self.run(*args).decode("utf-8", "replace")

    def has_object(self, sha: str) -> bool:
        return self.run("cat-file", "-t", sha, check=False) != b""

    def files(self, commit: str) -> set[str]:
        return set(_split(self.run("ls-tree", "-r", "-z", "--name-only", commit)))

    # ---------------------------------------------------------------- restoring

    def restore(self, target: str, write: Sequence[str], delete: Sequence[str]) -> None:
        """Make the work tree match `target` for these paths: delete `delete`, then
        write `write` from `target` (content, executable bit, symlinks)."""
        delete_paths(self.workspace, delete)
        if delete:
            self.run("update-index", "-z", "--force-remove", "--stdin", input=_join(delete))
        clear_folders_in_the_way(self.workspace, write)
        if write:
            self.run(
                "checkout",
                "--no-overlay",
                target,
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                input=_join(write),
            )

    def disk_use(self) -> int:
        return folder_size(self.git_dir)

    def refs(self) -> list[str]:
        return self.run("for-each-ref", "--format=%(refname)").decode().split()

    def blob_id(self, commit: str, path: str) -> str:
        return self.run("rev-parse", f"{commit}:{path}").decode().strip()


# --------------------------------------------------------------------------- shared by both backends


class ShadowBackend(Protocol):
    """What the engine needs from a shadow repository (git binary or dulwich)."""

    workspace: Path
    git_dir: Path

    def ensure(self) -> None: ...
    def set_excludes(self, patterns: Iterable[str]) -> None: ...
    def snapshot(self, max_file_size: int, message: str = "checkpoint") -> Snapshot: ...
    def keep(self, ref: str, commit: str) -> None: ...
    def forget(self, refs: Iterable[str]) -> None: ...
    def collect_garbage(self) -> None: ...
    def changes(self, old: str, new: str) -> list[Change]: ...
    def diff(self, old: str, new: str, paths: Sequence[str] = ()) -> str: ...
    def files(self, commit: str) -> set[str]: ...
    def has_object(self, sha: str) -> bool: ...
    def restore(self, target: str, write: Sequence[str], delete: Sequence[str]) -> None: ...
    def disk_use(self) -> int: ...
    def refs(self) -> list[str]: ...
    def blob_id(self, commit: str, path: str) -> str: ...


def write_excludes(workspace: Path, git_dir: Path, patterns: Iterable[str]) -> None:
    """`$GIT_DIR/info/exclude`: the configured globs plus the user's own
    `.git/info/exclude` (read, never written)."""
    lines = [p for p in patterns if p.strip()]
    own = workspace / ".git" / "info" / "exclude"
    with contextlib.suppress(OSError):
        lines += own.read_text(encoding="utf-8", errors="replace").splitlines()
    target = git_dir / "info" / "exclude"
    text = "\n".join(lines) + "\n"
    try:
        if target.read_text(encoding="utf-8") == text:
            return
    except OSError:
        pass
    ensure_private_dir(target.parent)
    write_private(target, text)


def write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (0600, whatever the umask)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(text)


def delete_paths(workspace: Path, paths: Iterable[str]) -> None:
    """Delete files (and symlinks, never what they point to), then the folders that emptied."""
    for path in paths:
        full = workspace / path
        try:
            full.unlink()
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            continue
        _remove_empty_parents(full.parent, workspace)


def clear_folders_in_the_way(workspace: Path, paths: Iterable[str]) -> None:
    """A folder where a file comes back is removed only if empty."""
    for path in paths:
        full = workspace / path
        if full.is_dir() and not full.is_symlink():
            try:
                full.rmdir()
            except OSError as exc:
                raise CheckpointError(f"cannot restore {path}: a folder with files is in the way") from exc


def folder_size(folder: Path) -> int:
    total = 0
    for root, _dirs, names in os.walk(folder):
        for name in names:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def _split(raw: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in raw.split(b"\0") if p]


def _join(paths: Iterable[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def _is_link(mode: int) -> bool:
    return stat.S_ISLNK(mode)


def _remove_empty_parents(folder: Path, stop: Path) -> None:
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent
