"""Claude Code's user folder as Wyckoff's user level, unless the user turned it off.

`~/.claude` (or `$CLAUDE_CONFIG_DIR`, storage/paths.py `claude_home`) holds a Claude Code
user's own `CLAUDE.md`, `settings.json` hooks, `commands/`, `agents/` and `skills/`;
Wyckoff reads them after its own user files. `[compat] claude_home = false` in the
user's `config.toml` (only there: a project cannot turn it on or off) stops that.
"""

from __future__ import annotations

from pathlib import Path

from wyckoff_cli.storage import paths
from wyckoff_cli.storage.config import read_toml


def claude_user_dir() -> Path | None:
    """Claude Code's user folder when `[compat] claude_home` is on (the default), else None."""
    try:
        data = read_toml(paths.config_file()) or {}
    except Exception:  # a broken config.toml is reported by load_config with file and line
        return paths.claude_home()
    compat = data.get("compat")
    if isinstance(compat, dict) and compat.get("claude_home") is False:
        return None
    return paths.claude_home()
