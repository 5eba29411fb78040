"""The YAML of agent files' front matter, as Claude Code's published agents write it.

Read: `key: value` lines; plain scalars, also running over indented lines (folded) and
holding `: ` (Claude Code quotes such a value and reads it again, so
`description: Use it when... Context: ...` is one string); single- and double-quoted
strings (escapes, `''`, over several lines); `|` / `>` block scalars (chomping `-` / `+`,
an indentation digit); `[a, "b"]` flow lists (over several lines) and `- item` lists;
`#` comments. A key with nothing on its line takes the indented lines below it as its
text (as Prettier formats a long description).

One shape is not YAML but is what anthropics' own plugins publish (plugin-dev,
pr-review-toolkit): a plain `description` that ends with `Examples:` or opens an
`<example>` and then runs on over unindented lines (blank lines, `<example>` blocks,
`Context:` / `user:` / `assistant:` lines) up to the next key an agent file uses. That
run-on text is the description. Any other unindented line that is not `key: value`
stays an error naming its line, and so does a key that agent files do not use.
"""

from __future__ import annotations

import re

from wyckoff_cli.context.frontmatter import runs_on

Value = str | list[str]

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)\s*:(?:\s(.*)|$)")
_BLOCK = re.compile(r"([|>])([+-]?)([1-9]?)([+-]?)\s*(#.*)?")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", '"': '"', "\\": "\\", "/": "/", " ": " ", "e": "\x1b"}


class YamlError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def read_mapping(
    lines: list[str], first_line: int, keys: set[str]
) -> tuple[dict[str, Value], dict[str, int]]:
    """The front matter's mapping and the line of each key. `keys` are the keys an agent
    file may use; any other top-level key is an error (raised by the caller's check)."""
    return _Reader(lines, first_line, keys).read()


class _Reader:
    def __init__(self, lines: list[str], first_line: int, keys: set[str]) -> None:
        self.lines = lines
        self.first = first_line
        self.keys = keys
        self.i = 0

    def number(self, index: int | None = None) -> int:
        return self.first + (self.i if index is None else index)

    def read(self) -> tuple[dict[str, Value], dict[str, int]]:
        data: dict[str, Value] = {}
        where: dict[str, int] = {}
        while self.i < len(self.lines):
            raw = self.lines[self.i]
            line = strip_comment(raw).rstrip()
            if not line.strip():
                self.i += 1
                continue
            if line.lstrip().startswith("- ") or line.strip() == "-":
                raise YamlError(self.number(), "a `- item` line must follow a `key:` line with no value")
            if line[0].isspace():
                raise YamlError(self.number(), f"unexpected indented line {line.strip()!r}")
            match = _KEY.fullmatch(line)
            if match is None:
                raise YamlError(self.number(), f"expected `key: value`, got {line.strip()!r}")
            key = match.group(1)
            if key in data:
                raise YamlError(self.number(), f"`{key}` is given twice")
            where[key] = self.number()
            text = raw.split(":", 1)[1].strip()  # the value as written (comments handled per kind)
            self.i += 1
            data[key] = self.value(key, text, where[key])
        return data, where

    def value(self, key: str, text: str, line: int) -> Value:
        if not strip_comment(text).strip():
            return self.below(key)
        if text.startswith("["):
            return self.flow_list(key, text, line)
        if text[0] in "\"'":
            return self.quoted(text, line)
        block = _BLOCK.fullmatch(text)
        if block is not None:
            return self.block(block)
        return self.plain(strip_comment(text).strip())

    def following(self) -> list[tuple[int, str]]:
        """The indented or blank lines after the current one (index, line)."""
        taken: list[tuple[int, str]] = []
        j = self.i
        while j < len(self.lines) and (not self.lines[j].strip() or self.lines[j][0].isspace()):
            taken.append((j, self.lines[j]))
            j += 1
        while taken and not taken[-1][1].strip():
            taken.pop()  # trailing blank lines belong to no one
        return taken

    def below(self, key: str) -> Value:
        """A key with no value on its line: a `- item` list, indented text, or nothing."""
        items: list[str] = []
        j = self.i
        while j < len(self.lines):
            stripped = strip_comment(self.lines[j]).strip()
            if not stripped:
                j += 1
                continue
            if stripped == "-" or stripped.startswith("- "):
                items.append(unquote(stripped[1:].strip()))
                j += 1
                continue
            break
        if items:
            self.i = j
            return items
        taken = self.following()
        if not taken:
            return []
        self.i = taken[-1][0] + 1
        if key not in self.keys:
            return ""  # an ignored key's nested mapping (hooks:, mcpServers:): skipped
        return fold([strip_comment(line).strip() for _, line in taken])

    def plain(self, first: str) -> str:
        parts = [first]
        taken = self.following()
        if taken:
            self.i = taken[-1][0] + 1
            parts += [strip_comment(line).strip() for _, line in taken]
        if runs_on(" ".join(parts)):
            parts += self.run_on()
        return fold(parts)

    def run_on(self) -> list[str]:
        """Claude Code's published examples: unindented lines up to the next known key."""
        parts: list[str] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            match = _KEY.fullmatch(line.rstrip())
            if match is not None and match.group(1) in self.keys:
                break
            parts.append(line.strip())
            self.i += 1
        while parts and not parts[-1]:
            parts.pop()
        return parts

    def block(self, header: re.Match[str]) -> str:
        style, chomp = header.group(1), header.group(2) or header.group(4)
        taken = self.following()
        self.i = taken[-1][0] + 1 if taken else self.i
        texts = [line for _, line in taken]
        if header.group(3):
            indent = int(header.group(3))
        else:
            indent = min((len(t) - len(t.lstrip()) for t in texts if t.strip()), default=0)
        body = [t[indent:] if t.strip() else "" for t in texts]
        text = "\n".join(body) if style == "|" else fold(body, keep_indented=True)
        if chomp == "-":
            return text.rstrip("\n")
        return text.rstrip("\n") + "\n"  # clip and keep alike: trailing blank lines were not taken

    def quoted(self, text: str, line: int) -> str:
        quote = text[0]
        collected = text[1:]
        while True:
            end = closing_quote(collected, quote)
            if end is not None:
                break
            if self.i >= len(self.lines) or (self.lines[self.i].strip() == "---"):
                kind = "double" if quote == '"' else "single"
                raise YamlError(line, f"the {kind}-quoted string is not closed")
            collected += "\n" + self.lines[self.i]
            self.i += 1
        rest = strip_comment(collected[end + 1 :]).strip()
        if rest:
            raise YamlError(line, f"unexpected text {rest!r} after the closing quote")
        inner = fold_quoted(collected[:end])
        if quote == "'":
            return inner.replace("''", "'")
        return unescape(inner, line)

    def flow_list(self, key: str, text: str, line: int) -> list[str]:
        collected = strip_comment(text).strip()
        while not collected.endswith("]"):
            if self.i >= len(self.lines) or not self.lines[self.i][:1].isspace():
                raise YamlError(line, f"`{key}`: the list is not closed by `]`")
            collected += " " + strip_comment(self.lines[self.i]).strip()
            self.i += 1
        inner = collected[1:-1].strip()
        return [unquote(part.strip()) for part in split_flow(inner)] if inner else []


def fold(parts: list[str], keep_indented: bool = False) -> str:
    """YAML line folding: lines join with a space, each blank line is a newline."""
    out = ""
    blank = 0
    previous_indented = False
    for part in parts:
        if not part.strip():
            blank += 1
            continue
        indented = keep_indented and part[:1].isspace()
        if out:
            if blank:
                out += "\n" * blank
            else:
                out += "\n" if indented or previous_indented else " "
        out += part if keep_indented else part.strip()
        blank, previous_indented = 0, indented
    return out


def fold_quoted(text: str) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    middle = [lines[0].rstrip(), *(line.strip() for line in lines[1:-1]), lines[-1].lstrip()]
    return fold(middle) if any(middle) else ""


def closing_quote(text: str, quote: str) -> int | None:
    i = 0
    while i < len(text):
        ch = text[i]
        if quote == '"' and ch == "\\":
            i += 2
            continue
        if ch == quote:
            if quote == "'" and text[i + 1 : i + 2] == "'":
                i += 2
                continue
            return i
        i += 1
    return None


def unescape(text: str, line: int) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        code = text[i + 1 : i + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code in ("x", "u", "U"):
            size = {"x": 2, "u": 4, "U": 8}[code]
            digits = text[i + 2 : i + 2 + size]
            if len(digits) != size or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise YamlError(line, f"bad escape `\\{code}{digits}` in a double-quoted string")
            out.append(chr(int(digits, 16)))
            i += 2 + size
        elif code == "\n":
            i += 2  # an escaped line break joins the lines
        else:
            raise YamlError(line, f"unknown escape `\\{code}` in a double-quoted string")
    return "".join(out)


def split_flow(inner: str) -> list[str]:
    parts: list[str] = []
    current = ""
    quote = ""
    for ch in inner:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch == ",":
            parts.append(current)
            current = ""
            continue
        current += ch
    parts.append(current)
    return parts


def unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return unescape(text[1:-1], 0)
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return text


def strip_comment(line: str) -> str:
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'" and (i == 0 or line[i - 1] in " \t[,:"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line
