"""Reading a shell command the way bash will, for the policy: tree-sitter-bash's grammar.

`parse_command(text)` turns a command line into the simple commands it runs, each
normalised so that rules match what actually runs rather than how it is spelled:

- variable assignments are dropped (`FOO=1 touch a` runs `touch a`); assignments
  that change what runs (`PATH=…`, `LD_PRELOAD=…`) are kept as `unsafe` notes;
- quoting and backslashes are resolved (`"git" 'push'`, `g''it`, `\\git` → `git push`);
- a program given by a system path is reduced to its name (`/usr/bin/git` → `git`);
- transparent wrappers are looked through (`env`, `command`, `builtin`, `exec`, `nice`,
  `nohup`, `timeout`, `time`, `stdbuf`, `ionice`, `setsid`, `busybox`, `xargs`, `sudo`,
  `doas`), the last two marking the command `elevated`;
- git's global options are dropped (`git -C dir --no-pager push` → `git push`);
- code run from strings is parsed too: `bash -c` / `sh -c` / `zsh -c` (any option
  cluster with `c`), `eval`, `watch`, `env -S`, a heredoc or herestring fed to a shell,
  `echo … | sh`; `find -exec CMD` is a command of its own;
- the commands inside `$(…)`, backticks, `<(…)`, subshells, groups, functions,
  conditionals, loops and heredoc bodies are found wherever they are.

A word that is not a literal (`$(echo rm)`, `$CMD`, `${X}`) keeps its source text and
is marked not literal; a command whose name is not literal can be anything. Output
redirections are collected (`writes`) so the policy can check where they write.

Bounded time: commands longer than `MAX_COMMAND_CHARS`, or whose syntax tree has more
than `MAX_NODES` nodes, are not followed (`too_long`); the parse is linear in the
length of the text, and nested strings are followed at most `MAX_DEPTH` levels deep.
"""

from __future__ import annotations

import codecs
import re
import threading
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from wyckoff_cli.tools.permissions.shellcommand import (
    SHELLS,
    ParsedCommand,
    Redirect,
    SimpleCommand,
    Word,
    assignment_note,
    basename,
    find_exec_commands,
    find_start_paths,
    normalise,
    program_name,
    reads_code,
)

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

MAX_COMMAND_CHARS = 100_000
MAX_NODES = 60_000
MAX_DEPTH = 4

_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})


__all__ = [
    "ParsedCommand",
    "Redirect",
    "SimpleCommand",
    "Word",
    "basename",
    "find_start_paths",
    "normalize",
    "parse_command",
    "pattern_words",
    "program_name",
]

# --------------------------------------------------------------------------- parsing


_LOCAL = threading.local()  # a tree-sitter Parser is not shared between threads


def _parser() -> Parser:
    parser: Parser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        import tree_sitter_bash
        from tree_sitter import Language, Parser

        parser = _LOCAL.parser = Parser(Language(tree_sitter_bash.language()))
    return parser


_FOUR_BYTE_CHAR = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")
_SAFE_FOUR_BYTE_CHAR = b"xxxx"  # word characters to the shell, as many bytes as the one replaced


def _parseable(data: bytes) -> bytes:
    """`data` as tree-sitter-bash may be given it: its scanner crashes the process on some
    characters beyond the BMP (`{` then U+771A8 or U+EE563, unassigned code points). Every
    four-byte character is part of a word to the shell, so each is replaced by four ASCII
    letters, which parse alike and take as many bytes: the tree's byte offsets still index
    `data`, from which every word is read."""
    if not any(byte >= 0xF0 for byte in data):
        return data
    return _FOUR_BYTE_CHAR.sub(_SAFE_FOUR_BYTE_CHAR, data)


@lru_cache(maxsize=128)
def parse_command(text: str) -> ParsedCommand:
    """The simple commands `text` runs (see the module docstring). Never raises."""
    if len(text) > MAX_COMMAND_CHARS:
        return ParsedCommand(text, complete=False, too_long=True, problem=f"{len(text):,} characters")
    walker = _Walker()
    walker.parse(text, 0)
    if walker.nodes > MAX_NODES:
        return ParsedCommand(text, complete=False, too_long=True, problem="too many shell words")
    return ParsedCommand(
        text,
        tuple(walker.commands),
        tuple(walker.writes),
        walker.problem == "",
        False,
        walker.network_code,
        walker.fork_bomb,
        walker.problem,
        tuple(walker.assignments),
        tuple(walker.functions),
    )


@dataclass
class _Walker:
    commands: list[SimpleCommand] = field(default_factory=list)
    writes: list[Redirect] = field(default_factory=list)
    problem: str = ""
    network_code: bool = False
    fork_bomb: bool = False
    nodes: int = 0
    assignments: list[tuple[str, Word]] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    _pending_pipelines: list[Node] = field(default_factory=list)

    def fail(self, why: str) -> None:
        if not self.problem:
            self.problem = why

    def parse(self, text: str, depth: int, elevated: bool = False, unsafe: tuple[str, ...] = ()) -> None:
        """Parse `text` (the whole command, or code found in a string); the commands it
        runs inherit `elevated` and `unsafe` from the command that runs the string."""
        before = len(self.commands)
        self._parse(text.replace("\\\n", ""), depth)  # line continuations join words
        if elevated or unsafe:
            for i in range(before, len(self.commands)):
                found = self.commands[i]
                self.commands[i] = replace(
                    found, elevated=found.elevated or elevated, unsafe=found.unsafe + unsafe
                )

    def _parse(self, text: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.fail("strings nested too deeply")
            return
        if len(text) > MAX_COMMAND_CHARS:
            self.fail("a nested command is too long")
            self.nodes = MAX_NODES + 1
            return
        data = text.encode("utf-8", "surrogatepass")
        tree = _parser().parse(_parseable(data))
        self._walk(tree.root_node, data, depth)

    def _walk(self, root: Node, data: bytes, depth: int) -> None:
        built: dict[int, SimpleCommand | None] = {}
        functions: dict[str, list[int]] = {}  # name → [self calls, uses of &]
        stack: list[tuple[Node, str]] = [(root, "")]
        while stack:
            node, function = stack.pop()
            self.nodes += 1
            if self.nodes > MAX_NODES:
                return
            kind = node.type
            if node.is_error or node.is_missing:
                self.fail("the shell syntax is incomplete or not understood")
            if kind == "command":
                command = self._command(node, data, depth)
                built[node.id] = command
                if command is not None and function and command.name == function:
                    functions[function][0] += 1
            elif kind == "function_definition":
                name_node = node.child_by_field_name("name")
                name = _text(name_node, data) if name_node is not None else ""
                functions.setdefault(name, [0, 0])
                self.functions.append(name)
                if b"&" in data[node.start_byte : node.end_byte]:
                    functions[name][1] += 1
                function = name
            elif kind == "file_redirect":
                self._redirect(node, data, depth, built)
            elif kind == "variable_assignment":
                self._assignment(node, data)
            elif kind in ("heredoc_redirect", "herestring_redirect"):
                self._fed_text(node, data, depth, built)
            elif kind == "pipeline":
                self._pending_pipelines.append(node)
            for child in reversed(node.children):
                stack.append((child, function))
        for pipeline in self._pending_pipelines:
            self._pipeline(pipeline, data, depth, built)
        self._pending_pipelines.clear()
        for calls, background in functions.values():
            if calls >= 2 or (calls >= 1 and background):
                self.fork_bomb = True

    # ------------------------------------------------------------------ commands

    def _command(self, node: Node, data: bytes, depth: int) -> SimpleCommand | None:
        words: list[Word] = []
        unsafe: list[str] = []
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                name = child.child_by_field_name("name")
                value = child.child_by_field_name("value")
                word = word_of(value, data) if value is not None else Word("")
                note = (
                    assignment_note(_text(name, data), word.text, word.literal) if name is not None else None
                )
                if note:
                    unsafe.append(note)
            elif kind == "command_name":
                inner = child.children[0] if child.children else child
                words.append(word_of(inner, data))
            elif child.is_named and kind not in _REDIRECTS and kind != "comment":
                words.append(word_of(child, data))
        if not words:
            return None
        source = _text(node, data)
        command = SimpleCommand(tuple(words), source, unsafe=tuple(unsafe))
        return self._add(command, depth)

    def _add(self, command: SimpleCommand, depth: int) -> SimpleCommand | None:
        """Normalise `command` and record it (or the commands it runs)."""

        def reparse(text: str, elevated: bool, unsafe: tuple[str, ...]) -> None:
            self.parse(text, depth + 1, elevated, unsafe)

        normal = normalise(command, reparse, self.fail)
        if normal is not None:
            self.commands.append(normal)
            for nested in find_exec_commands(normal, reparse):
                self.commands.append(nested)
        return normal

    def _assignment(self, node: Node, data: bytes) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            return
        word = word_of(value, data) if value is not None else Word("")
        self.assignments.append((_text(name, data), word))

    def _redirect(self, node: Node, data: bytes, depth: int, built: dict[int, SimpleCommand | None]) -> None:
        op = ""
        target: Node | None = node.child_by_field_name("destination")
        for child in node.children:
            if not child.is_named:
                op = child.type
        if op == "<" and target is not None:
            self._code_from_file(node, word_of(target, data), data, depth, built)
            return
        if target is None or op not in _WRITE_OPS and not (op == ">&" and target.type != "number"):
            return
        word = word_of(target, data)
        if word.literal and (
            word.text in _SAFE_TARGETS or word.text.startswith("/dev/fd/") or word.text == "-"
        ):
            return
        self.writes.append(Redirect(op, word))

    def _code_from_file(
        self, node: Node, source: Word, data: bytes, depth: int, built: dict[int, SimpleCommand | None]
    ) -> None:
        """`python3 < script.py`, `sh < s.sh`: a shell or interpreter running a file fed
        on its input runs code no rule can see."""
        consumer = _consumer(node)
        if consumer is None:
            return
        command = self._command_for(consumer, data, depth, built)
        if command is not None and reads_code(command):
            self.commands.append(replace(command, inline_code=source.text, inline_flag="<"))

    def _fed_text(self, node: Node, data: bytes, depth: int, built: dict[int, SimpleCommand | None]) -> None:
        """A heredoc or herestring fed to a shell (or to `cat … | sh`) is code too."""
        if node.type == "heredoc_redirect":
            body = next((c for c in node.children if c.type == "heredoc_body"), None)
            text = _text(body, data) if body is not None else ""
        else:
            last = node.children[-1] if node.children else None
            if last is None:
                return
            word = word_of(last, data)
            text = word.text if word.literal else ""
        consumer = _consumer(node)
        if consumer is None:
            return
        command = self._command_for(consumer, data, depth, built)
        piped = next((c for c in node.children if c.type == "pipeline"), None)
        if piped is not None and command is not None and command.name in ("cat", "echo", "printf"):
            stages = [c for c in piped.children if c.type in ("command", "redirected_statement")]
            targets = [self._command_for(s, data, depth, built) for s in stages]
            command = next((t for t in targets if t is not None and reads_code(t)), None)
        if command is None or not reads_code(command):
            return
        if command.name in SHELLS:
            self.parse(text, depth + 1)
        else:
            self.commands.append(replace(command, inline_code=text, inline_flag="<<"))

    def _command_for(
        self, node: Node, data: bytes, depth: int, built: dict[int, SimpleCommand | None]
    ) -> SimpleCommand | None:
        if node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            if body is None:
                return None
            node = body
        if node.type != "command":
            return None
        if node.id not in built:
            before = len(self.commands)
            built[node.id] = self._command(node, data, depth)
            del self.commands[before:]  # found again by the walk itself
        return built[node.id]

    def _pipeline(self, node: Node, data: bytes, depth: int, built: dict[int, SimpleCommand | None]) -> None:
        stages = [c for c in node.children if c.type in ("command", "redirected_statement")]
        previous: SimpleCommand | None = None
        for stage in stages:
            command = self._command_for(stage, data, depth, built)
            if command is not None and previous is not None and reads_code(command):
                if previous.name in ("curl", "wget", "fetch", "aria2c", "nc", "ncat", "http", "https"):
                    self.network_code = True
                elif previous.name in ("echo", "printf") and all(w.literal for w in previous.words[1:]):
                    args = [w.text for w in previous.words[1:] if not w.text.startswith("-")]
                    code = " ".join(args).replace("\\n", "\n")
                    if command.name in SHELLS:
                        self.parse(code, depth + 1)
                    else:
                        self.commands.append(replace(command, inline_code=code, inline_flag="|"))
                else:
                    self.commands.append(replace(command, opaque="runs code read from a pipe"))
            previous = command


_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


def _consumer(node: Node) -> Node | None:
    parent = node.parent
    if parent is None:
        return None
    if parent.type == "command":
        return parent
    if parent.type == "redirected_statement":
        body = parent.child_by_field_name("body")
        # the grammar puts `a && b <<EOF` under one redirection; bash gives it to `b`
        while body is not None and body.type in ("list", "pipeline") and body.named_children:
            body = body.named_children[-1]
        return body
    return None


def _text(node: Node, data: bytes) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


# --------------------------------------------------------------------------- words


def word_of(node: Node, data: bytes) -> Word:
    """The value of one shell word, with quotes and backslashes resolved."""
    kind = node.type
    source = _text(node, data)
    if kind == "word":
        return Word(_unbackslash(source), not _BRACES.search(source))
    if kind == "number":
        return Word(source)
    if kind == "raw_string":
        return Word(source[1:-1])
    if kind == "ansi_c_string":
        try:
            return Word(codecs.decode(source[2:-1].encode("latin-1", "backslashreplace"), "unicode_escape"))
        except (UnicodeDecodeError, ValueError):
            return Word(source, False)
    if kind in ("string", "translated_string"):
        parts: list[str] = []
        for child in node.children:
            if child.type == "string_content":
                parts.append(re.sub(r'\\([\\"$`\n])', r"\1", _text(child, data)))
            elif child.type == '"' or child.type == '$"':
                continue
            else:
                return Word(source, False)
        return Word("".join(parts))
    if kind == "concatenation":
        pieces = [word_of(child, data) for child in node.children]
        return Word("".join(p.text for p in pieces) if all(p.literal for p in pieces) else source,
                    all(p.literal for p in pieces))  # fmt: skip
    return Word(source, False)


_BRACES = re.compile(r"(?<!\\)\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}")  # brace expansion: {a,b} {1..3}


def _unbackslash(text: str) -> str:
    if "\\" not in text:
        return text
    return re.sub(r"\\(\n|.)", lambda m: "" if m.group(1) == "\n" else m.group(1), text, flags=re.DOTALL)


# --------------------------------------------------------------------------- helpers for rules


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


def pattern_words(pattern: str) -> str:
    """A rule's command pattern in the form commands are matched in: words split as
    the shell would, quotes removed (glob characters inside quotes escaped, so they
    stay literal), backslash escapes kept for the glob matcher, joined by spaces."""
    words: list[str] = []
    current: list[str] = []
    started = False
    quote = ""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"' and i + 1 < n and pattern[i + 1] in '\\"$`':
                current.append(_glob_escape(pattern[i + 1]))
                i += 1
            else:
                current.append(_glob_escape(c))
        elif c == "\\" and i + 1 < n:
            current.append(pattern[i : i + 2])
            started = True
            i += 1
        elif c in "'\"":
            quote = c
            started = True
        elif c.isspace():
            if current or started:
                words.append("".join(current))
            current, started = [], False
        else:
            current.append(c)
        i += 1
    if current or started:
        words.append("".join(current))
    return " ".join(words)


def _glob_escape(c: str) -> str:
    return "\\" + c if c in "*?[]\\" else c


def describe(parsed: ParsedCommand) -> dict[str, Any]:
    """A summary for debugging and previews."""
    return {
        "parts": list(parsed.parts),
        "writes": [f"{r.op} {r.target.text}" for r in parsed.writes],
        "complete": parsed.complete,
    }
