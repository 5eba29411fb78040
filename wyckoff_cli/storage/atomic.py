"""Wyckoff's own files, written atomically and privately (see `core/atomic.py`)."""

from __future__ import annotations

from pathlib import Path

from wyckoff_cli.core.atomic import write_atomic_bytes


def write_atomic(path: Path, text: str, *, mode: int = 0o600) -> None:
    """Replace `path` with `text` (UTF-8), creating its folder and missing parents
    (0700 each) if needed."""
    from wyckoff_cli.storage.paths import ensure_private_dir

    ensure_private_dir(path.parent)
    write_atomic_bytes(path, text.encode("utf-8"), mode=mode)
