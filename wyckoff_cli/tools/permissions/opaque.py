"""Commands that run code the parser cannot see, for deny rules and the destructive list.

A deny rule is matched against the commands the parser finds (shellparse.py). Some
commands run other code that never appears on the command line: an interpreter's
inline code (`python3 -c "os.system('git push')"`), a script file (`sh s.sh`,
`. s.sh`, `./s.sh`), a Makefile, a git alias (`git -c alias.t='!touch X' t`), a
program by a path that could be a renamed copy of anything (`./t`), an alias, a
changed `PATH`; an installed program that is a denied one under another name
(`same_program`). `opaque_reason()` says why one command is such a command; while a
deny rule exists for the shell, the policy asks about it in every mode, yolo
included, naming the reason ("runs code the rules cannot see: python3 -c").

`script_reason()` is the narrower list the destructive check uses with the sandbox
off: a shell script or a program by path (whose content, readable or not, may
change before it runs), sourcing a file.
"""

from __future__ import annotations

import os
import re
import shutil

from wyckoff_cli.tools.permissions.shellcommand import (
    CODE_VARIABLES,
    SHELLS,
    UNSAFE_VARIABLES,
    ParsedCommand,
    SimpleCommand,
    basename,
    plain_helper,
)

# Interpreters: a non-option operand is a script file (or `-m module`).
INTERPRETERS = frozenset(
    {"python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "perl", "ruby",
     "php", "lua", "luajit", "Rscript", "julia", "tclsh", "wish", "expect", "osascript", "pwsh",
     "powershell", "irb", "jshell", "groovy", "scala", "kotlin", "elixir", "erl", "escript", "guile",
     "racket", "sbcl", "clisp", "ocaml", "swift", "dotnet", "java", "gjs"}
)  # fmt: skip
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)*)?")
# Build tools and task runners: they run recipes from a file the rules cannot see.
RECIPE_RUNNERS = frozenset({"make", "gmake", "bmake", "pmake", "just", "rake", "ninja", "task", "mage"})
# Test runners, build tools and package managers run the project's own code (conftest.py,
# build.rs, package.json scripts, setup.py): program → the sub-commands that do (empty: any use).
_PROJECT_CODE: dict[str, tuple[str, ...]] = {
    "npm": ("run", "run-script", "exec", "x", "install", "i", "ci", "test", "t", "start", "restart", "stop",
            "rebuild", "pack", "publish", "install-test", "it"),
    "pnpm": ("run", "exec", "dlx", "install", "i", "add", "test", "t", "start"),
    "yarn": ("", "run", "exec", "dlx", "install", "add", "test", "start"), "bun": ("run", "x", "install", "test"),
    "npx": (), "pnpx": (), "bunx": (), "pip": ("install", "wheel"), "pip3": ("install", "wheel"),
    "uv": ("run", "sync", "pip", "tool"), "uvx": (), "poetry": ("run", "install", "build"), "pipx": ("run",),
    "cargo": ("run", "build", "test", "bench", "install", "check", "clippy", "doc"), "go": ("run", "generate", "test"),
    "pytest": (), "py.test": (), "tox": (), "nox": (), "gradle": (), "gradlew": (), "mvn": (), "sbt": (),
    "ant": (), "bazel": (), "bundle": ("exec", "install"), "deno": ("run", "task", "test", "eval"),
    "composer": ("install", "update", "run-script", "run", "exec"), "dotnet": ("run", "test", "build"),
    "mix": (), "gem": ("install",), "run-parts": (), "capsh": (),
}  # fmt: skip
# Options that make a program run another program it is given (GTFOBins-style).
_RUNS_OPTION: dict[str, tuple[str, ...]] = {
    "tar": ("--to-command", "-I", "--use-compress-program", "--checkpoint-action", "--rsh-command",
            "--info-script", "--new-volume-script", "-F"),
    "rsync": ("-e", "--rsh", "--rsync-path"), "scp": ("-S",), "sort": ("--compress-program",),
    "split": ("--filter",), "zip": ("-TT", "--unzip-command"), "man": ("-P", "--pager", "-H", "--html"),
    "gdb": ("-ex", "-x", "--batch", "-batch", "--command", "-eval-command", "--eval-command"),
    "lldb": ("-o", "--one-line", "-s", "--source"),
    "vim": ("-c", "+", "-S", "--cmd", "-s"), "vi": ("-c", "+", "-S", "--cmd", "-s"),
    "nvim": ("-c", "+", "-S", "--cmd", "-s"), "view": ("-c", "+", "-S", "--cmd"), "vimdiff": ("-c", "+", "-S"),
    "emacs": ("--eval", "-l", "--load", "--batch", "-batch", "-f", "--funcall", "--script", "-x"),
}  # fmt: skip
# git sub-commands (and their options) that run a command they are given.
_GIT_RUNS = {"filter-branch": (), "filter-repo": (), "bisect": ("run",), "submodule": ("foreach",),
             "difftool": (), "mergetool": (), "rebase": ("-x", "--exec"), "grep": ("-O", "--open-files-in-pager")}  # fmt: skip
_AWK = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_AWK_RUNS = re.compile(r"\bsystem\s*\(|\|\s*getline|\|&|\b(?:print|printf)\b[^;}]*\|")
_SED_RUNS = re.compile(r"(?:^|[;{}\n]|\d|\$|/)\s*e(?:\s|$|;)|/[gpIiMm0-9w]*e[gpIiMm0-9]*\s*(?:$|[;}\n])")
# Shell builtins and keywords: never "not an installed program".
BUILTINS = frozenset(
    {"cd", "echo", "printf", "test", "[", "[[", "true", "false", "exit", "return", "export", "set",
     "unset", "shift", "read", "wait", "local", "declare", "typeset", "readonly", "let", "pushd",
     "popd", "dirs", "jobs", "fg", "bg", "kill", "type", "hash", "help", "history", "ulimit", "umask",
     "getopts", "break", "continue", ":", ".", "source", "alias", "unalias", "exec", "eval",
     "command", "builtin", "trap", "times", "shopt", "enable", "caller", "compgen", "complete",
     "compopt", "mapfile", "readarray", "disown", "suspend", "logout", "coproc", "select", "time",
     "fc", "bind", "{", "}", "!", "((", "function", "if", "then", "else", "fi", "for",
     "while", "until", "do", "done", "case", "esac", "in"}
)  # fmt: skip
_SYSTEM_PREFIXES = ("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/",
                    "/usr/lib/", "/usr/libexec/", "/opt/homebrew/bin/", "/snap/bin/")  # fmt: skip


# Programs that run a command they are given, later or somewhere else (a terminal
# multiplexer, a scheduler, a container, another host that may be this one).
_ELSEWHERE = frozenset({"tmux", "screen", "at", "batch", "systemd-run", "dtach", "nsenter", "chroot", "unshare",
                        "firejail", "bwrap", "ssh", "docker", "podman", "kubectl", "lxc-attach", "machinectl"})  # fmt: skip
_ELSEWHERE_QUIET = {"tmux": ("ls", "list-sessions", "list-windows", "list-panes", "attach", "attach-session",
                             "kill-session", "kill-server", "has-session", "-V"),
                    "screen": ("-ls", "-list", "-r", "-x"),
                    "docker": ("ps", "images", "logs", "inspect", "version", "info", "pull", "stop", "rm", "rmi"),
                    "podman": ("ps", "images", "logs", "inspect", "version", "info", "pull", "stop", "rm", "rmi"),
                    "kubectl": ("get", "describe", "logs", "version", "config", "apply", "delete")}  # fmt: skip


def _runs_option(name: str, command: SimpleCommand) -> str | None:
    """`tar --to-command=…`, `rsync -e …`, `vim -c '!…'`, `ssh -o ProxyCommand=…`, `git
    rebase -x …`, `ed` (its `!` runs commands): a program given a program to run."""
    texts = [w.text for w in command.words[1:]]
    if name in ("ed", "ex"):
        return f"{name} (its `!` command runs programs)"
    if name == "ssh" and any("command" in t.lower() for t in texts):
        return "ssh -o …Command (runs a local command)"
    if name == "git" and texts:
        sub, rest = texts[0], texts[1:]
        if sub in _GIT_RUNS and (not _GIT_RUNS[sub] or any(t.startswith(_GIT_RUNS[sub]) for t in rest)):
            return f"git {sub} (runs a command it is given)"
    options = _RUNS_OPTION.get(name)
    if options is None:
        return None
    for text in texts:
        hit = next((option for option in options if _spells(text, option)), None)
        if hit is not None:
            return f"{name} {hit} (runs a program it is given)"
    return None


def _spells(word: str, option: str) -> bool:
    """Whether `word` is `option`: alone, as `--option=VALUE`, or a short option with
    its value attached (`-Icmd`, `+cmd`)."""
    if word == option or word.startswith(option + "="):
        return True
    attached = option == "+" or (len(option) == 2 and option.startswith("-") and not word.startswith("--"))
    return attached and word.startswith(option)


def _runs_elsewhere(name: str, operands: list[str]) -> bool:
    if name in ("at", "batch"):
        return True  # reads the command from its input
    if not operands:
        return name not in ("tmux", "screen", "docker", "podman", "kubectl", "ssh")
    if name == "ssh":
        return len(operands) >= 2  # ssh HOST COMMAND
    quiet = _ELSEWHERE_QUIET.get(name, ())
    return operands[0] not in quiet


def _operands(command: SimpleCommand) -> list[str]:
    return [w.text for w in command.words[1:] if not (w.literal and w.text.startswith(("-", "+")))]


def _is_interpreter(name: str) -> bool:
    return name in INTERPRETERS or _PYTHON.fullmatch(name) is not None


def script_reason(command: SimpleCommand, *, recipes: bool = True) -> str | None:
    """Why `command` runs a script or recipe file whose content no rule sees, or None:
    a shell or `source` with a script operand, a program given by a path outside the
    system folders (`./s.sh`, `/tmp/t`), and with `recipes` a Makefile (make, just …)."""
    if not command.words or not command.words[0].literal:
        return None
    program = command.name
    name = basename(program)
    operands = _operands(command)
    if name in SHELLS and operands and command.inline_code is None:
        return f"{name} {operands[0]} (a script file)"
    if name in SHELLS and command.inline_flag == "<":
        return f"{name} < {command.inline_code} (a script file)"
    if name in ("source", ".") and command.words[1:]:
        return f"{name} {command.words[1].text} (a script file)"
    if "/" in program and not program.startswith(_SYSTEM_PREFIXES):
        return f"{program} (a program given by its path: it could be a copy of any program)"
    if recipes and name in RECIPE_RUNNERS:
        return f"{name} (runs recipes from a file)"
    return None


def opaque_reason(
    command: SimpleCommand, parsed: ParsedCommand, installed: dict[str, bool] | None = None
) -> str | None:
    """Why `command` runs code the rules cannot see, or None (see the module docstring).
    `installed` caches which program names are on PATH (one look-up per name)."""
    if not command.words:
        return None
    if command.opaque:
        return command.opaque
    if not command.words[0].literal:
        return f"`{command.name}` (a program only known when it runs)"
    if command.unsafe:
        return f"{command.unsafe[0]} (changes what runs)"
    name = basename(command.name)
    if command.inline_code is not None:
        flag = command.inline_flag
        shown = {"<<": "code fed on its input", "|": "code piped into it", "<": "code read from a file"}
        return f"{name} {shown.get(flag, flag)}"
    script = script_reason(command)
    if script is not None:
        return script
    operands = _operands(command)
    if _is_interpreter(name):
        module = next((w.text for w in command.words[1:] if w.text.startswith("-m")), None)
        if module is not None:
            return f"{name} -m (runs a module's code)"
        if operands:
            return f"{name} {operands[0]} (a script file)"
    if name in _AWK:
        if any(w.text.startswith("-f") or w.text == "--file" for w in command.words[1:]):
            return f"{name} -f (a program file)"
        if any(_AWK_RUNS.search(o) for o in operands):
            return f"{name} running commands (system or a pipe)"
    if name in ("sed", "gsed") and any(_SED_RUNS.search(o) for o in operands):
        return f"{name} with the `e` command (runs its input as commands)"
    if name in _ELSEWHERE and _runs_elsewhere(name, operands):
        return f"{name} (runs a command it is given, later or elsewhere)"
    if name == "hash" and any(w.text.startswith("-") and "p" in w.text for w in command.words[1:]):
        return "hash -p (a name standing for another program)"
    if name == "enable" and any(w.text.startswith("-") and "f" in w.text for w in command.words[1:]):
        return "enable -f (loads a builtin from a file)"
    if re.search(r"[*?\[]", command.name):
        return f"`{command.name}` (a program name that is a pattern, matched when it runs)"
    if name in _PROJECT_CODE:
        subs = _PROJECT_CODE[name]
        first = operands[0] if operands else ""
        if not subs or first in subs:
            label = f"{name} {first}".rstrip() if subs else name
            return f"{label} (runs the project's code: tests, build or package scripts)"
    runs = _runs_option(name, command)
    if runs is not None:
        return runs
    if name == "alias" and any("=" in o for o in operands):
        return "alias (a name standing for another command)"
    if name == "shopt" and "expand_aliases" in operands:
        return "shopt -s expand_aliases (aliases stand for other commands)"
    if command.input_args and (name in SHELLS or _is_interpreter(name) or name in ("env", "eval", "xargs")):
        return f"{name} running what arrives on its input"
    if name == "parallel":
        return "parallel (runs commands from its arguments or input)"
    if name not in BUILTINS and name not in parsed.functions and "/" not in command.name:
        known = installed if installed is not None else {}
        if name not in known:
            known[name] = shutil.which(name) is not None
        if known[name]:
            return None
        return f"`{name}` (not an installed program now: it could be anything written before it runs)"
    return None


_MAX_COMPARED = 64 * 1024 * 1024


def same_program(name: str, other: str) -> bool:
    """Whether the installed program `name` is `other` under another name: a symlink,
    hard link or byte-for-byte copy of it (`cp /usr/bin/touch ~/.local/bin/t`). A
    multi-call binary (busybox), which picks its applet by the name it is run as, is
    not another name."""
    if basename(name) == basename(other):
        return False
    found, target = shutil.which(name), shutil.which(other)
    if found is None or target is None:
        return False
    real, real_target = os.path.realpath(found), os.path.realpath(target)
    if basename(real_target) != basename(other):
        return False  # `other` is itself an alias of a multi-call binary
    try:
        mine, theirs = os.stat(real), os.stat(real_target)
    except OSError:
        return False
    if (mine.st_dev, mine.st_ino) == (theirs.st_dev, theirs.st_ino):
        return True
    if mine.st_size != theirs.st_size or mine.st_size > _MAX_COMPARED:
        return False
    return _same_bytes(real, real_target)


def _same_bytes(first: str, second: str) -> bool:
    try:
        with open(first, "rb") as a, open(second, "rb") as b:
            while True:
                chunk = a.read(1 << 20)
                if chunk != b.read(1 << 20):
                    return False
                if not chunk:
                    return True
    except OSError:
        return False


def first_opaque(parsed: ParsedCommand) -> tuple[str, str] | None:
    """The first command in `parsed` that runs code the rules cannot see (its text), and why."""
    for name, value in parsed.assignments:
        if name in UNSAFE_VARIABLES:
            return f"{name}=…", f"sets {name} (changes what runs)"
        if name in CODE_VARIABLES and not plain_helper(value.text, value.literal):
            return f"{name}=…", f"sets {name} (a program run later)"
    installed: dict[str, bool] = {}
    for command in parsed.commands:
        reason = opaque_reason(command, parsed, installed)
        if reason is not None:
            return command.text, reason
    return None
