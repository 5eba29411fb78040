"""Resolving a path argument against the workspace root (no tool types: a leaf module).

Relative paths are joined to the workspace root, `~` is expanded and symlinks are
resolved, so a link inside the workspace pointing out of it counts as outside. A hard
link cannot be resolved that way (its other names cannot be found cheaply), so a
regular file with more than one name counts as possibly outside (`hard_link_count`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from wyckoff_cli.core.errors import ToolError

__all__ = ["hard_link_count", "is_within", "relative_to_root", "resolve_path"]


def resolve_path(root: Path, raw: str) -> Path:
    """`raw` as an absolute path with symlinks resolved (missing tails are kept)."""
    if "\x00" in raw:
        raise ToolError(f"path {raw!r} contains a NUL character")
    text = raw.strip() or "."
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = Path(os.path.realpath(root)) / path
    try:
        return Path(os.path.realpath(path))
    except OSError as exc:  # e.g. a symlink loop
        raise ToolError(f"cannot resolve path {raw!r}: {exc.strerror or exc}") from None


def is_within(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or inside it (both already resolved)."""
    return path == folder or folder in path.parents


def relative_to_root(path: Path, root: Path) -> str | None:
    """The POSIX path of `path` relative to `root`, or None when outside it."""
    root = Path(os.path.realpath(root))
    if not is_within(path, root):
        return None
    rel = path.relative_to(root).as_posix()
    return rel or "."


def hard_link_count(path: Path) -> int:
    """How many names the regular file at `path` has when more than one (a hard link:
    another name may lie outside the workspace); 0 for a file with one name, a folder,
    a device or a missing path."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return 0
    if not stat.S_ISREG(info.st_mode) or info.st_nlink <= 1:
        return 0
    return int(info.st_nlink)
