"""The prompt's history across runs: one JSON string per line, in a private file."""

from __future__ import annotations

import json
import os
from pathlib import Path


def load_input_history(path: Path | None, limit: int = 500) -> list[str]:
    if path is None:
        return []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()[-limit:]
    except OSError:
        return []
    entries: list[str] = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, str):
            entries.append(value)
    return entries


def save_input_history(path: Path | None, text: str) -> None:
    if path is None or not text.strip():
        return
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(text) + "\n")
