"""The data the shell normaliser works from (shellcommand.py): shells, the variables
that change what runs, interpreters' inline-code options, and the wrappers it looks
through with the options that take a value."""

from __future__ import annotations

import re

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "rbash"})
SYSTEM_BIN_DIRS = ("/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/local/bin/", "/usr/local/sbin/",
                   "/opt/homebrew/bin/", "/snap/bin/")  # fmt: skip
# Assignments that change which program runs or what it loads.
UNSAFE_VARIABLES = frozenset(
    {"PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH",
     "BASH_ENV", "ENV", "PROMPT_COMMAND", "IFS", "SHELLOPTS", "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
     "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "PYTHONSTARTUP",
     "PERL5OPT", "NODE_OPTIONS", "RUBYOPT"}
)  # fmt: skip
# Variables naming a program that runs later (a pager, an editor, a helper, a load
# path); a value that is a plain well-known program is fine (`GIT_PAGER=cat`).
CODE_VARIABLES = frozenset(
    {"PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
     "LESSOPEN", "LESSCLOSE", "BROWSER", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "GIT_EXTERNAL_DIFF",
     "GIT_PROXY_COMMAND", "PYTHONPATH", "PERL5LIB", "PERLLIB", "RUBYLIB", "NODE_PATH", "PYTHONHOME"}
)  # fmt: skip
_PLAIN_HELPERS = frozenset({"cat", "less", "more", "most", "true", "false", ":", "vim", "vi", "nvim", "nano",
                            "emacs", "ed", "code", "subl", "delta", "bat", "head", "tail", ""})  # fmt: skip


def plain_helper(value: str, literal: bool = True) -> bool:
    """Whether a CODE_VARIABLES value is a plain well-known program (`less -R`)."""
    if not literal or re.search(r"[;|&$`()<>\n]", value):
        return False
    words = value.split()
    return not words or words[0].rsplit("/", 1)[-1] in _PLAIN_HELPERS


def assignment_note(name: str, value: str, literal: bool = True) -> str | None:
    """Why an assignment `NAME=VALUE` changes what runs (an `unsafe` note), or None."""
    if name in UNSAFE_VARIABLES or (name in CODE_VARIABLES and not plain_helper(value, literal)):
        return f"sets {name}"
    return None


# Interpreters and the options that take inline code.
INLINE_CODE_FLAGS: dict[str, tuple[str, ...]] = {
    "python": ("-c",), "pypy": ("-c",), "pypy3": ("-c",),
    "node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval", "-p", "--print"), "deno": ("eval",),
    "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",), "lua": ("-e",), "luajit": ("-e",),
    "Rscript": ("-e",), "julia": ("-e",), "osascript": ("-e",), "awk": (), "tclsh": (),
}  # fmt: skip


WRAPPER_VALUES: dict[str, frozenset[str]] = {
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "setsid": frozenset(),
    "time": frozenset({"-f", "-o", "--format", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "sudo": frozenset(
        {
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-U",
            "-T",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--chdir",
            "--role",
            "--type",
            "--other-user",
        }
    ),  # fmt: skip
    "doas": frozenset({"-u", "-C"}),
    "xargs": frozenset(
        {
            "-I",
            "-n",
            "-P",
            "-d",
            "-E",
            "-L",
            "-s",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--eof",
            "--max-lines",
            "--max-chars",
            "--arg-file",
        }
    ),  # fmt: skip
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "busybox": frozenset(),
    "coproc": frozenset(),
    "chrt": frozenset(),
    "taskset": frozenset(),
    "strace": frozenset(
        {
            "-o",
            "-e",
            "-p",
            "-s",
            "-u",
            "-E",
            "-a",
            "-b",
            "-I",
            "-O",
            "-S",
            "-X",
            "-P",
            "--output",
            "--signal",
            "--trace",
            "--user",
            "--env",
        }
    ),
    "ltrace": frozenset({"-o", "-e", "-p", "-s", "-u", "-a", "-n", "-l", "-E", "-x", "-A", "-D", "-F"}),
    "unbuffer": frozenset(),
    "chronic": frozenset(),
    "fakeroot": frozenset({"-l", "-s", "-i", "--lib", "--faked"}),
    "pkexec": frozenset({"--user", "-u"}),
    "torsocks": frozenset({"-a", "-P", "-u", "-p"}),
    "proxychains": frozenset({"-f"}),
    "proxychains4": frozenset({"-f"}),
    "catchsegv": frozenset(),
    "dbus-run-session": frozenset({"--config-file", "--dbus-daemon"}),
    "xvfb-run": frozenset({"-n", "-s", "-e", "-f", "-p", "--server-num", "--server-args", "--error-file"}),
}
# Programs running a command given as one string (`su -c CMD`, `script -c CMD`,
# `flock FILE -c CMD`, `sg GROUP -c CMD`): the options that take the string, and the
# options that take another value.
STRING_RUNNERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "su": (
        frozenset({"-c", "--command", "--session-command"}),
        frozenset({"-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"}),
    ),
    "runuser": (
        frozenset({"-c", "--command", "--session-command"}),
        frozenset({"-s", "--shell", "-g", "--group", "-G", "--supp-group", "-u", "--user"}),
    ),
    "script": (
        frozenset({"-c", "--command"}),
        frozenset(
            {
                "-E",
                "--echo",
                "-I",
                "--log-in",
                "-O",
                "--log-out",
                "-B",
                "--log-io",
                "-T",
                "--log-timing",
                "-m",
                "--logging-format",
                "-o",
                "--output-limit",
            }
        ),
    ),
    "flock": (
        frozenset({"-c", "--command"}),
        frozenset({"-w", "--wait", "--timeout", "-E", "--conflict-exit-code"}),
    ),
    "sg": (frozenset({"-c"}), frozenset()),
}
ELEVATING = frozenset({"sudo", "doas", "pkexec", "su", "runuser"})
GIT_VALUES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env",
                         "--super-prefix", "--exec-path", "--list-cmds", "--attr-source"})  # fmt: skip
GIT_UNSAFE = ("-c", "--config-env", "--exec-path")
