"""`${CLAUDE_PLUGIN_ROOT}` in a plugin's hook command, replaced as Claude Code does (in
the text, before the shell runs it) but quoted for where it stands, so a folder with a
space or a quote in its path (macOS's `Application Support`) stays one word: outside
quotes it becomes a single-quoted word, inside double quotes an escaped string, inside
single quotes the quote is closed and reopened around it. `$CLAUDE_PLUGIN_ROOT` (no
braces) is left to the shell, which has it in the environment (runtime/user_hooks.py)."""

from __future__ import annotations

import shlex

VARIABLE = "${CLAUDE_PLUGIN_ROOT}"


def _in_double_quotes(path: str) -> str:
    return "".join("\\" + ch if ch in '"\\$`' else ch for ch in path)


def _in_single_quotes(path: str) -> str:
    return path.replace("'", "'\\''")


def substitute_root(command: str, root: str) -> str:
    """`command` with every `${CLAUDE_PLUGIN_ROOT}` replaced by `root`, quoted for its place."""
    if VARIABLE not in command:
        return command
    out: list[str] = []
    quote = ""  # "", "'" or '"'
    i = 0
    while i < len(command):
        if command.startswith(VARIABLE, i):
            if quote == '"':
                out.append(_in_double_quotes(root))
            elif quote == "'":
                out.append(_in_single_quotes(root))
            else:
                out.append(shlex.quote(root))
            i += len(VARIABLE)
            continue
        ch = command[i]
        if ch == "\\" and quote != "'" and i + 1 < len(command):
            out.append(command[i : i + 2])  # an escaped character keeps its meaning
            i += 2
            continue
        if ch in "'\"" and (not quote or quote == ch):
            quote = "" if quote else ch
        out.append(ch)
        i += 1
    return "".join(out)
