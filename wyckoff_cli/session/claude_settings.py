"""What a trusted `.claude/settings*.json` (or `~/.claude/settings.json`) `permissions`
block widens, applied to a session (runtime/claude_permissions.py reads it, trust as
its hooks'):

- `additionalDirectories`: more workspace roots. The file tools read and write there
  without asking about an outside path (protected paths inside — `.git`, `.claude/` … —
  still ask, as in the workspace), and the sandbox leaves them writable with those
  paths read-only. Relative entries are relative to the workspace root; `~` is the
  home folder; a folder that does not exist is skipped, with a problem listed.
- `defaultMode`: the mode a session starts in (Claude Code's names mapped through
  core/claude_names.py: `acceptEdits` is auto-edit, `bypassPermissions` yolo, `dontAsk`
  default) when neither `--mode` nor Wyckoff's own `permission_mode` chooses one; a
  managed `disable_yolo` still wins (session/managed_modes.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from wyckoff_cli.runtime.hook_config import HookSet, resolve_directory


def extra_roots(hooks: HookSet) -> tuple[Path, ...]:
    """The trusted `additionalDirectories`, resolved, that exist as folders."""
    found: list[Path] = []
    for raw in hooks.claude_permissions().directories:
        path = resolve_directory(raw, hooks.root)
        if path.is_dir() and path not in found:
            found.append(path)
    return tuple(found)


def default_mode(builder: Any) -> str | None:
    """The trusted `defaultMode` as Wyckoff's mode, unless Wyckoff's own config sets
    `permission_mode` (None then, or when no file sets one)."""
    from wyckoff_cli.storage.config import read_toml

    for path in builder.workspace.loaded.files:
        try:
            if "permission_mode" in (read_toml(path) or {}):
                return None
        except Exception:  # reported when the workspace is opened
            continue
    if not builder.load_user_hooks:
        return None
    mode: str | None = builder.user_hooks.hooks.claude_permissions().default_mode
    return mode
