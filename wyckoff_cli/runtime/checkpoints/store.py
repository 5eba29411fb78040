"""What is known about each checkpoint: `checkpoints.jsonl` beside the shadow repository.

One JSON object a line, append-only except for pruning (which rewrites the file
atomically). The first line is a header; then:

    {"kind": "checkpoint", "id": "3f2a9c1d", "session": "20261201-094403-ab12",
     "message_id": "9c0e…", "created": "2026-12-01T09:44:03.123+00:00",
     "type": "round", "commit": "…", "tree": "…", "calls": [{"id", "name", "args"}],
     "files": ["src/a.py"], "skipped": ["data/big.bin"]}
    {"kind": "after", "id": "3f2a9c1d", "commit": "…", "tree": "…"}

`type` is `round` (before a model round that may change files) or `restore` (the
state saved before a restore, so it can be undone; it also carries `action`
(`undo`, `redo`, `restore`), `restore_of`, `position` and `redo`). An `after` line
records the work tree once the round's tools finished: what changed between a
round's `after` and the next snapshot was changed by hand. A torn last line is
skipped.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.storage.chatlog import JsonlFile, dumps, read_jsonl
from wyckoff_cli.storage.paths import ensure_private_dir

FORMAT = "wyckoff.checkpoints"
VERSION = 1


@dataclass
class Checkpoint:
    id: str
    session: str
    message_id: str | None
    created: str
    commit: str
    tree: str
    type: str = "round"
    calls: list[dict[str, Any]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # changed since the session's previous checkpoint
    skipped: list[str] = field(default_factory=list)  # over max_file_size, not in the snapshot
    after: str | None = None  # the work tree once the round's tools had run
    after_tree: str | None = None
    action: str | None = None  # for `restore`: undo, redo or restore
    restore_of: str | None = None  # for `restore`: the checkpoint restored
    position: int | None = None  # for `restore`: rounds still applied after it
    redo: list[str] = field(default_factory=list)  # for `restore`: what /redo can bring back

    def to_record(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": "checkpoint"}
        for name in self.__dataclass_fields__:
            if name in ("after", "after_tree"):
                continue
            value = getattr(self, name)
            if name == "message_id" or (value is not None and value != []):
                data[name] = value
        return data

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Checkpoint:
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields.setdefault("message_id", None)
        return cls(**fields)

    def summary(self) -> dict[str, Any]:
        """The `checkpoints list --json` line."""
        return {
            "id": self.id,
            "session": self.session,
            "message_id": self.message_id,
            "created": self.created,
            "files": list(self.files),
            "type": self.type,
            "calls": [c.get("name") for c in self.calls],
            "skipped": list(self.skipped),
        }


class CheckpointLog:
    """`checkpoints.jsonl` in `folder`, with a lock serialising writers (two sessions
    in one workspace share the shadow repository)."""

    def __init__(self, folder: Path, workspace: Path) -> None:
        self.folder = folder
        self.path = folder / "checkpoints.jsonl"
        self.workspace = workspace

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        ensure_private_dir(self.folder)
        fd = os.open(self.folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _header(self) -> dict[str, Any]:
        return {"kind": "header", "format": FORMAT, "version": VERSION, "workspace": str(self.workspace)}

    def append(self, record: dict[str, Any]) -> None:
        ensure_private_dir(self.folder)
        if not self.path.exists():
            handle = JsonlFile.create(self.path, self._header())
        else:
            handle = JsonlFile.reopen(self.path)
        try:
            handle.append(record)
        finally:
            handle.close()

    def read(self) -> list[Checkpoint]:
        """Every checkpoint, oldest first, with its `after` state filled in."""
        if not self.path.exists():
            return []
        found: dict[str, Checkpoint] = {}
        for record in read_jsonl(self.path).records:
            kind = record.get("kind")
            try:
                if kind == "checkpoint":
                    checkpoint = Checkpoint.from_record(record)
                    found[checkpoint.id] = checkpoint
                elif kind == "after" and record.get("id") in found:
                    found[record["id"]].after = str(record["commit"])
                    found[record["id"]].after_tree = str(record["tree"])
            except (KeyError, TypeError, ValueError):
                continue
        return list(found.values())

    def rewrite(self, checkpoints: list[Checkpoint]) -> None:
        """Replace the file with these checkpoints (temp file + rename)."""
        lines = [self._header()]
        for checkpoint in checkpoints:
            lines.append(checkpoint.to_record())
            if checkpoint.after is not None:
                lines.append(
                    {
                        "kind": "after",
                        "id": checkpoint.id,
                        "commit": checkpoint.after,
                        "tree": checkpoint.after_tree,
                    }
                )
        fd, temp = tempfile.mkstemp(dir=self.folder, prefix=".checkpoints-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write("".join(dumps(line) + "\n" for line in lines))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
