"""Files that grant permissions or run code later: no tool writes them without a
person's approval, in any mode (yolo included), and no rule can allow it.

Inside the workspace: `.wyckoff/` (config, ignore, hooks, commands, agents, skills),
`.mcp.json`, `.claude/settings.json`, `.claude/settings.local.json`, `.claude/`
`commands/`, `hooks/`, `agents/` and `skills/`, `.git/hooks/`, `.git/config`,
`.envrc`. Anywhere: Wyckoff's user config folder (and the folders given as
`extra_roots`), Claude Code's user settings (`~/.claude/settings*.json`, `~/.claude.json`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

PROJECT_FILES = (".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".git/config", ".envrc")
PROJECT_FOLDERS = (
    ".wyckoff",
    ".claude/commands",
    ".claude/hooks",
    ".claude/agents",
    ".claude/skills",
    ".git/hooks",
)
HOME_FILES = (".claude/settings.json", ".claude/settings.local.json", ".claude.json")


def protected_reason(path: Path, workspace: Path, extra_roots: Iterable[Path] = ()) -> str | None:
    """Why writing `path` (resolved) needs a person's approval every time, or None."""
    root = Path(os.path.realpath(workspace))
    text = str(path)
    for folder in extra_roots:
        folder = Path(os.path.realpath(folder))
        if path == folder or folder in path.parents:
            return f"{text} is Wyckoff's own configuration"
    if path == root or root in path.parents:
        rel = path.relative_to(root).as_posix()
        for name in PROJECT_FILES:
            if rel == name:
                return f"{rel} grants permissions or runs code later"
        for name in PROJECT_FOLDERS:
            if rel == name or rel.startswith(name + "/"):
                return f"{rel} grants permissions or runs code later"
    home = Path(os.path.realpath(Path.home()))
    for name in HOME_FILES:
        if path == home / name:
            return f"{text} grants permissions to Claude Code-compatible tools"
    return None
