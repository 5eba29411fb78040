"""Splitting a shell command into the simple commands it runs, for the policy.

`a && b`, `a || b`, `a; b`, `a | b`, `a & b` and newlines separate commands; the
commands inside `$(...)`, backticks, `<(...)`, `>(...)` and `( ... )` subshells are
commands of their own (the outer one keeps its text). Quotes and backslashes are
honoured, so `echo "a; b"` is one command. Whitespace outside quotes is collapsed and
shell keywords that start a command (`then`, `do`, `!`, …) are dropped, so rules match
the command itself.

When the text cannot be followed with confidence (unbalanced quotes or parentheses, a
function definition) the result is marked `complete=False`: the policy then never
allows it by rule, only by asking (or yolo).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from functools import lru_cache

_KEYWORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "{", "}", "done", "fi"})


@dataclass(frozen=True, slots=True)
class SplitCommand:
    parts: tuple[str, ...]  # the simple commands, normalised, in order of appearance
    complete: bool  # False when the command could not be followed with confidence


@lru_cache(maxsize=1024)
def split_command(command: str) -> SplitCommand:
    scanner = _Scanner(command)
    scanner.parse_list(None)
    parts = tuple(p for p in scanner.parts if p)
    return SplitCommand(parts, scanner.complete)


def normalize(command: str) -> str:
    """The command with whitespace runs outside quotes collapsed to one space."""
    out: list[str] = []
    quote = ""
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c == "\\" and quote != "'":
            out.append(command[i : i + 2])
            i += 2
            continue
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c.isspace():
            if out and out[-1] != " ":
                out.append(" ")
            i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out).strip()


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.parts: list[str] = []
        self.complete = True

    # Each command part is built as a list of chunks; whitespace becomes one " ".
    def _flush(self, current: list[str]) -> None:
        text = "".join(current).strip()
        current.clear()
        words = text.split(" ")
        while words and words[0] in _KEYWORDS:
            words.pop(0)
        text = " ".join(words).strip()
        if text:
            self.parts.append(text)

    def _separator(self, current: list[str], token: str) -> None:
        del token
        self._flush(current)

    def parse_list(self, closer: str | None) -> None:
        """Scan commands until `closer` (")" or "`") or the end of the text."""
        text = self.text
        current: list[str] = []
        n = len(text)
        while self.i < n:
            c = text[self.i]
            nxt = text[self.i + 1] if self.i + 1 < n else ""
            if closer is not None and c == closer:
                self.i += 1
                self._flush(current)
                return
            if c == "\\":
                if nxt == "\n":
                    self._space(current)
                else:
                    current.append(text[self.i : self.i + 2])
                self.i += 2
            elif c == "'":
                end = text.find("'", self.i + 1)
                if end < 0:
                    self.complete = False
                    end = n - 1
                current.append(text[self.i : end + 1])
                self.i = end + 1
            elif c == '"':
                current.append(self._double_quoted())
            elif c == "$" and nxt == "(" and text[self.i + 2 : self.i + 3] == "(":
                current.append(self._arithmetic())
            elif (c == "$" or c in "<>") and nxt == "(":
                start = self.i
                self.i += 2
                self._nested(")")
                current.append(text[start : self.i])
            elif c == "`":
                start = self.i
                self.i += 1
                self._nested("`")
                current.append(text[start : self.i])
            elif c == "#" and (not current or current[-1] == " "):
                end = text.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c in " \t":
                self._space(current)
                self.i += 1
            elif c in ";\n":
                self._separator(current, c)
                self.i += 1
            elif c == "&":
                if nxt == "&":
                    self._separator(current, "&&")
                    self.i += 2
                elif nxt == ">" or (current and current[-1] in ("<", ">")):
                    current.append(c)  # `&>file`, `2>&1`
                    self.i += 1
                else:
                    self._separator(current, "&")
                    self.i += 1
            elif c == "|":
                token = "||" if nxt == "|" else "|&" if nxt == "&" else "|"
                self._separator(current, token)
                self.i += len(token)
            elif c == "(":
                if "".join(current).strip():
                    self.complete = False  # a function definition or other syntax we do not follow
                    current.append(c)
                    self.i += 1
                else:
                    self.i += 1
                    self.parse_list(")")
            elif c == ")":
                self.complete = False  # unbalanced
                current.append(c)
                self.i += 1
            else:
                current.append(c)
                self.i += 1
        if closer is not None:
            self.complete = False  # the text ended inside $( … ) or ` … `
        self._flush(current)

    def _space(self, current: list[str]) -> None:
        if current and current[-1] != " ":
            current.append(" ")

    def _nested(self, closer: str) -> None:
        self.parse_list(closer)

    def _double_quoted(self) -> str:
        text, n = self.text, len(self.text)
        start = self.i
        self.i += 1
        while self.i < n:
            c = text[self.i]
            if c == "\\":
                self.i += 2
            elif c == '"':
                self.i += 1
                return text[start : self.i]
            elif c == "$" and text[self.i + 1 : self.i + 2] == "(":
                if text[self.i + 2 : self.i + 3] == "(":
                    self._arithmetic()
                else:
                    self.i += 2
                    self._sub_scan(")")
            elif c == "`":
                self.i += 1
                self._sub_scan("`")
            else:
                self.i += 1
        self.complete = False
        return text[start:]

    def _sub_scan(self, closer: str) -> None:
        """Commands inside a substitution within double quotes."""
        inner = _Scanner(self.text)
        inner.i = self.i
        inner.parse_list(closer)
        self.i = inner.i
        self.parts.extend(inner.parts)
        self.complete = self.complete and inner.complete

    def _arithmetic(self) -> str:
        end = self.text.find("))", self.i + 3)
        if end < 0:
            self.complete = False
            end = len(self.text) - 2
        start = self.i
        self.i = end + 2
        return self.text[start : self.i]


def words(part: str) -> list[str]:
    """The shell words of one simple command (quotes removed); a plain split when the
    quoting is broken."""
    try:
        return shlex.split(part, comments=False, posix=True)
    except ValueError:
        return part.split()
