"""The dulwich backend of the shadow repository, used when no git binary is on PATH.

Same bare repository format, same behaviour as the git backend (shadow.py): the work
tree is walked without following symlinks, `.git` folders and nested repositories are
left out, `.gitignore` files (every level), `$GIT_DIR/info/exclude` (the configured
globs plus the user's `.git/info/exclude`) and the global excludes file at its default
place are honoured, files over `max_file_size` are skipped. Incremental: a stat cache
(`wyckoff-dulwich-cache.json` beside the objects) maps each file's size, mtime, ctime,
inode and mode to its blob, so only changed files are read; a file modified within the
same second as the previous snapshot is re-read next time (racy timestamps). Slower than
git on big trees (docs/PERFORMANCE.md); imported only when chosen.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from dulwich.diff_tree import tree_changes
from dulwich.gc import prune_unreachable_objects
from dulwich.ignore import IgnoreFilter, IgnoreFilterManager, read_ignore_patterns
from dulwich.index import commit_tree
from dulwich.object_store import iter_tree_contents, tree_lookup_path
from dulwich.objects import Blob, Commit, ObjectID
from dulwich.patch import write_object_diff
from dulwich.refs import Ref
from dulwich.repo import Repo

from wyckoff_cli.runtime.checkpoints.shadow import (
    Change,
    CheckpointError,
    Snapshot,
    clear_folders_in_the_way,
    delete_paths,
    folder_size,
    write_excludes,
    write_private,
)
from wyckoff_cli.storage.paths import ensure_private_dir

CACHE = "wyckoff-dulwich-cache.json"
IDENTITY = b"wyckoff <checkpoints@wyckoff.invalid>"
RACY_SECONDS = 2.0
_KINDS = {"add": "A", "delete": "D", "modify": "M"}


def _b(path: str) -> bytes:
    return os.fsencode(path)


def _s(path: bytes) -> str:
    return os.fsdecode(path)


class DulwichShadowRepo:
    def __init__(self, workspace: Path, git_dir: Path) -> None:
        self.workspace = workspace.resolve()
        self.git_dir = git_dir
        self._repo: Repo | None = None

    # ---------------------------------------------------------------- plumbing

    @property
    def repo(self) -> Repo:
        if self._repo is None:
            self.ensure()
            self._repo = Repo(str(self.git_dir))
        return self._repo

    def ensure(self) -> None:
        if (self.git_dir / "HEAD").is_file():
            return
        ensure_private_dir(self.git_dir)
        repo = Repo.init_bare(str(self.git_dir))
        config = repo.get_config()
        config.set((b"core",), b"sharedRepository", b"0600")  # new object folders 0700
        config.set((b"core",), b"bare", False)
        config.set((b"core",), b"logallrefupdates", False)
        config.set((b"gc",), b"auto", b"0")
        config.write_to_path()
        ensure_private_dir(self.git_dir / "info")
        write_private(self.git_dir / "info" / "attributes", "* -text -filter -ident -eol\n")
        _make_private(self.git_dir)

    def set_excludes(self, patterns: Iterable[str]) -> None:
        write_excludes(self.workspace, self.git_dir, patterns)

    def _tree_of(self, sha: str) -> ObjectID:
        obj = self.repo.object_store[ObjectID(sha.encode())]
        return obj.tree if isinstance(obj, Commit) else obj.id

    # ---------------------------------------------------------------- snapshots

    def _ignores(self) -> IgnoreFilterManager:
        filters: list[IgnoreFilter] = []
        home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        for path in (os.path.join(home, "git", "ignore"), str(self.git_dir / "info" / "exclude")):
            try:
                with open(path, "rb") as handle:
                    filters.append(IgnoreFilter(read_ignore_patterns(handle)))
            except OSError:
                continue
        return IgnoreFilterManager(str(self.workspace), filters, False)

    def _walk(self, ignores: IgnoreFilterManager, nested: list[str]) -> Iterator[tuple[str, os.stat_result]]:
        stack = [""]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(self.workspace / folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name == ".git":
                    continue
                path = f"{folder}/{entry.name}" if folder else entry.name
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    if ignores.is_ignored(path + "/"):
                        continue
                    if os.path.lexists(self.workspace / path / ".git"):
                        nested.append(path)
                        continue
                    stack.append(path)
                elif (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)) and not ignores.is_ignored(
                    path
                ):
                    yield path, info

    def _load_cache(self) -> dict[str, list[Any]]:
        try:
            data = json.loads((self.git_dir / CACHE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def snapshot(self, max_file_size: int, message: str = "checkpoint") -> Snapshot:
        store = self.repo.object_store
        cache = self._load_cache()
        fresh: dict[str, list[Any]] = {}
        started = time.time()
        entries: list[tuple[bytes, ObjectID, int]] = []
        skipped: list[str] = []
        nested: list[str] = []
        for path, info in self._walk(self._ignores(), nested):
            link = stat.S_ISLNK(info.st_mode)
            if not link and info.st_size > max_file_size:
                skipped.append(path)
                continue
            mode = 0o120000 if link else (0o100755 if info.st_mode & stat.S_IXUSR else 0o100644)
            key = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, mode]
            known = cache.get(path)
            if known is not None and known[:5] == key and not known[6]:
                sha = known[5]
            else:
                try:
                    data = (
                        _b(os.readlink(self.workspace / path))
                        if link
                        else (self.workspace / path).read_bytes()
                    )
                except OSError:
                    continue
                blob = Blob.from_string(data)
                if blob.id not in store:
                    store.add_object(blob)
                sha = blob.id.decode()
            racy = info.st_mtime_ns / 1e9 >= started - RACY_SECONDS
            fresh[path] = [*key, sha, racy]
            entries.append((_b(path), ObjectID(sha.encode()), mode))
        tree = commit_tree(store, entries)
        commit = Commit()
        commit.tree = tree
        commit.author = commit.committer = IDENTITY
        commit.author_time = commit.commit_time = int(started)
        commit.author_timezone = commit.commit_timezone = 0
        commit.encoding = b"UTF-8"
        commit.message = message.encode()
        store.add_object(commit)
        write_private(self.git_dir / CACHE, json.dumps(fresh))
        return Snapshot(commit.id.decode(), tree.decode(), tuple(sorted(skipped)), tuple(sorted(nested)))

    def keep(self, ref: str, commit: str) -> None:
        self.repo.refs[Ref(b"refs/wyckoff/" + ref.encode())] = ObjectID(commit.encode())
        folder = self.git_dir / "refs" / "wyckoff"
        os.chmod(folder, 0o700)
        with contextlib.suppress(OSError):
            os.chmod(folder / ref, 0o600)

    def forget(self, refs: Iterable[str]) -> None:
        for ref in refs:
            name = Ref(b"refs/wyckoff/" + ref.encode())
            if name in self.repo.refs:
                del self.repo.refs[name]

    def collect_garbage(self) -> None:
        prune_unreachable_objects(self.repo.object_store, self.repo.refs, grace_period=0)
        (self.git_dir / CACHE).unlink(missing_ok=True)  # its blobs may be gone: read every file again

    # ---------------------------------------------------------------- reading

    def _tree_changes(self, old: str, new: str) -> list[tuple[str, Any, Any]]:
        found: dict[str, tuple[str, Any, Any]] = {}
        store = self.repo.object_store
        for change in tree_changes(store, self._tree_of(old), self._tree_of(new)):
            kind = _KINDS.get(change.type, "M")
            entry = change.new if kind == "A" else change.old
            if entry is None or entry.path is None:
                continue
            path = _s(entry.path)
            if path in found:  # a delete and an add of one path: its kind changed
                _, old_entry, _ = found[path]
                found[path] = (
                    "T",
                    old_entry if kind == "A" else change.old,
                    change.new if kind == "A" else None,
                )
                continue
            found[path] = (kind, change.old, change.new)
        return [found[p] for p in sorted(found)]

    def changes(self, old: str, new: str) -> list[Change]:
        if old == new:
            return []
        return [Change(kind, self._path(o, n)) for kind, o, n in self._tree_changes(old, new)]

    @staticmethod
    def _path(old: Any, new: Any) -> str:
        entry = new if new is not None and new.path is not None else old
        return _s(entry.path)

    def diff(self, old: str, new: str, paths: Sequence[str] = ()) -> str:
        wanted = set(paths)
        out = io.BytesIO()
        for _kind, o, n in self._tree_changes(old, new):
            if wanted and self._path(o, n) not in wanted:
                continue
            write_object_diff(
                out,
                self.repo.object_store,
                (o.path, o.mode, o.sha) if o is not None and o.path is not None else (None, None, None),
                (n.path, n.mode, n.sha) if n is not None and n.path is not None else (None, None, None),
            )
        return out.getvalue().decode("utf-8", "replace")

    def files(self, commit: str) -> set[str]:
        return {_s(e.path) for e in iter_tree_contents(self.repo.object_store, self._tree_of(commit))}

    def has_object(self, sha: str) -> bool:
        return ObjectID(sha.encode()) in self.repo.object_store

    def refs(self) -> list[str]:
        return [_s(name) for name in self.repo.refs if name.startswith(b"refs/")]

    def blob_id(self, commit: str, path: str) -> str:
        _mode, sha = tree_lookup_path(self.repo.object_store.__getitem__, self._tree_of(commit), _b(path))
        return sha.decode()

    # ---------------------------------------------------------------- restoring

    def restore(self, target: str, write: Sequence[str], delete: Sequence[str]) -> None:
        delete_paths(self.workspace, delete)
        clear_folders_in_the_way(self.workspace, write)
        store = self.repo.object_store
        tree = self._tree_of(target)
        for path in write:
            mode, sha = tree_lookup_path(store.__getitem__, tree, _b(path))
            data = store[sha].as_raw_string()
            full = self.workspace / path
            self._make_parents(path)
            if os.path.lexists(full):
                full.unlink()  # never write through a symlink
            if stat.S_ISLNK(mode):
                os.symlink(os.fsdecode(data), full)
                continue
            fd = os.open(
                full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o777 if mode & 0o111 else 0o666
            )
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)

    def _make_parents(self, path: str) -> None:
        parts = path.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            folder = self.workspace / "/".join(parts[:depth])
            if os.path.lexists(folder) and (folder.is_symlink() or not folder.is_dir()):
                raise CheckpointError(f"cannot restore {path}: {folder.name} is in the way (not a folder)")
            if not os.path.lexists(folder):
                folder.mkdir()

    def disk_use(self) -> int:
        return folder_size(self.git_dir)


def _make_private(folder: Path) -> None:
    """What `init_bare` made: folders 0700, files 0600."""
    for root, dirs, names in os.walk(folder):
        os.chmod(root, 0o700)
        for name in names:
            os.chmod(os.path.join(root, name), 0o600)
        for name in dirs:
            os.chmod(os.path.join(root, name), 0o700)
