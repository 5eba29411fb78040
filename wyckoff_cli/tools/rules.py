"""Permission rules: `TOOL` or `TOOL(PATTERN)`, their matching, and the rule "always" saves.

What PATTERN is matched against depends on the tool:

- commands (`run_shell`): the command, whitespace outside quotes collapsed. A pattern
  without wildcards is a word prefix: `run_shell(git status)` matches `git status`
  and `git status --short`, not `git statusx`; `PREFIX:*` says the same explicitly.
  A pattern with `*`, `?` or `[…]` is a glob over the whole command, in which `*`
  also matches spaces and slashes: `run_shell(pytest*)`. A compound command (`a &&
  b`, `a; b`, pipes, `$(…)`) is allowed only when every part is allowed; a deny
  rule refuses it when any part matches. A rule with the exact whole command allows
  that exact compound command.
- file tools (`path_args`): the path relative to the workspace root, POSIX style:
  `edit_file(src/**)`, `write_file(docs/*.md)`, `read_file(.env)`. `*` stays inside
  one folder, `**` crosses folders, `{a,b}` gives alternatives; a pattern naming a
  folder also covers what is inside it. Patterns starting with `/` or `~` match the
  absolute path (useful in deny rules; paths outside the workspace always ask).
- other tools: the value of the tool's summary argument, as a glob.

A backslash makes the next character literal (`run_shell(ls \\*.py)`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.destructive import find_danger
from wyckoff_cli.tools.ignore import glob_to_regex
from wyckoff_cli.tools.shellparse import normalize, split_command, words
from wyckoff_cli.tools.workspace import is_git_internal, outside_paths, relative_to_root, resolve_path

_RULE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.\-]*\*?)\s*(?:\((.*)\))?\s*", re.DOTALL)
_WILDCARD = re.compile(r"(?<!\\)(?:\\\\)*[*?\[]")
# Programs whose arguments decide everything: "always" saves the exact command for them.
_EXACT_ONLY = frozenset(
    {
        "python", "python3", "py", "node", "deno", "bun", "ruby", "perl", "php", "lua", "java",
        "sh", "bash", "zsh", "dash", "fish", "ksh", "pwsh", "eval", "exec", "source", ".",
        "sudo", "doas", "su", "env", "xargs", "nohup", "time", "nice", "timeout", "watch",
        "rm", "rmdir", "dd", "mv", "cp", "ln", "chmod", "chown", "chgrp", "truncate", "shred",
        "find", "sed", "awk", "gawk", "tee", "curl", "wget", "ssh", "scp", "rsync", "nc",
        "kill", "pkill", "killall", "npx", "uvx", "pnpx", "docker", "podman", "kubectl",
    }
)  # fmt: skip
_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_:\-]*")


class RuleError(ValueError):
    """A rule that cannot be parsed."""


@dataclass(frozen=True, slots=True)
class Rule:
    text: str
    tool: str
    pattern: str | None  # None: every call of the tool


@lru_cache(maxsize=2048)
def parse_rule(text: str) -> Rule:
    """Parse `TOOL` or `TOOL(PATTERN)`; raises `RuleError` with what is wrong."""
    match = _RULE.fullmatch(text)
    if match is None:
        raise RuleError(
            f"invalid rule {text!r}: expected TOOL or TOOL(PATTERN), e.g. run_shell(pytest*) or edit_file(src/**)"
        )
    tool, pattern = match.group(1), match.group(2)
    if tool.endswith("*") and not (tool.startswith("mcp__") and tool.endswith("__*")):
        raise RuleError(  # a wildcard names whole MCP servers only: mcp__SERVER__* (or mcp__*)
            f"invalid rule {text!r}: a * in a tool name works only as mcp__SERVER__*, e.g. mcp__github__*"
        )
    if pattern is not None and not pattern.strip():
        raise RuleError(f"invalid rule {text!r}: the pattern in parentheses is empty (write just {tool})")
    return Rule(text.strip(), tool, pattern.strip() if pattern is not None else None)


def check_rule(text: str) -> str:
    """The rule's text, stripped, after checking it parses."""
    return parse_rule(text).text


# --------------------------------------------------------------------------- subjects


@dataclass(frozen=True, slots=True)
class Subject:
    """What a call's rules are matched against."""

    kind: str  # "command", "path", "text" or "none"
    whole: str = ""  # the normalised command, the relative (or absolute) path, the text
    parts: tuple[str, ...] = ()  # command parts
    complete: bool = True  # the command could be split with confidence
    absolute: str = ""  # for paths: the resolved absolute path


def subject_of(tool: Tool, args: dict[str, Any], root: Path) -> Subject:
    custom = tool.extra.get("subject")  # MCP tools: the arguments as compact JSON
    if callable(custom):
        return Subject("arguments", str(custom(args)))
    command = args.get("command")
    if tool.kind == "execute" and isinstance(command, str):
        split = split_command(command)
        return Subject("command", normalize(command), split.parts, split.complete)
    for name in tool.path_args:
        raw = args.get(name)
        if isinstance(raw, str):
            try:
                path = resolve_path(root, raw)
            except ToolError:
                return Subject("none")  # the tool itself reports the bad path
            rel = relative_to_root(path, root)
            return Subject("path", rel if rel is not None else str(path), absolute=str(path))
    if tool.summary_arg and isinstance(args.get(tool.summary_arg), str):
        return Subject("text", str(args[tool.summary_arg]))
    return Subject("none")


# --------------------------------------------------------------------------- matching


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


@lru_cache(maxsize=2048)
def _command_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                body = "^" + body[1:] if body.startswith("!") else body
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def command_matches(pattern: str, command: str) -> bool:
    """Whether one (normalised) simple command matches a command pattern."""
    pattern = normalize(pattern)
    if pattern.endswith(":*") and not pattern.endswith("\\:*"):
        prefix = _unescape(pattern[:-2]).rstrip()
        return command == prefix or command.startswith(prefix + " ")
    if not _WILDCARD.search(pattern):
        literal = _unescape(pattern)
        return command == literal or command.startswith(literal + " ")
    return _command_regex(pattern).fullmatch(command) is not None


@lru_cache(maxsize=2048)
def _path_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(glob_to_regex(pattern.strip("/"), anchored=True) + r"\Z", re.DOTALL)


def path_matches(pattern: str, subject: Subject) -> bool:
    if pattern.startswith(("/", "~")):
        target = subject.absolute
        pattern = os.path.expanduser(pattern) if pattern.startswith("~") else pattern
    else:
        target = subject.whole if subject.whole != subject.absolute else ""
    if not target:
        return False
    regex = _path_regex(pattern)
    parts = target.strip("/").split("/")
    return any(regex.match("/".join(parts[:depth])) for depth in range(len(parts), 0, -1))


def _text_matches(pattern: str, text: str) -> bool:
    if not _WILDCARD.search(pattern):
        return text == _unescape(pattern)
    return _command_regex(pattern).fullmatch(text) is not None


def _matches_one(rule: Rule, text: str, subject: Subject) -> bool:
    assert rule.pattern is not None
    if subject.kind == "command":
        return command_matches(rule.pattern, text)
    if subject.kind == "path":
        return path_matches(rule.pattern, subject)
    if subject.kind in ("text", "arguments"):
        return _text_matches(rule.pattern, text)
    return False


def tool_matches(rule_tool: str, name: str) -> bool:
    """`mcp__SERVER__*` names every tool of a server; other rule names are exact."""
    return name.startswith(rule_tool[:-1]) if rule_tool.endswith("*") else rule_tool == name


def denying_rule(rules: list[Rule], tool: Tool, subject: Subject) -> Rule | None:
    """The first rule refusing the call: one matching the whole call or any part."""
    for rule in rules:
        if not tool_matches(rule.tool, tool.name):
            continue
        if rule.pattern is None:
            return rule
        texts = (subject.whole, *subject.parts) if subject.kind == "command" else (subject.whole,)
        if any(_matches_one(rule, text, subject) for text in texts):
            return rule
    return None


def allowing_rule(rules: list[Rule], tool: Tool, subject: Subject) -> Rule | None:
    """A rule allowing the whole call (for commands: every part must be allowed, or a
    rule must name the exact whole command)."""
    mine = [r for r in rules if tool_matches(r.tool, tool.name)]
    for rule in mine:
        if rule.pattern is None:
            return rule
    if subject.kind != "command":
        return next((r for r in mine if _matches_one(r, subject.whole, subject)), None)
    for rule in mine:
        assert rule.pattern is not None
        if not _WILDCARD.search(rule.pattern) and normalize(_unescape(rule.pattern)) == subject.whole:
            return rule
    if not subject.complete or not subject.parts:
        return None
    first: Rule | None = None
    for part in subject.parts:
        found = next((r for r in mine if command_matches(r.pattern or "", part)), None)
        if found is None:
            return None
        first = first or found
    return first


# --------------------------------------------------------------------------- "always"


def _escape_command(text: str) -> str:
    return re.sub(r"([\\*?\[])", r"\\\1", text)


def _escape_path(text: str) -> str:
    return re.sub(r"([\\*?\[\]{}])", r"\\\1", text)


def command_prefix(part: str) -> str:
    """The narrowest sensible prefix of one simple command: the program and its
    sub-command words (`git status --short` → `git status`, `npm run build` → `npm
    run build`, `pytest -q tests` → `pytest`). Programs whose arguments decide what
    happens (interpreters, shells, rm, find, sed, curl …) and paths to programs keep
    the whole command."""
    argv = words(part)
    if not argv or "/" in argv[0] or argv[0].rsplit("/", 1)[-1] in _EXACT_ONLY or "=" in argv[0]:
        return part
    kept = [argv[0]]
    for word in argv[1:3]:
        if not _SUBCOMMAND.fullmatch(word):
            break
        kept.append(word)
    prefix = " ".join(kept)
    return prefix if part.startswith(prefix) else part


def suggest_rule(tool: Tool, args: dict[str, Any], root: Path) -> str:
    """The narrowest sensible rule covering this call: the command prefix for
    commands (the exact command when it is compound), the file's path for file tools."""
    subject = subject_of(tool, args, root)
    if subject.kind == "command":
        if len(subject.parts) == 1 and subject.complete:
            return f"{tool.name}({_escape_command(command_prefix(subject.parts[0]))})"
        return f"{tool.name}({_escape_command(subject.whole)})"
    if subject.kind == "path":
        return f"{tool.name}({_escape_path(subject.whole)})"
    if subject.kind == "text" and subject.whole:
        return f"{tool.name}({_escape_command(subject.whole)})"
    return tool.name


def saveable_rule(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> str | None:
    """The rule "always" would save for this call, or None when the call must be
    asked about every time (a path outside the workspace, a destructive command, a
    write into .git/)."""
    if outside_paths(tool, args, ctx):
        return None
    command = args.get("command")
    if tool.kind == "execute" and isinstance(command, str) and find_danger(command):
        return None
    subject = subject_of(tool, args, ctx.workspace)
    if subject.kind == "path" and tool.kind == "edit" and is_git_internal(Path(subject.absolute)):
        return None
    return suggest_rule(tool, args, ctx.workspace)


def preview_rule(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> str | None:
    """For previews: the rule "always" would save (None when there is none)."""
    try:
        return saveable_rule(tool, args, ctx)
    except Exception:  # a preview never fails because of a rule
        return None
