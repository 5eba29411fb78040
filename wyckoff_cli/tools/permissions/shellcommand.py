"""Shell commands as data, and their normalisation (see shellparse.py for the parser).

`normalise()` strips what takes no part in what runs: assignments, transparent
wrappers (`env`, `command`, `builtin`, `exec`, `nice`, `nohup`, `timeout`, `time`,
`stdbuf`, `ionice`, `setsid`, `busybox`, `xargs`, `strace`, `ltrace`, `unbuffer`,
`fakeroot`, `sudo`, `doas`, `pkexec` …), system paths of programs and git's global
options; it hands code given as strings (`bash -c`, `eval`, `watch`, `env -S`,
`su -c`, `runuser -c`, `script -c`, `flock -c`, `sg -c`, `trap`) back to the parser
and finds interpreter inline code and the commands `find -exec` runs. The tables it
works from (wrappers and their options, variables that change what runs) are in
shelltables.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from wyckoff_cli.tools.permissions.shelltables import (
    CODE_VARIABLES,
    ELEVATING,
    GIT_UNSAFE,
    GIT_VALUES,
    INLINE_CODE_FLAGS,
    SHELLS,
    STRING_RUNNERS,
    SYSTEM_BIN_DIRS,
    UNSAFE_VARIABLES,
    WRAPPER_VALUES,
    assignment_note,
    plain_helper,
)

__all__ = [
    "CODE_VARIABLES",
    "SHELLS",
    "UNSAFE_VARIABLES",
    "ParsedCommand",
    "Redirect",
    "SimpleCommand",
    "Word",
    "assignment_note",
    "basename",
    "find_exec_commands",
    "find_start_paths",
    "normalise",
    "plain_helper",
    "program_name",
    "reads_code",
]

_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)*)?")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


@dataclass(frozen=True, slots=True)
class Word:
    text: str  # the literal value, or the source text when the word is not literal
    literal: bool = True


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One simple command, normalised (see the module docstring)."""

    words: tuple[Word, ...]
    source: str = ""  # the command as written
    elevated: bool = False  # run through sudo or doas
    unsafe: tuple[str, ...] = ()  # why no allow rule may cover it (PATH=…, git -c …)
    inline_code: str | None = None  # code given on the command line to an interpreter
    inline_flag: str = ""  # the option that introduced it (`-c`, `-e`)
    input_args: bool = False  # more arguments come from input (xargs, find -exec)
    chdir: str | None = None  # a folder the command runs in (git -C, env -C)
    opaque: str = ""  # the command runs code that cannot be seen (a reason)

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words)

    @property
    def name(self) -> str:
        return self.words[0].text if self.words else ""

    @property
    def literal_name(self) -> bool:
        return bool(self.words) and self.words[0].literal and not self.opaque

    @property
    def text(self) -> str:
        """What rules match: the words joined by single spaces."""
        return " ".join(self.argv)


@dataclass(frozen=True, slots=True)
class Redirect:
    op: str
    target: Word


@dataclass(frozen=True, slots=True)
class ParsedCommand:
    source: str
    commands: tuple[SimpleCommand, ...] = ()
    writes: tuple[Redirect, ...] = ()  # output redirections onto files
    complete: bool = True  # False: syntax the grammar could not follow (never allowed by rule)
    too_long: bool = False  # not followed at all: too long or too complex
    network_code: bool = False  # downloaded text piped into a shell or interpreter
    fork_bomb: bool = False
    problem: str = ""  # why it is incomplete
    assignments: tuple[tuple[str, Word], ...] = ()  # NAME=value anywhere in it, in order
    functions: tuple[str, ...] = ()  # names of the functions it defines

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(c.text for c in self.commands)


def program_name(path: str) -> str:
    """`/usr/bin/git` → `git`; other paths (`./git`, `bin/x`) are kept as written."""
    if path.startswith(SYSTEM_BIN_DIRS) and path.count("/") >= 2:
        return path.rsplit("/", 1)[-1]
    return path


def basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def reads_code(command: SimpleCommand) -> bool:
    """A shell or interpreter reading its program from standard input."""
    name = basename(command.name)
    if name not in SHELLS and not _PYTHON.fullmatch(name) and name not in ("node", "perl", "ruby", "php"):
        return False
    rest = [w for w in command.words[1:] if not w.literal or not w.text.startswith(("-", "+"))]
    return not rest or (rest[0].literal and rest[0].text == "-")


def _options(words: list[Word], with_value: frozenset[str], start: int = 1) -> int:
    """Index of the first word after the options of a wrapper (`--` ends them)."""
    i = start
    while i < len(words):
        word = words[i]
        if not word.literal or not word.text.startswith("-") or word.text == "-":
            return i
        if word.text == "--":
            return i + 1
        if word.text in with_value:
            i += 2
        else:
            i += 1
    return i


Reparse = Callable[[str, bool, tuple[str, ...]], None]  # text, elevated, unsafe
Fail = Callable[[str], None]


def normalise(command: SimpleCommand, reparse: Reparse, fail: Fail, _rounds: int = 0) -> SimpleCommand | None:
    """Strip wrappers and options that take no part in what runs (see the module
    docstring). Code in strings is handed to `reparse`; returns None when the command
    is only such a wrapper around other code (`bash -c '…'`, `eval …`)."""
    words = list(command.words)
    elevated = command.elevated
    unsafe = list(command.unsafe)
    input_args = command.input_args
    chdir = command.chdir
    for _ in range(12):
        if not words or not words[0].literal:
            break
        base = program_name(words[0].text)
        words[0] = Word(base)
        if base == "command" and len(words) > 1 and words[1].text in ("-v", "-V"):
            break
        if base not in WRAPPER_VALUES:
            break
        start = 1
        if base == "env":
            start, split = _env_prefix(words, unsafe)
            if split is not None:
                reparse(split + " " + " ".join(w.text for w in words[start:]), elevated, tuple(unsafe))
                return None
        elif base == "timeout":
            start = _options(words, WRAPPER_VALUES[base])
            start += 1  # the duration
        elif base in ("chrt", "taskset"):
            start = _options(words, frozenset()) + 1
        elif base == "nice" and len(words) > 1 and re.fullmatch(r"-\d+", words[1].text):
            start = 2
        else:
            start = _options(words, WRAPPER_VALUES[base])
        if base in ELEVATING:
            elevated = True
            while start < len(words) and words[start].literal and _ASSIGNMENT.match(words[start].text):
                var, value = words[start].text.split("=", 1)
                note = assignment_note(var.rstrip("+"), value)
                if note:
                    unsafe.append(note)
                start += 1
        if base == "xargs":
            input_args = True
            if start >= len(words):
                words = [Word("echo")]
                break
        if start >= len(words):
            break  # the wrapper alone (`env`, `time`): it is the command
        words = words[start:]
    if not words:
        return None
    if words[0].literal and program_name(words[0].text) in STRING_RUNNERS:
        return _string_runner(words, command, elevated, unsafe, reparse)
    if words[0].literal and program_name(words[0].text) == "trap":
        handler = [w for w in words[1:] if not (w.literal and w.text.startswith("-"))][:1]
        if handler and handler[0].literal:
            reparse(handler[0].text, elevated, tuple(unsafe))
            return None
        if handler:
            return SimpleCommand(tuple(words), command.source, elevated, tuple(unsafe),
                                 opaque="`trap` of text only known when it runs")  # fmt: skip
    if words[0].literal:
        name = basename(words[0].text)
        if name in SHELLS:
            script = _shell_script(words)
            if script is not None:
                if script.literal:
                    reparse(script.text, elevated, tuple(unsafe))
                    return None
                return SimpleCommand(tuple(words), command.source, elevated, tuple(unsafe),
                                     opaque="runs a shell on text only known when it runs")  # fmt: skip
        if name in SHELLS or name in ("source", "."):
            operands = [w for w in words[1:] if not (w.literal and w.text.startswith(("-", "+")))]
            if operands and not operands[0].literal:
                return SimpleCommand(tuple(words), command.source, elevated, tuple(unsafe),
                                     opaque="runs a script only known when it runs")  # fmt: skip
        if name == "eval" or name == "watch":
            rest = words[1:] if name == "eval" else words[_options(words, frozenset({"-n", "-d"})) :]
            if all(w.literal for w in rest):
                reparse(" ".join(w.text for w in rest), elevated, tuple(unsafe))
                return None
            return SimpleCommand(tuple(words), command.source, elevated, tuple(unsafe),
                                 opaque=f"`{name}` of text only known when it runs")  # fmt: skip
        if name in ("export", "declare", "typeset", "readonly", "local"):  # `command export PATH=…`
            for word in words[1:]:
                if _ASSIGNMENT.match(word.text):
                    var, value = word.text.split("=", 1)
                    note = assignment_note(var.rstrip("+"), value, word.literal)
                    if note:
                        unsafe.append(note)
        if name == "git":
            words, git_unsafe, git_dir = _strip_git_options(words)
            unsafe += git_unsafe
            chdir = git_dir or chdir
        code, flag = _inline_code(words)
        return SimpleCommand(
            tuple(words), command.source, elevated, tuple(unsafe), code, flag, input_args, chdir
        )
    return SimpleCommand(tuple(words), command.source, elevated, tuple(unsafe), None, "", input_args, chdir)


def _string_runner(
    words: list[Word], command: SimpleCommand, elevated: bool, unsafe: list[str], reparse: Reparse
) -> SimpleCommand | None:
    """`su -c CMD`, `script -qc CMD`, `flock FILE -c CMD`, `flock FILE CMD…`: the string
    is parsed as code (as root for su and runuser); without one it is the command."""
    name = program_name(words[0].text)
    takes_string, takes_value = STRING_RUNNERS[name]
    elevated = elevated or name in ELEVATING
    operands: list[int] = []
    i = 1
    while i < len(words):
        word = words[i]
        text = word.text
        option = text.split("=", 1)[0]
        if name in ("flock", "sg") and len(operands) == 1 and option not in takes_string:
            # `flock FILE COMMAND…`, `sg GROUP COMMAND…`: the rest is the command, options included
            inner = SimpleCommand(tuple(words[i:]), command.source, elevated, tuple(unsafe))
            return normalise(inner, reparse, _ignore)
        cluster = text.startswith("-") and not text.startswith("--") and len(text) > 1 and "c" in text[1:]
        if word.literal and (option in takes_string or cluster):
            value = text.split("=", 1)[1] if "=" in text else None
            script = Word(value) if value is not None else (words[i + 1] if i + 1 < len(words) else None)
            if script is None:
                break
            if script.literal:
                reparse(script.text, elevated, tuple(unsafe))
                return None
            return SimpleCommand(tuple(words), command.source, elevated, tuple(unsafe),
                                 opaque=f"`{name}` runs text only known when it runs")  # fmt: skip
        if word.literal and text == "--" and name == "runuser" and i + 1 < len(words):
            inner = SimpleCommand(tuple(words[i + 1 :]), command.source, elevated, tuple(unsafe))
            return normalise(inner, reparse, _ignore)  # runuser -u USER -- COMMAND…
        if word.literal and option in takes_value and "=" not in text:
            i += 2
            continue
        if not (word.literal and text.startswith("-")):
            operands.append(i)
        i += 1
    return SimpleCommand(tuple(words), command.source, elevated, tuple(unsafe))


def _env_prefix(words: list[Word], unsafe: list[str]) -> tuple[int, str | None]:
    """For `env`: index of the command after options and NAME=VALUE words, and the
    text of `-S STRING` when given."""
    i = 1
    split: str | None = None
    while i < len(words):
        text = words[i].text
        if not words[i].literal:
            break
        if text in ("-S", "--split-string") and i + 1 < len(words):
            split = words[i + 1].text
            i += 2
        elif text.startswith("--split-string="):
            split = text.split("=", 1)[1]
            i += 1
        elif text in WRAPPER_VALUES["env"]:
            i += 2
        elif text == "--" or text.startswith("-") and text != "-":
            i += 1
        elif _ASSIGNMENT.match(text):
            var, value = text.split("=", 1)
            note = assignment_note(var.rstrip("+"), value)
            if note:
                unsafe.append(note)
            i += 1
        else:
            break
    return i, split


def _shell_script(words: list[Word]) -> Word | None:
    """The script of `bash -c SCRIPT` (any option cluster containing `c`), else None."""
    command_mode = False
    i = 1
    while i < len(words):
        word = words[i]
        text = word.text
        if not word.literal:
            return word if command_mode else None
        if text == "--":
            i += 1
            break
        if text in ("-o", "+o", "--rcfile", "--init-file", "-O", "+O"):
            i += 2
            continue
        if text.startswith("--"):
            i += 1
            continue
        if text.startswith(("-", "+")) and len(text) > 1:
            if text.startswith("-") and "c" in text[1:]:
                command_mode = True
            i += 1
            continue
        break
    if command_mode and i < len(words):
        return words[i]
    return None


def _strip_git_options(words: list[Word]) -> tuple[list[Word], list[str], str | None]:
    out = [words[0]]
    unsafe: list[str] = []
    chdir: str | None = None
    i = 1
    while i < len(words) and words[i].literal and words[i].text.startswith("-"):
        text = words[i].text
        option = text.split("=", 1)[0]
        if option in GIT_UNSAFE:
            unsafe.append(f"git {option}")
        if text in GIT_VALUES:
            if text == "-C" and i + 1 < len(words):
                chdir = words[i + 1].text
            i += 2
        else:
            i += 1
    out.extend(words[i:])
    return out, unsafe, chdir


def _inline_code(words: list[Word]) -> tuple[str | None, str]:
    name = basename(words[0].text)
    key = "python" if _PYTHON.fullmatch(name) else name
    flags = INLINE_CODE_FLAGS.get(key)
    if flags is None:
        return None, ""
    for i, word in enumerate(words[1:], 1):
        text = word.text
        if not word.literal:
            continue
        hit = text in flags or (
            key in ("python", "perl", "ruby") and re.fullmatch(r"-[A-Za-z]*[ceE]", text) and text[-1] in "ceE"
        )
        if hit and (key != "python" or text.endswith("c")) and i + 1 < len(words):
            return words[i + 1].text, text
        if not text.startswith("-") and key != "deno":
            break
    return None, ""


def find_exec_commands(command: SimpleCommand, reparse: Reparse) -> list[SimpleCommand]:
    """`find … -exec CMD {} ;` runs CMD on what it finds: a command of its own, whose
    `{}` stands for the search's start folders."""
    if basename(command.name) != "find":
        return []
    words = command.words
    starts = [w for w in words[1 : _expression_start(words)]] or [Word(".")]
    found: list[SimpleCommand] = []
    i = 1
    while i < len(words):
        if words[i].text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            body: list[Word] = []
            while j < len(words) and words[j].text not in (";", "+"):
                body.append(words[j])
                j += 1
            if body:
                expanded: list[Word] = []
                for word in body:
                    expanded.extend(starts if word.text == "{}" else [word])
                inner = SimpleCommand(tuple(expanded), command.source, command.elevated, command.unsafe)
                nested = normalise(inner, reparse, _ignore)
                if nested is not None:
                    found.append(replace(nested, input_args=True))
            i = j
        i += 1
    return found


def _expression_start(words: tuple[Word, ...]) -> int:
    for i, word in enumerate(words[1:], 1):
        if word.text.startswith(("-", "(", "!")) and word.literal:
            return i
    return len(words)


def find_start_paths(command: SimpleCommand) -> list[Word]:
    return list(command.words[1 : _expression_start(command.words)]) or [Word(".")]


def _ignore(_text: str) -> None:
    return None
