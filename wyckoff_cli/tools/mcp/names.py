"""Model-facing names of MCP tools: `mcp__SERVER__TOOL`.

Every vendor accepts `[A-Za-z0-9_-]`, at most 64 characters, starting with a letter, so
other characters become `_`, a doubled `__` inside a part is collapsed (it separates the
parts), and a name that is too long keeps its start plus a short hash of the original.
Collisions (two tools sanitising to the same name) are resolved deterministically: the
tools are taken in order of their original names and a later one gets `_2`, `_3`, …
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

PREFIX = "mcp"
SEPARATOR = "__"
MAX_LENGTH = 64
_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def sanitize_part(text: str) -> str:
    cleaned = _INVALID.sub("_", text)
    cleaned = re.sub(r"_{2,}", "_", cleaned).strip("_")
    return cleaned or "x"


def tool_name(server: str, tool: str) -> str:
    """`mcp__SERVER__TOOL`, sanitised and at most 64 characters."""
    name = f"{PREFIX}{SEPARATOR}{sanitize_part(server)}{SEPARATOR}{sanitize_part(tool)}"
    if len(name) <= MAX_LENGTH:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return name[: MAX_LENGTH - 9].rstrip("_") + "_" + digest


def server_prefix(server: str) -> str:
    """What every tool name of `server` starts with (for `mcp__SERVER__*` rules)."""
    return f"{PREFIX}{SEPARATOR}{sanitize_part(server)}{SEPARATOR}"


def assign_names(server: str, tools: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Original tool name → unique model-facing name, avoiding `taken` names."""
    used = set(taken)
    out: dict[str, str] = {}
    for original in sorted(set(tools)):
        base = tool_name(server, original)
        name = base
        counter = 2
        while name in used:
            suffix = f"_{counter}"
            name = base[: MAX_LENGTH - len(suffix)] + suffix
            counter += 1
        used.add(name)
        out[original] = name
    return out


def prompt_command(server: str, prompt: str) -> str:
    """The slash command of a server's prompt: `mcp__SERVER__PROMPT`."""
    return tool_name(server, prompt)


def wider_rules(name: str) -> tuple[str, str] | None:
    """For a call of the MCP tool `name`: the rules "always for this tool" (any
    arguments) and "always for this server" (`mcp__SERVER__*`) save; None for other tools."""
    parts = name.split(SEPARATOR, 2)
    if len(parts) != 3 or parts[0] != PREFIX or not parts[1] or not parts[2]:
        return None
    return name, f"{PREFIX}{SEPARATOR}{parts[1]}{SEPARATOR}*"


def always_rule(chosen: str | None, offered: str | None, name: str) -> str | None:
    """The rule an "always" answer saves: the wider one the person `chosen`, when it is
    one offered for this call, else the request's own (`offered`)."""
    wider = wider_rules(name) or ()
    return chosen if chosen is not None and chosen in wider else offered
