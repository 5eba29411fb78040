"""What run_shell writes to disk has secrets removed, even when they arrive split."""

from __future__ import annotations

from pathlib import Path

from wyckoff_cli.tools.process import INLINE_CHARS, OutputCapture

SECRET = "sk-ant-api03-" + "A" * 40


def test_capture_redacts_whole_lines_across_chunk_boundaries(tmp_path: Path) -> None:
    capture = OutputCapture(tmp_path, "run_shell-1", lambda text: text.replace(SECRET, "[REDACTED]"))
    capture.add("x" * (INLINE_CHARS + 10) + "\n")
    capture.add(f"key: {SECRET[:10]}")  # the secret is split across two chunks
    capture.add(f"{SECRET[10:]} end\nlast line without newline {SECRET}")
    capture.close()
    assert capture.path is not None
    written = capture.path.read_text()
    assert SECRET not in written
    assert written.endswith("key: [REDACTED] end\nlast line without newline [REDACTED]")
    assert capture.path.stat().st_mode & 0o777 == 0o600
