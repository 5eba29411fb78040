"""What a grep search found, and how it is shown to the model (both back-ends).

Content results are grouped by file (sorted by path), each line as `NUM:text` for a
match and `NUM-text` for context, `--` between separate blocks, as ripgrep prints with
`--heading`. Output stays under `OUTPUT_CHARS`; what is left out is counted.

A search can match in tens of thousands of files while a few dozen are shown, so a
`Found` carries the totals and only the first files (by path) in full; rg results
keep names and lines as bytes until a file is actually shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

OUTPUT_CHARS = 6_500
LINE_CHARS = 500
FILES_CAP = 300  # rows shown by the `files` and `count` outputs
CONTENT_FILES = 1_000  # files materialised for `content` (more never fit in OUTPUT_CHARS)
Mode = Literal["content", "files", "count"]
Line = tuple[int | None, str, bool]  # (line number, or None for a "--" separator; text; is a match)


class FileHits:
    """Matches in one file: `count` matching lines, and for content output the lines
    (decoded from rg's raw `NUM:text` bytes on first use)."""

    __slots__ = ("_path", "_path_bytes", "count", "lines", "raw")

    def __init__(
        self, path: str | bytes, count: int = 0, lines: list[Line] | None = None, raw: bytes = b""
    ) -> None:
        self._path: str | None = path if isinstance(path, str) else None
        self._path_bytes: bytes | None = path if isinstance(path, bytes) else None
        self.count = count
        self.lines: list[Line] = lines if lines is not None else []
        self.raw = raw

    @property
    def path(self) -> str:
        """As shown: workspace-relative, or absolute outside the workspace."""
        if self._path is None:
            assert self._path_bytes is not None
            self._path = self._path_bytes.decode("utf-8", errors="replace")
        return self._path

    def sort_key(self) -> bytes:
        """UTF-8 bytes sort like the decoded text, so both back-ends agree."""
        if self._path_bytes is not None:
            return self._path_bytes
        return self.path.encode("utf-8", errors="surrogateescape")

    def display_lines(self) -> list[Line]:
        if self.raw and not self.lines:
            decoded = map(decode_rg_line, self.raw.split(b"\n"))
            self.lines = [line for line in decoded if line is not None]
        return self.lines


def decode_rg_line(raw: bytes) -> Line | None:
    """One line of rg output after the file name: `12:text`, `12-text` or `--`."""
    if raw == b"--":
        return (None, "", False)
    digits = 0
    while digits < len(raw) and 48 <= raw[digits] <= 57:
        digits += 1
    if not digits or digits >= len(raw):
        return None
    text = raw[digits + 1 :].decode("utf-8", errors="replace").rstrip("\r")
    return (int(raw[:digits]), text, raw[digits] == 58)  # 58 is ":"


@dataclass(frozen=True, slots=True)
class Found:
    files: list[FileHits]  # sorted by path: all files, or at least as many as can be shown
    total_files: int
    total_lines: int  # matching lines

    @classmethod
    def of(cls, hits: list[FileHits]) -> Found:
        kept = sorted((h for h in hits if h.count), key=FileHits.sort_key)
        return cls(kept, len(kept), sum(h.count for h in kept))


@dataclass
class GrepRequest:
    pattern: str
    case: Literal["sensitive", "insensitive", "smart"]
    context: int
    mode: Mode
    glob: str | None


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def cut_line(text: str) -> str:
    if len(text) > LINE_CHARS:
        return text[:LINE_CHARS] + " [… line cut]"
    return text


def format_results(found: Found, request: GrepRequest, where: str, *, notes: list[str]) -> str:
    if not found.total_files:
        return "\n".join([f"No matches for {request.pattern!r} in {where}.", *notes])
    files = plural(found.total_files, "file")
    if request.mode == "files":
        verb = "matches" if found.total_files == 1 else "match"
        head = f"{files} {verb} {request.pattern!r} (sorted by path):"
        return _capped(head, [h.path for h in found.files[:FILES_CAP]], found.total_files, notes)
    head = f"{plural(found.total_lines, 'matching line')} in {files}:"
    if request.mode == "count":
        rows = [f"{h.path}: {h.count}" for h in found.files[:FILES_CAP]]
        return _capped(head, rows, found.total_files, notes)
    return _content(found, head, notes)


def _content(found: Found, head: str, notes: list[str]) -> str:
    out = [head]
    used = len(head) + 1
    shown_lines = shown_files = 0
    for hit in found.files:
        block = ["", hit.path]
        size = len(hit.path) + 2
        matches = 0
        for number, text, is_match in hit.display_lines():
            line = "--" if number is None else f"{number}{':' if is_match else '-'}{cut_line(text)}"
            if used + size + len(line) + 1 > OUTPUT_CHARS:
                break
            block.append(line)
            size += len(line) + 1
            matches += 1 if is_match else 0
        if matches:
            out.extend(block)
            used += size
            shown_lines += matches
            shown_files += 1
        if matches < hit.count:
            break  # this file did not fit whole: stop here
    more_lines = found.total_lines - shown_lines
    if more_lines:
        more_files = found.total_files - shown_files
        out.append("")
        out.append(
            f"[… {more_lines:,} more matching lines"
            + (f" in {more_files:,} more files" if more_files else "")
            + " not shown. Narrow the search with `path` or `glob`, or use output='files' "
            "or 'count' for an overview.]"
        )
    return "\n".join(out + notes)


def _capped(head: str, rows: list[str], total: int, notes: list[str]) -> str:
    out = [head]
    used = len(head) + 1
    for row in rows:
        if used + len(row) + 1 > OUTPUT_CHARS:
            break
        out.append(row)
        used += len(row) + 1
    shown = len(out) - 1
    if shown < total:
        out.append(f"[… {total - shown:,} more files not shown: narrow the search with `path` or `glob`.]")
    return "\n".join(out + notes)
