"""Large tool results go to disk; the model gets a preview and the exact path."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

OFFLOAD_THRESHOLD = 8_000
"""Results longer than this many characters are offloaded (`RuntimeSettings.offload_threshold`)."""

HEAD_CHARS = 3_000
TAIL_CHARS = 1_500

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def offload_result(
    text: str, results_dir: Path, call_id: str, tool_name: str, redact: Callable[[str], str] | None = None
) -> tuple[str, Path]:
    """Write `text` (with secrets removed by `redact`) to `results_dir` and return
    (preview for the model, path)."""
    results_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = results_dir / f"{_UNSAFE.sub('_', tool_name)}-{_UNSAFE.sub('_', call_id)}.txt"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as handle:
        handle.write(redact(text) if redact is not None else text)
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    head = text[:HEAD_CHARS]
    tail = text[-TAIL_CHARS:]
    omitted = len(text) - len(head) - len(tail)
    preview = (
        f"{head}\n\n[… {omitted} characters omitted …]\n\n{tail}\n\n"
        f"[The full result ({len(text)} characters, {lines} lines) was saved to {path}. "
        f"Read it in pages with read_file(path={str(path)!r}, offset=LINE, limit=N) "
        "instead of asking for it again.]"
    )
    return preview, path
