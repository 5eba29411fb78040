"""`DIR/results.jsonl`: one line per finished task, the whole file replaced atomically.

Each write goes to a temporary file in the same folder and is moved over the old one
(`core/atomic.py`), so a reader — or a crash — sees the file before or after a task's
line, never half a line. A rerun replaces an id's line instead of adding a second one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.core.atomic import USER_FILE, write_atomic_bytes
from wyckoff_cli.storage.paths import StorageError

STATUSES = ("done", "failed", "timeout", "budget", "interrupted")
# what a rerun runs again: an interrupted task always, the rest with --retry-failed
RETRIED = {"failed", "timeout", "budget"}


@dataclass
class TaskResult:
    id: str
    status: str
    reason: str
    exit: int | None = None
    cost_usd: float | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    duration_s: float = 0.0
    files_changed: list[str] = field(default_factory=list)
    patch: str | None = None  # DIR/patches/ID.diff, written by the driver
    test_exit: int | None = None
    session: str | None = None
    agent_s: float | None = None  # the `wyckoff run` process's own wall time
    patch_text: str | None = field(default=None, repr=False)  # carried to the driver, not saved

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["patch_text"]
        return data


class ResultsFile:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / "results.jsonl"
        self.patches = out / "patches"
        self.records: dict[str, dict[str, Any]] = {}
        self.unreadable: list[int] = []  # line numbers of a torn or foreign line, kept out

    def load(self) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        for number, line in enumerate(text.splitlines(), start=1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                self.unreadable.append(number)
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                self.records[record["id"]] = record
            else:
                self.unreadable.append(number)

    def should_run(self, task_id: str, *, retry_failed: bool) -> bool:
        record = self.records.get(task_id)
        if record is None or record.get("status") not in STATUSES or record["status"] == "interrupted":
            return True
        return retry_failed and record["status"] in RETRIED

    def add(self, result: TaskResult) -> None:
        """Record `result` (and its patch). Raises `StorageError` when DIR cannot be written."""
        try:
            self._add(result)
        except OSError as exc:
            raise StorageError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def _add(self, result: TaskResult) -> None:
        if result.patch_text is not None:
            self.patches.mkdir(parents=True, exist_ok=True)
            patch = self.patches / f"{result.id}.diff"
            write_atomic_bytes(patch, result.patch_text.encode("utf-8"), mode=USER_FILE)
            result.patch = str(patch)
        self.records.pop(result.id, None)  # a rerun's line moves to the end
        self.records[result.id] = result.to_dict()
        body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.records.values())
        write_atomic_bytes(self.path, body.encode("utf-8"), mode=USER_FILE)
