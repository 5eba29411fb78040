"""Atomic file writes: a temp file in the same folder, fsync, then `os.replace`.

Readers see the old file or the new one, never half of one. The one helper for
Wyckoff's own files (private by default, `storage/atomic.py`) and the files the tools
write for the user (which get the usual permissions). Imports nothing of ours.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

USER_FILE = None  # a new file gets 0o666 less the umask, as any program's would


def write_atomic_bytes(path: Path, data: bytes, *, mode: int | None = 0o600) -> None:
    """Replace `path` with `data`. An existing file keeps its permission bits; a new
    one gets `mode` (`USER_FILE`: 0o666 less the umask)."""
    existing: int | None = None
    with contextlib.suppress(FileNotFoundError):
        existing = path.stat().st_mode & 0o7777
    tmp = path.parent / f".{path.name[:40]}.{secrets.token_hex(6)}.wyckoff-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if existing is not None:
            os.chmod(tmp, existing)
        elif mode is not None:
            os.chmod(tmp, mode)  # exactly `mode`, whatever the umask
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
