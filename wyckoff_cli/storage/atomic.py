"""Wyckoff's own files, written atomically and privately (see `core/atomic.py`)."""

from __future__ import annotations

from pathlib import Path

from wyckoff_cli.core.atomic import write_atomic_bytes


def write_atomic(path: Path, text: str, *, mode: int = 0o600) -> None:
    """Replace `path` with `text` (UTF-8), creating its folder (0700) if needed."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic_bytes(path, text.encode("utf-8"), mode=mode)
