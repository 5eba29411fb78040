"""Markdown front matter as Claude Code's command, skill and agent files write it.

A file may start with a `---` line, `key: value` lines and a closing `---` line. The
values people write there are a small part of YAML, which is what this reads: plain,
single- or double-quoted strings, `[a, b]` flow lists, `- item` block lists, `|` / `>`
block text, `true` / `false`, and `#` comments. Anything else is kept as the plain
string it is. A file without front matter has an empty mapping and its whole text as
the body. An opening `---` without a closing one is an error naming the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FrontValue = str | bool | list[str]

_KEY = re.compile(r"^([A-Za-z_][\w\-]*)\s*:(?:\s+(.*))?$")
# The keys Claude Code's command and skill files use: where a run-on description stops.
DOCUMENT_KEYS = frozenset({
    "name", "description", "version", "license", "allowed-tools", "argument-hint", "model",
    "disable-model-invocation", "user-invocable", "when_to_use", "context", "agent", "hooks", "metadata",
})  # fmt: skip
_EXAMPLE_OPEN = re.compile(r"<example>")
_EXAMPLE_CLOSE = re.compile(r"</example>")


def runs_on(text: str) -> bool:
    """Whether a plain value is the run-on shape anthropics' plugins publish: it ends with
    `Examples:` (any `:`) or opens an `<example>`, and goes on over unindented lines
    (blank lines, `<example>` blocks, `Context:` / `user:` lines) up to the next key.
    Not YAML, but Claude Code's own marketplace ships it, so it is read as one string."""
    stripped = text.rstrip()
    opened = len(_EXAMPLE_OPEN.findall(stripped)) > len(_EXAMPLE_CLOSE.findall(stripped))
    return stripped.endswith(":") or opened


class FrontMatterError(ValueError):
    """Front matter that cannot be read (the message names the file and line)."""


@dataclass(frozen=True, slots=True)
class Document:
    meta: dict[str, FrontValue]
    body: str
    raw: dict[str, str] = field(default_factory=dict)  # values written on the key's line, as written

    def text(self, key: str) -> str:
        """`key` as one string, as written (`argument-hint: [message]` stays
        `[message]`; '' when missing; a block list is joined with commas)."""
        if key in self.raw:
            return _scalar(self.raw[key])
        value = self.meta.get(key)
        if value is None:
            return ""
        if isinstance(value, list):
            return ", ".join(value)
        if isinstance(value, bool):
            return "true" if value else "false"
        return value

    def items(self, key: str) -> list[str]:
        """`key` as a list: a list as written, a string split at commas outside
        parentheses (`Bash(git add:*), Read`), else empty."""
        value = self.meta.get(key)
        if isinstance(value, list):
            return [v for v in value if v]
        if isinstance(value, str):
            return split_outside_parentheses(value)
        return []

    def flag(self, key: str) -> bool:
        value = self.meta.get(key)
        return value is True or (isinstance(value, str) and value.lower() in ("true", "yes", "on"))


def read_document(path: Path) -> Document:
    return parse_document(path.read_text(encoding="utf-8"), str(path))


def parse_document(text: str, source: str = "<text>") -> Document:
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return Document({}, text)
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        raise FrontMatterError(f"{source}: the front matter opened on line 1 is never closed with ---")
    raw: dict[str, str] = {}
    meta = _parse_meta([line.rstrip("\r\n") for line in lines[1:end]], source, raw)
    return Document(meta, "".join(lines[end + 1 :]).lstrip("\n"), raw)


def _parse_meta(lines: list[str], source: str, raw_values: dict[str, str]) -> dict[str, FrontValue]:
    meta: dict[str, FrontValue] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        match = _KEY.match(line)
        if match is None or line[:1].isspace():
            raise FrontMatterError(f"{source}, line {i + 2}: expected `key: value`, got {line.strip()!r}")
        key, raw = match.group(1), _strip_comment(match.group(2) or "")
        i += 1
        nested: list[str] = []
        while i < len(lines) and (
            not lines[i].strip() or lines[i][:1].isspace() or lines[i].startswith("- ")
        ):
            nested.append(lines[i])
            i += 1
        while nested and not nested[-1].strip():
            nested.pop()
        if raw in ("|", ">", "|-", ">-", "|+", ">+"):
            block = _dedent(nested)
            meta[key] = "\n".join(block) if raw.startswith("|") else " ".join(b for b in block if b)
        elif not raw and nested and all(n.strip().startswith("- ") or not n.strip() for n in nested):
            meta[key] = [_scalar(n.strip()[2:].strip()) for n in nested if n.strip()]
        elif not raw and nested:
            meta[key] = " ".join(n.strip() for n in nested if n.strip())
        else:
            if nested:  # a plain value continued on indented lines
                raw = " ".join([raw, *(n.strip() for n in nested if n.strip())])
            if raw and raw[0] not in "[\"'" and runs_on(raw):
                run_on: list[str] = []
                while i < len(lines) and not ((m := _KEY.match(lines[i])) and m.group(1) in DOCUMENT_KEYS):
                    run_on.append(lines[i].strip())
                    i += 1
                raw = "\n".join([raw, *run_on]).strip()
            meta[key] = _value(raw)
            if raw.startswith("["):
                raw_values[key] = raw
    return meta


def _value(raw: str) -> FrontValue:
    if raw.startswith("[") and raw.endswith("]"):
        return [_scalar(item) for item in split_outside_parentheses(raw[1:-1])]
    if raw in ("true", "True", "yes"):
        return True
    if raw in ("false", "False", "no"):
        return False
    return _scalar(raw)


def _scalar(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return raw[1:-1].replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    return raw


def _strip_comment(raw: str) -> str:
    """Drop a ` # comment` outside quotes."""
    quote = ""
    for index, char in enumerate(raw):
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'" and (index == 0 or raw[index - 1].isspace()):
            quote = char
        elif char == "#" and (index == 0 or raw[index - 1].isspace()):
            return raw[:index].rstrip()
    return raw.strip()


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]


def split_outside_parentheses(text: str) -> list[str]:
    """`Bash(git add:*), Bash(git commit:*), Read` → the three items (commas inside
    parentheses or quotes do not split)."""
    items: list[str] = []
    depth, quote, current = 0, "", []
    for char in text:
        if quote:
            current.append(char)
            if char == quote:
                quote = ""
            continue
        if char in "\"'":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            items.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    items.append("".join(current).strip())
    return [_scalar(item) for item in items if item]
