"""Text files as the file tools see them: decoding, newline style, atomic writes, diffs.

Files are decoded as UTF-8 (a BOM is kept); bytes that are not valid UTF-8 are kept
through an edit with `surrogateescape`, so editing one line of a Latin-1 file never
rewrites the rest, and shown as U+FFFD when read.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from wyckoff_cli.core import atomic

BINARY_SNIFF = 8_192
UTF8_BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
MAX_DIFF_CHARS = 60_000


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first block (and no UTF-16 BOM) means binary, as git does."""
    if head.startswith(UTF16_BOMS):
        return False
    return b"\x00" in head[:BINARY_SNIFF]


@dataclass(frozen=True, slots=True)
class TextFile:
    """A decoded file: `text` uses `\\n` newlines; the rest restores the original."""

    text: str
    newline: str  # "\n" or "\r\n"
    bom: bytes
    encoding: str  # "utf-8" or "utf-16"
    valid_utf8: bool

    def encode(self, text: str) -> bytes:
        """`text` (with `\\n` newlines) in this file's newline style and encoding."""
        if self.newline != "\n":
            text = text.replace("\r\n", "\n").replace("\n", self.newline)
        if self.encoding == "utf-16":
            return self.bom + text.encode("utf-16-le" if self.bom == b"\xff\xfe" else "utf-16-be")
        return self.bom + text.encode("utf-8", errors="surrogateescape")


def decode_file(data: bytes) -> TextFile:
    """Decode `data`, noting its newline style. CRLF counts only when every newline is CRLF."""
    bom = b""
    encoding = "utf-8"
    if data.startswith(UTF8_BOM):
        bom, data = UTF8_BOM, data[3:]
    elif data.startswith(UTF16_BOMS):
        bom, data = data[:2], data[2:]
        encoding = "utf-16"
    if encoding == "utf-16":
        codec = "utf-16-le" if bom == b"\xff\xfe" else "utf-16-be"
        text = data.decode(codec, errors="replace")
        valid = True
    else:
        try:
            text = data.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            text = data.decode("utf-8", errors="surrogateescape")
            valid = False
    crlf = text.count("\r\n")
    newline = "\r\n" if crlf and crlf == text.count("\n") else "\n"
    if newline == "\r\n":
        text = text.replace("\r\n", "\n")
    return TextFile(text, newline, bom, encoding, valid)


def show(text: str) -> str:
    """Replace undecodable bytes (surrogate escapes) by U+FFFD."""
    if not any("\udc80" <= ch <= "\udcff" for ch in text):
        return text
    return "".join("\ufffd" if "\udc80" <= ch <= "\udcff" else ch for ch in text)


def write_atomic_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically; an existing file keeps its permission
    bits, a new one gets 0o666 less the umask (it is the user's file)."""
    atomic.write_atomic_bytes(path, data, mode=atomic.USER_FILE)


def unified_diff(old: str, new: str, label: str) -> str:
    """A unified diff of two texts (a new file shows whole, as all additions)."""
    old_lines = show(old).splitlines(keepends=True)
    new_lines = show(new).splitlines(keepends=True)
    diff = difflib.unified_diff(
        old_lines,
        new_lines,
        fromfile=f"a/{label}" if old_lines else "/dev/null",
        tofile=f"b/{label}",
        n=3,
    )
    lines = [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in diff]
    text = "".join(lines)
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + f"\n[… diff cut at {MAX_DIFF_CHARS} characters …]\n"
    return text


def count_changes(diff: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed
