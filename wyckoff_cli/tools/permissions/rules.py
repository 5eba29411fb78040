"""Permission rules: `TOOL` or `TOOL(PATTERN)`, their matching, and the rule "always" saves.

What PATTERN is matched against is the tool's permission subject (subject.py):

- commands (`run_shell`): each simple command the shell would run, normalised by the
  parser (shellparse.py: quotes resolved, wrappers and assignments stripped, nested
  `bash -c`/`eval`/`$(…)` followed). A pattern without wildcards is a word prefix:
  `run_shell(git status)` matches `git status` and `git status --short`, not `git
  statusx`; `PREFIX:*` says the same explicitly. A pattern with `*`, `?` or `[…]` is a
  glob over the whole command, in which `*` also matches spaces and slashes. A
  compound command is allowed only when every command in it is allowed; a deny rule
  refuses it when any matches. A rule with the exact whole command allows that exact
  command. `, writes:none` after the pattern (`run_shell(git status, writes:none)`)
  allows the command only without output redirections; otherwise an allow rule covers
  redirections into the workspace (those outside always ask).
  Never allowed by a rule: a command whose name is not a literal word (`$(echo rm)`),
  interpreter inline code (`python -c …`) unless the rule names the flag
  (`run_shell(python -c *)`), assignments that change what runs (`PATH=…`), `git -c`.
- file tools: the path relative to the workspace root, POSIX style: `edit_file(src/**)`,
  `read_file(.env)`. `*` stays inside one folder, `**` crosses folders, `{a,b}` gives
  alternatives; a pattern naming a folder also covers what is inside it. Patterns
  starting with `/` or `~` match the absolute path. A deny rule on a reading tool
  covers every tool that reads (read_file, grep, glob, list_dir, edit_file, MCP tools
  with path arguments), one on a writing tool every tool that writes.
- URLs: `domain:HOST` matches that host (`domain:*.example.com` also its subdomains);
  other patterns are globs over the URL.
- other tools: the value of the tool's summary argument, as a glob.

Claude Code's rule syntax is accepted as an alias: `Bash(git push:*)`, `Read(./.env)`,
`Edit(src/**)`, `Write(…)`, `Grep`, `Glob`, `LS`, `WebFetch(domain:example.com)`.

A backslash makes the next character literal (`run_shell(ls \\*.py)`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from wyckoff_cli.tools.base import Tool
from wyckoff_cli.tools.ignore import glob_to_regex
from wyckoff_cli.tools.permissions.opaque import BUILTINS, first_opaque, same_program
from wyckoff_cli.tools.permissions.shellparse import SimpleCommand, basename, normalize, pattern_words
from wyckoff_cli.tools.permissions.subject import Subject
from wyckoff_cli.tools.web.urls import check_domain_pattern, host_matches, suggest_url_rule

_RULE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.\-]*\*?)\s*(?:\((.*)\))?\s*", re.DOTALL)
_WILDCARD = re.compile(r"(?<!\\)(?:\\\\)*[*?\[]")
_WRITES = re.compile(r",\s*writes:\s*(none|workspace)\s*$")
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

Family = Literal["read", "write", "url"]
# Tools whose path rules stand for every tool with that access.
FILE_FAMILIES: dict[str, Family] = {
    "read_file": "read", "grep": "read", "glob": "read", "list_dir": "read",
    "edit_file": "write", "write_file": "write",
}  # fmt: skip
# Claude Code's tool names → (our tool, or a family).
ALIASES: dict[str, tuple[str, Family | None]] = {
    "Bash": ("run_shell", None),
    "Read": ("", "read"),
    "Edit": ("", "write"),
    "Write": ("", "write"),
    "MultiEdit": ("", "write"),
    "NotebookEdit": ("", "write"),
    "Grep": ("grep", None),
    "Glob": ("glob", None),
    "LS": ("list_dir", None),
    "WebFetch": ("", "url"),
    "WebSearch": ("web_search", None),
    "TodoWrite": ("todo_write", None),
    "Task": ("task", None),
}


class RuleError(ValueError):
    """A rule that cannot be parsed."""


@dataclass(frozen=True, slots=True)
class Rule:
    text: str
    tool: str  # our tool's name; "" for a Claude Code family alias (Read, Edit, WebFetch)
    pattern: str | None  # None: every call of the tool
    family: Family | None = None  # set for aliases: applies to every tool of the family
    writes: Literal["workspace", "none"] = "workspace"

    @property
    def names(self) -> str:
        return self.tool or f"every {self.family} tool"


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
    pattern = pattern.strip() if pattern is not None else None
    writes: Literal["workspace", "none"] = "workspace"
    if pattern is not None:
        qualifier = _WRITES.search(pattern)
        if qualifier:
            writes = "none" if qualifier.group(1) == "none" else "workspace"
            pattern = pattern[: qualifier.start()].strip()
            if not pattern:
                raise RuleError(f"invalid rule {text!r}: `writes:` needs a command pattern before it")
        if problem := check_domain_pattern(pattern):
            raise RuleError(f"invalid rule {text!r}: {problem}")
    family: Family | None = None
    if tool in ALIASES:
        tool, family = ALIASES[tool]
        if pattern is not None and pattern.endswith(":*") and family is None and tool != "run_shell":
            pattern = pattern[:-2] + "*"
        if family in ("read", "write") and pattern is not None:
            pattern = _claude_path(pattern)
    return Rule(text.strip(), tool, pattern, family, writes)


def _claude_path(pattern: str) -> str:
    """Claude Code's path patterns in ours: `//abs` is absolute, `/x` and `./x` are
    relative to the project, a name without `/` matches at any depth."""
    if pattern.startswith("//"):
        return pattern[1:]
    if pattern.startswith("~"):
        return pattern
    pattern = pattern.removeprefix("./").lstrip("/") if not pattern.startswith("/") else pattern[1:]
    if "/" not in pattern.rstrip("/"):
        return "**/" + pattern
    return pattern


def check_rule(text: str) -> str:
    """The rule's text, stripped, after checking it parses."""
    return parse_rule(text).text


# --------------------------------------------------------------------------- which rules apply


def applies(rule: Rule, tool: Tool, subject: Subject, *, denying: bool) -> bool:
    """Whether `rule` speaks about this call: it names the tool, or (path rules) a tool
    of the same family — for deny rules always, for allow rules only through a Claude
    Code family alias."""
    if rule.tool and tool_matches(rule.tool, tool.name):
        return True
    family = rule.family
    if family is None and denying and rule.tool in FILE_FAMILIES:
        family = FILE_FAMILIES[rule.tool]
    if family == "url":
        return subject.kind == "url"
    if family == "read":
        return subject.kind == "path" and subject.reads()
    if family == "write":
        return subject.kind == "path" and subject.writes()
    return False


def tool_matches(rule_tool: str, name: str) -> bool:
    """`mcp__SERVER__*` names every tool of a server; other rule names are exact."""
    return name.startswith(rule_tool[:-1]) if rule_tool.endswith("*") else rule_tool == name


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


@lru_cache(maxsize=2048)
def _command_pattern(pattern: str) -> str:
    return pattern_words(pattern)


def command_matches(pattern: str, command: str) -> bool:
    """Whether one (normalised) simple command matches a command pattern."""
    pattern = _command_pattern(pattern)
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


def path_matches(pattern: str, relative: str | None, absolute: str) -> bool:
    if pattern.startswith(("/", "~")):
        target = absolute
        pattern = os.path.expanduser(pattern) if pattern.startswith("~") else pattern
    else:
        target = relative or ""
    if not target:
        return False
    regex = _path_regex(pattern)
    parts = target.strip("/").split("/")
    return any(regex.match("/".join(parts[:depth])) for depth in range(len(parts), 0, -1))


def url_matches(pattern: str, subject: Subject) -> bool:
    if pattern.startswith("domain:"):
        host = pattern[len("domain:") :].strip().lower().rstrip(".")
        if not host or not subject.host:
            return False
        if host.startswith("*."):
            plain = subject.host == host[2:] or subject.host.endswith(host[1:])
        else:
            plain = subject.host == host
        # also the host in its canonical spelling (IDNA, IPv4 as a dotted quad; web/urls.py)
        return plain or host_matches(host, subject.host)
    return _text_matches(pattern, subject.text)


def _text_matches(pattern: str, text: str) -> bool:
    if not _WILDCARD.search(pattern):
        return text == _unescape(pattern)
    return _command_regex(pattern).fullmatch(text) is not None


def _path_rule_matches(rule: Rule, subject: Subject, *, every: bool) -> bool:
    assert rule.pattern is not None
    hits = [path_matches(rule.pattern, ref.relative, ref.absolute) for ref in subject.paths]
    return bool(hits) and (all(hits) if every else any(hits))


def _deny_texts(command: SimpleCommand) -> tuple[str, ...]:
    text = command.text
    if command.words and "/" in command.name:
        return (text, " ".join((basename(command.name), *command.argv[1:])))
    return (text,)


def denying_rule(rules: list[Rule], tool: Tool, subject: Subject) -> Rule | None:
    """The first rule refusing the call: for commands, one matching any command in it."""
    for rule in rules:
        if not applies(rule, tool, subject, denying=True):
            continue
        if rule.pattern is None:
            return rule
        if subject.kind == "command" and subject.command is not None:
            texts = [normalize(subject.text)] if not subject.command.too_long else []
            for command in subject.command.commands:
                texts.extend(_deny_texts(command))
            if any(command_matches(rule.pattern, text) for text in texts):
                return rule
        elif subject.kind == "path":
            if _path_rule_matches(rule, subject, every=False):
                return rule
        elif subject.kind == "url":
            if url_matches(rule.pattern, subject):
                return rule
        elif subject.kind == "text" and _text_matches(rule.pattern, subject.text):
            return rule
    return None


def deny_could_apply(rules: list[Rule], tool: Tool, subject: Subject) -> str | None:
    """Why a deny rule for this shell tool could apply to a command it does not match
    as written, or None: the command runs code the rules cannot see (opaque.py), has
    words only known when it runs after a denied program's name (`x=push; git $x`),
    or takes more arguments from its input (xargs, find -exec). Only while such a deny
    rule exists; the policy then asks, in every mode."""
    parsed = subject.command
    if subject.kind != "command" or parsed is None:
        return None
    mine = [r for r in rules if r.pattern is not None and applies(r, tool, subject, denying=True)]
    if not mine:
        return None
    rule = mine[0]
    found = first_opaque(parsed)
    if found is not None:
        text, why = found
        return (
            f"`{_short(text)}` runs code the rules cannot see: {why}; the deny rule {rule.text} could "
            "apply to it, so it is always asked about, in every mode"
        )
    disguised: dict[tuple[str, str], bool] = {}
    for command in parsed.commands:
        if not command.words or not command.words[0].literal:
            continue
        for candidate in mine:
            assert candidate.pattern is not None
            if not _names_program(candidate.pattern, command.name):
                program = _program_of(candidate.pattern)
                key = (command.name, program)
                if key not in disguised:
                    disguised[key] = bool(program) and _may_be_disguised(command.name) and same_program(*key)
                if disguised[key]:
                    return (
                        f"`{_short(command.text)}` runs {program} under another name, so the deny rule "
                        f"{candidate.text} could apply: always asked about, in every mode"
                    )
                continue
            if any(not w.literal for w in command.words[1:]):
                return (
                    f"`{_short(command.text)}` has words only known when it runs, so the deny rule "
                    f"{candidate.text} could apply: always asked about, in every mode"
                )
            if command.input_args:
                return (
                    f"`{_short(command.text)}` takes arguments from its input, so the deny rule "
                    f"{candidate.text} could apply: always asked about, in every mode"
                )
    return None


def _names_program(pattern: str, name: str) -> bool:
    """Whether the first word of a command pattern could be the program `name`."""
    first = _command_pattern(pattern).split(" ")[0].removesuffix(":*")
    if not first:
        return False
    if not _WILDCARD.search(first):
        return _unescape(first) in (name, basename(name))
    regex = _command_regex(first)
    return regex.fullmatch(name) is not None or regex.fullmatch(basename(name)) is not None


def _may_be_disguised(name: str) -> bool:
    return "/" not in name and name not in BUILTINS


def _program_of(pattern: str) -> str:
    """The program a command pattern names (`touch*` → `touch`), or "" for a glob."""
    first = _command_pattern(pattern).split(" ")[0].removesuffix(":*").removesuffix("*")
    return "" if _WILDCARD.search(first) else _unescape(first)


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _allows_command(rule: Rule, command: SimpleCommand, has_writes: bool) -> bool:
    assert rule.pattern is not None
    if rule.writes == "none" and has_writes:
        return False
    if not command_matches(rule.pattern, command.text):
        return False
    if command.inline_code is not None:
        words = _command_pattern(rule.pattern).split(" ")
        return (
            len(words) >= 2 and _unescape(words[1]) == command.inline_flag and command.inline_flag not in "<|"
        )
    return True


def allowing_rule(rules: list[Rule], tool: Tool, subject: Subject) -> Rule | None:
    """A rule allowing the whole call (for commands: every command in it must be
    allowed, or a rule must name the exact whole command)."""
    mine = [r for r in rules if applies(r, tool, subject, denying=False)]
    if subject.kind == "command":
        return _allowing_command_rule(mine, subject)
    for rule in mine:
        if rule.pattern is None:
            return rule
    for rule in mine:
        assert rule.pattern is not None
        if subject.kind == "path" and _path_rule_matches(rule, subject, every=True):
            return rule
        if subject.kind == "url" and url_matches(rule.pattern, subject):
            return rule
        if subject.kind == "text" and _text_matches(rule.pattern, subject.text):
            return rule
    return None


def _allowing_command_rule(mine: list[Rule], subject: Subject) -> Rule | None:
    parsed = subject.command
    if parsed is None or not parsed.complete or not parsed.commands:
        return None
    commands = parsed.commands
    if any(not c.literal_name or c.unsafe or c.elevated for c in commands):
        return None
    has_writes = bool(parsed.writes)
    for rule in mine:
        if rule.pattern is None and not (rule.writes == "none" and has_writes):
            return rule
    whole = normalize(subject.text)
    for rule in mine:
        assert rule.pattern is not None
        if _WILDCARD.search(rule.pattern) or (rule.writes == "none" and has_writes):
            continue
        if normalize(_unescape(rule.pattern)) == whole and all(
            c.inline_flag not in ("<<", "|") for c in commands
        ):
            return rule
    first: Rule | None = None
    for command in commands:
        found = next(
            (r for r in mine if r.pattern is not None and _allows_command(r, command, has_writes)), None
        )
        if found is None:
            return None
        first = first or found
    return first


# --------------------------------------------------------------------------- "always"


def _escape_command(text: str) -> str:
    return re.sub(r"([\\*?\[])", r"\\\1", text)


def _escape_path(text: str) -> str:
    return re.sub(r"([\\*?\[\]{}])", r"\\\1", text)


_PLAIN_WORD = re.compile(r"[A-Za-z0-9_@%+=:,./*?\[\]-]+")


def _quote_word(word: str) -> str:
    """One word as a rule writes it: glob characters escaped, other shell syntax quoted."""
    if _PLAIN_WORD.fullmatch(word):
        return _escape_command(word)
    return "'" + word.replace("'", "'\"'\"'") + "'"


def command_prefix(command: SimpleCommand) -> str:
    """The narrowest sensible prefix of one simple command, as a rule pattern: the
    program and its sub-command words (`git status --short` → `git status`, `npm run
    build` → `npm run build`, `pytest -q tests` → `pytest`). Programs whose arguments
    decide what happens (interpreters, shells, rm, find, sed, curl …) and paths to
    programs keep the whole command."""
    argv = command.argv
    if not argv:
        return ""
    whole = " ".join(_quote_word(w) for w in argv)
    if "/" in argv[0] or basename(argv[0]) in _EXACT_ONLY or command.inline_code is not None:
        return whole
    kept = [argv[0]]
    for word in argv[1:3]:
        if not _SUBCOMMAND.fullmatch(word):
            break
        kept.append(word)
    return " ".join(_quote_word(w) for w in kept)


def suggest_rule(tool: Tool, subject: Subject) -> str:
    """The narrowest sensible rule covering this call: the command prefix for one
    command (the exact command when it is compound), the file's path for file tools,
    the domain for URLs (the exact URL when it has no host web_fetch would accept)."""
    if subject.kind == "command":
        parsed = subject.command
        if parsed is not None and len(parsed.commands) == 1 and parsed.complete:
            return f"{tool.name}({command_prefix(parsed.commands[0])})"
        return f"{tool.name}({_escape_command(normalize(subject.text))})"
    if subject.kind == "path":
        return f"{tool.name}({_escape_path(subject.text)})"
    if subject.kind == "url" and subject.host:
        domain = suggest_url_rule(tool.name, subject.text)  # the URL's domain: `TOOL(domain:HOST)`
        if domain != tool.name:
            return domain
    if subject.kind in ("text", "url") and subject.text:
        return f"{tool.name}({_escape_command(subject.text)})"
    return tool.name
