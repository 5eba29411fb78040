"""Split streaming Markdown into top-level blocks, incrementally.

The transcript renders each *finished* block once and caches the result, so the
splitter must never call a block finished while more text could still change how
it renders. Rules (on complete lines only; the unterminated last line is held back):

- Blocks are separated by blank lines. Blank lines are separators, never content,
  except inside a fenced code block, a list, or an indented code block.
- A fenced code block (three or more backticks or tildes, at any indentation) keeps
  everything up to its closing fence (same character, at least as long, nothing
  after it but spaces) in the current block, blank lines included.
- A list, and an indented code block, continue across blank lines: after a blank
  line the block is only finished when the next non-blank line is *not* a list
  marker or an indented line (for a list), or not indented by four or more spaces
  (for indented code). Until that line arrives the block stays open.
- An ATX heading (``# Title``) is a block of its own: it closes the block before it
  and is finished as soon as its line ends.

Because the splitter only ever decides on complete lines, the finished block list
depends only on the text, never on how it was chunked into deltas. Joining the
blocks with one blank line between them parses to the same Markdown as the input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["BlockSplitter", "last_list_item", "split_blocks"]

_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^( {0,3})#{1,6}(?:[ \t]|$)")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_INDENTED_CODE = re.compile(r"^(?: {4}|\t)")
_BULLET_ITEM = re.compile(r"([-+*])(?:[ \t]|$)")
_THEMATIC_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")

_PLAIN = 0
_LIST = 1
_INDENTED = 2


@dataclass(frozen=True, slots=True)
class _Fence:
    char: str
    length: int

    def closes(self, line: str) -> bool:
        stripped = line.strip()
        return len(stripped) >= self.length and stripped == self.char * len(stripped)


def _is_blank(line: str) -> bool:
    return not line.strip()


def _open_fence(line: str) -> _Fence | None:
    match = _FENCE_OPEN.match(line)
    if match is None:
        return None
    marker, info = match.groups()
    if marker[0] == "`" and "`" in info:
        return None  # a backtick fence's info string may not contain backticks
    return _Fence(marker[0], len(marker))


def _kind_of(first_line: str) -> int:
    if _LIST_ITEM.match(first_line):
        return _LIST
    if _INDENTED_CODE.match(first_line):
        return _INDENTED
    return _PLAIN


class BlockSplitter:
    """Incremental Markdown block splitter.

    ``feed(text)`` is cheap (it only looks at completed lines); ``finished`` grows as
    blocks close; ``tail`` is the source of the block still growing (including the
    unterminated last line), or ``""``. ``close()`` ends the stream: whatever is
    open becomes the last finished block.
    """

    __slots__ = ("_block", "_closed", "_fence", "_kind", "_partial", "_pending_blanks", "finished")

    def __init__(self) -> None:
        self.finished: list[str] = []
        """Source text of each finished block, in order (without separating blank lines)."""
        self._block: list[str] = []
        self._kind = _PLAIN
        self._fence: _Fence | None = None
        self._pending_blanks = 0
        self._partial = ""
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def in_fence(self) -> bool:
        """True while a fenced code block is open (its closing fence not yet seen)."""
        return self._fence is not None

    @property
    def tail(self) -> str:
        """Source of the open block: its complete lines plus the unterminated last line."""
        if self._partial and self._block:
            if self._pending_blanks:
                return "\n".join(self._block) + "\n" * (self._pending_blanks + 1) + self._partial
            return "\n".join(self._block) + "\n" + self._partial
        if self._block:
            return "\n".join(self._block)
        return self._partial if self._partial.strip() else ""

    def feed(self, text: str) -> int:
        """Add streamed text. Returns how many blocks this call finished."""
        if self._closed:
            raise RuntimeError("the stream is closed")
        if "\n" not in text:
            self._partial += text
            return 0
        before = len(self.finished)
        lines = (self._partial + text).split("\n")
        self._partial = lines.pop()
        for line in lines:
            self._line(line.rstrip("\r"))
        return len(self.finished) - before

    def close(self) -> int:
        """End the stream: the open block (if any) is finished. Returns blocks finished."""
        if self._closed:
            return 0
        before = len(self.finished)
        if self._partial:
            self._line(self._partial.rstrip("\r"))
            self._partial = ""
        self._finish()
        self._closed = True
        return len(self.finished) - before

    # -- line state machine -------------------------------------------------

    def _finish(self) -> None:
        if self._block:
            self.finished.append("\n".join(self._block))
        self._block = []
        self._kind = _PLAIN
        self._fence = None
        self._pending_blanks = 0

    def _start(self, line: str) -> None:
        self._block = [line]
        self._kind = _kind_of(line)
        self._fence = _open_fence(line)

    def _line(self, line: str) -> None:
        if self._fence is not None:
            # Inside a fenced code block everything belongs to the block.
            self._block.append(line)
            if self._fence.closes(line):
                self._fence = None
            return
        if _is_blank(line):
            if self._block:
                if self._kind == _PLAIN:
                    self._finish()
                else:
                    self._pending_blanks += 1
            return
        if not self._block:
            self._start(line)
            self._finish_if_heading(line)
            return
        if self._pending_blanks:
            if self._continues_after_blank(line):
                self._block.extend([""] * self._pending_blanks)
                self._pending_blanks = 0
            else:
                self._finish()
                self._start(line)
                self._finish_if_heading(line)
                return
        elif self._is_heading(line):
            self._finish()
            self._start(line)
            self._finish()
            return
        self._block.append(line)
        self._fence = _open_fence(line)
        if self._kind == _PLAIN and _LIST_ITEM.match(line):
            self._kind = _LIST  # a list interrupting a paragraph

    def _is_heading(self, line: str) -> bool:
        match = _HEADING.match(line)
        if match is None:
            return False
        # Inside a list an indented "# x" belongs to the list item.
        return not (self._kind == _LIST and match.group(1))

    def _finish_if_heading(self, line: str) -> None:
        if _HEADING.match(line):
            self._finish()

    def _continues_after_blank(self, line: str) -> bool:
        if self._kind == _LIST:
            return bool(_LIST_ITEM.match(line)) or line[0] in " \t"
        return bool(_INDENTED_CODE.match(line))


def split_blocks(text: str) -> list[str]:
    """All blocks of a complete Markdown text (the stream fed at once, then closed)."""
    splitter = BlockSplitter()
    splitter.feed(text)
    splitter.close()
    return splitter.finished


def last_list_item(source: str) -> int:
    """Where the last item of `source` starts, when `source` is one bullet list of two or
    more items; 0 otherwise. One bullet list: each line at the margin is an item's first
    line with the same bullet (`- `, `* ` or `+ `, not a thematic break such as `- - -`),
    every other line indented or blank. Rendering such a list's items before that one
    and that item alone gives the lines of the whole list (markdown_stream.py renders a
    growing list so: its finished items once)."""
    bullet = ""
    start = offset = 0
    for line in source.split("\n"):
        if line and not line[0].isspace():
            match = _BULLET_ITEM.match(line)
            if match is None or _THEMATIC_BREAK.match(line) or bullet not in ("", match.group(1)):
                return 0
            bullet, start = match.group(1), offset
        offset += len(line) + 1
    return start
