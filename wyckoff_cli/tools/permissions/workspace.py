"""Paths against the workspace root: resolution, containment and the `.git/` guard.

Every path argument is resolved the same way by the policy (to find paths outside
the workspace, which need an approval naming them) and by the tools (which refuse an
outside path nobody approved): relative paths are joined to the workspace root, `~`
is expanded and symlinks are resolved, so a link inside the workspace pointing out
of it counts as outside.

A regular file with more than one name (a hard link, `st_nlink > 1`) counts as outside
the workspace too, in every mode, for reading and writing: its other names cannot be
found cheaply and may lie outside (`ln ~/.ssh/id_rsa key` made inside the workspace).
Approving the path once lets that call use it, like any outside path.

Reads may also reach the runtime's results folder (`ToolContext.results_dir`), where
large tool results are offloaded for `read_file` to page through.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.paths import hard_link_count, is_within, relative_to_root, resolve_path

__all__ = [
    "display_path",
    "ensure_not_git_internal",
    "hard_link_count",
    "is_git_internal",
    "is_within",
    "outside_paths",
    "relative_to_root",
    "resolve_path",
    "resolve_for_tool",
]


def display_path(path: Path, root: Path) -> str:
    """What a result shows: workspace-relative inside the root, absolute outside."""
    rel = relative_to_root(path, root)
    return rel if rel is not None else str(path)


def is_git_internal(path: Path) -> bool:
    """Whether `path` is a `.git` folder (or file) or anything inside one."""
    return ".git" in path.parts


def ensure_not_git_internal(path: Path, shown: str) -> None:
    if is_git_internal(path):
        raise ToolError(
            f"{shown} is inside .git/: file tools never write git internals. "
            "Use git itself through run_shell (e.g. `git config`, `git commit`)."
        )


def _allowed_roots(ctx: ToolContext, *, reading: bool) -> list[Path]:
    roots = [Path(os.path.realpath(ctx.workspace)), *(Path(os.path.realpath(r)) for r in ctx.extra_roots)]
    if reading and ctx.results_dir is not None:
        roots.append(Path(os.path.realpath(ctx.results_dir)))
    return roots


def _inside(path: Path, roots: list[Path]) -> bool:
    """Inside one of `roots` and not a hard link (whose other names may lie outside)."""
    return any(is_within(path, root) for root in roots) and not hard_link_count(path)


def outside_paths(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> tuple[Path, ...]:
    """The resolved path arguments of a call that lie outside the workspace (reads may
    also use the results folder), hard-linked files included. Unresolvable paths are
    left for the tool to report."""
    found: list[Path] = []
    roots = _allowed_roots(ctx, reading=tool.kind == "read")
    for raw in _path_values(tool, args):
        try:
            path = resolve_path(ctx.workspace, raw)
        except ToolError:
            continue
        if not _inside(path, roots) and path not in found:
            found.append(path)
    return tuple(found)


def _path_values(tool: Tool, args: dict[str, Any]) -> Iterable[str]:
    for name in tool.path_args:
        value = args.get(name)
        if isinstance(value, str):
            yield value


def resolve_for_tool(ctx: ToolContext, raw: str, *, reading: bool) -> Path:
    """Resolve `raw` for a running tool; raise `ToolError` when it is outside the
    workspace (and the results folder, for reads) and was not approved."""
    path = resolve_path(ctx.workspace, raw)
    if _inside(path, _allowed_roots(ctx, reading=reading)):
        return path
    if any(is_within(path, approved) for approved in ctx.approved_outside_paths):
        return path
    links = hard_link_count(path)
    if links and any(is_within(path, root) for root in _allowed_roots(ctx, reading=reading)):
        raise ToolError(
            f"{path} is a hard link (the file has {links} names; the others may lie outside the "
            "workspace), so it is treated as outside the workspace and needs the user's approval "
            "for that exact path."
        )
    raise ToolError(
        f"{path} is outside the workspace ({ctx.workspace}). Paths outside it need the "
        "user's approval for that exact path; use a path inside the workspace, or ask the user."
    )


def describe_os_error(exc: OSError, shown: str) -> str:
    """A short message for a failed file operation, written for the model."""
    if exc.errno == errno.ENAMETOOLONG:
        return f"{shown}: the file name is too long for this file system"
    if exc.errno == errno.EACCES or exc.errno == errno.EPERM:
        return f"{shown}: permission denied"
    if exc.errno == errno.ENOTDIR:
        return f"{shown}: a part of the path is a file, not a folder"
    if exc.errno == errno.EISDIR:
        return f"{shown} is a folder, not a file"
    if exc.errno == errno.ENOENT:
        return f"{shown} does not exist"
    return f"{shown}: {exc.strerror or exc}"
