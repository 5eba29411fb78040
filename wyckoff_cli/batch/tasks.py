"""The task file: one JSON object a line, checked into `Task`s.

A line that cannot be a task is not fatal: it becomes a `BadLine` naming its line
number, recorded as a failed result while the other tasks run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import UsageError

PERMISSION_MODES = ("default", "plan", "auto-edit", "auto", "yolo")
DEFAULT_TIMEOUT_S = 1800.0
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_KEYS = {
    "id",
    "repo",
    "ref",
    "prompt",
    "model",
    "permission_mode",
    "max_budget_usd",
    "timeout_s",
    "setup",
    "test",
}


@dataclass(frozen=True)
class Task:
    id: str
    repo: str  # a local path (made absolute against the task file's folder) or a git URL
    prompt: str
    line: int
    ref: str | None = None
    model: str | None = None
    permission_mode: str | None = None
    max_budget_usd: float | None = None
    timeout_s: float = DEFAULT_TIMEOUT_S
    setup: tuple[str, ...] = field(default=())
    test: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "repo": self.repo,
            "prompt": self.prompt,
            "line": self.line,
            "ref": self.ref,
            "model": self.model,
            "permission_mode": self.permission_mode,
            "max_budget_usd": self.max_budget_usd,
            "timeout_s": self.timeout_s,
            "setup": list(self.setup),
            "test": self.test,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        return cls(**{**data, "setup": tuple(data["setup"])})


@dataclass(frozen=True)
class BadLine:
    """A line that is not a task: recorded as failed under `id` (its own id when it
    has a usable one, else `line-N`)."""

    id: str
    line: int
    reason: str


class TaskError(ValueError):
    pass


def read_tasks(path: Path) -> list[Task | BadLine]:
    """Every line of the task file, in order (blank lines skipped). Raises
    `UsageError` only when the file itself cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"no task file {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"cannot read the task file {path}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    found: list[Task | BadLine] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        item = parse_line(raw, number, path.parent)
        if isinstance(item, Task):
            if item.id in first_line:
                item = BadLine(
                    f"line-{number}",
                    number,
                    f"line {number}: duplicate id {item.id!r} (first on line {first_line[item.id]})",
                )
            else:
                first_line[item.id] = number
        found.append(item)
    return found


def parse_line(raw: str, number: int, base: Path) -> Task | BadLine:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        return BadLine(f"line-{number}", number, f"line {number}: not JSON: {exc.msg} (column {exc.colno})")
    raw_id = data.get("id") if isinstance(data, dict) else None
    fallback = raw_id if isinstance(raw_id, str) and _ID.match(raw_id) else f"line-{number}"
    try:
        return _task(data, number, base)
    except TaskError as exc:
        return BadLine(fallback, number, f"line {number}: {exc}")


def _task(data: Any, number: int, base: Path) -> Task:
    if not isinstance(data, dict):
        raise TaskError(f"expected a JSON object, got {type(data).__name__}")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise TaskError(f"unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(_KEYS))})")
    task_id = _text(data, "id", required=True)
    assert task_id is not None
    if not _ID.match(task_id) or task_id in {".", ".."}:
        raise TaskError(
            f"id {task_id!r} must be 1-128 letters, digits, '.', '_' or '-' (it names a folder and a file)"
        )
    repo = _text(data, "repo", required=True)
    prompt = _text(data, "prompt", required=True)
    assert repo is not None and prompt is not None
    if not prompt.strip():
        raise TaskError("prompt is empty")
    mode = _text(data, "permission_mode")
    if mode is not None and mode not in PERMISSION_MODES:
        raise TaskError(f"permission_mode {mode!r} is not one of {', '.join(PERMISSION_MODES)}")
    setup = data.get("setup", [])
    if not isinstance(setup, list) or not all(isinstance(c, str) and c.strip() for c in setup):
        raise TaskError("setup must be a list of command strings")
    timeout = _number(data, "timeout_s")
    return Task(
        id=task_id,
        repo=_repo(repo, base),
        prompt=prompt,
        line=number,
        ref=_text(data, "ref"),
        model=_text(data, "model"),
        permission_mode=mode,
        max_budget_usd=_number(data, "max_budget_usd"),
        timeout_s=DEFAULT_TIMEOUT_S if timeout is None else timeout,
        setup=tuple(setup),
        test=_text(data, "test"),
    )


def _text(data: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise TaskError(f"missing {key!r}")
        return None
    if not isinstance(value, str) or (required and not value):
        raise TaskError(f"{key} must be a non-empty string, got {json.dumps(value)[:40]}")
    return value


def _number(data: dict[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise TaskError(f"{key} must be a positive number, got {json.dumps(value)[:40]}")
    return float(value)


def _repo(repo: str, base: Path) -> str:
    """A URL (`scheme://`, `user@host:path`) as it is; a path made absolute."""
    if "://" in repo or re.match(r"^[\w.-]+@[\w.-]+:", repo):
        return repo
    path = Path(repo).expanduser()
    return str(path if path.is_absolute() else (base / path).resolve())
