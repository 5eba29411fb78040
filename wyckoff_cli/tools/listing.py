"""`list_dir` and `glob`: what is in the workspace, ignore files respected, newest first."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.ignore import IgnoreMatcher, glob_to_regex
from wyckoff_cli.tools.permissions.workspace import display_path, relative_to_root, resolve_for_tool

LIST_CAP = 250
GLOB_CAP = 200
WALK_LIMIT = 50_000  # entries examined before a listing gives up counting
_MAGIC = re.compile(r"[*?\[{\\]")

LIST_DESCRIPTION = """\
List a folder's entries, newest modification first, as paths relative to the \
workspace root (folders end with `/`, symlinks show their target).

- `path`: the folder (default: the workspace root). `depth`: how many levels to go \
down (1 = the folder's own entries, at most 5).
- Entries excluded by .gitignore or .wyckoff/ignore, and .git/, are left out (their \
number is noted); list an ignored folder by naming it in `path`.
- At most 250 entries are shown; the rest are counted in a "more" note.
Use glob to find files by name pattern and grep to find text in files."""

GLOB_DESCRIPTION = """\
Find files whose path matches a glob pattern, newest modification first, as paths \
relative to the workspace root.

- `pattern`: relative to `path` (default: the workspace root). `*` matches within one \
folder, `**` across folders, `?` one character, `[abc]` a set, `{ts,tsx}` alternatives. \
Examples: `**/*.py`, `src/**/test_*.py`, `*.{md,txt}`, `docs/*`. A pattern without `/` \
matches only at the top of `path`; use `**/NAME` to search every folder.
- Only files are returned; end the pattern with `/` to find folders instead (`**/tests/`).
- Files excluded by .gitignore or .wyckoff/ignore, and .git/, are skipped.
- At most 200 paths are shown; the rest are counted."""


@dataclass(frozen=True, slots=True)
class _Item:
    shown: str
    mtime: float


def _start(ctx: ToolContext, raw: str) -> tuple[IgnoreMatcher, str, Path]:
    """(matcher, start folder relative to the matcher's root, the folder)."""
    path = resolve_for_tool(ctx, raw, reading=True)
    shown = display_path(path, ctx.workspace)
    if not path.exists():
        raise ToolError(f"{shown} does not exist.")
    if not path.is_dir():
        raise ToolError(f"{shown} is a file, not a folder: use read_file to read it.")
    rel = relative_to_root(path, ctx.workspace)
    if rel is None:  # an approved folder outside the workspace: its own ignore files apply
        return IgnoreMatcher.for_root(path), "", path
    return IgnoreMatcher.for_root(ctx.workspace), "" if rel == "." else rel, path


def _prefix(base: Path, ctx: ToolContext) -> str:
    shown = display_path(base, ctx.workspace)
    return "" if shown == "." else shown + "/"


def _list(ctx: ToolContext, raw: str, depth: int) -> str:
    matcher, start_rel, base = _start(ctx, raw)
    prefix = _prefix(base, ctx)
    items: list[_Item] = []
    ignored = 0
    examined = 0
    for walked in matcher.walk(start_rel, max_depth=depth):
        examined += 1
        if examined > WALK_LIMIT:
            break
        if walked.ignored:
            ignored += 1
            continue
        if ctx.hidden(matcher.root / walked.rel):
            continue  # refused by a deny rule
        rel_to_base = walked.rel[len(start_rel) + 1 :] if start_rel else walked.rel
        shown = prefix + rel_to_base + ("/" if walked.is_dir else "")
        try:
            stat = walked.entry.stat(follow_symlinks=False)
            mtime = stat.st_mtime
        except OSError:
            mtime = 0.0
        if walked.entry.is_symlink():
            try:
                shown += f" -> {Path(walked.entry.path).readlink()}"
            except OSError:
                shown += " -> ?"
        items.append(_Item(shown, mtime))
    items.sort(key=lambda item: (-item.mtime, item.shown))
    where = display_path(base, ctx.workspace)
    if not items:
        lines = [f"{where}/ is empty" + (" apart from ignored entries." if ignored else ".")]
    else:
        noun = "entry" if len(items) == 1 else "entries"
        lines = [f"{where}/ — {len(items)} {noun} (depth {depth}), newest first:"]
        lines.extend(item.shown for item in items[:LIST_CAP])
    if len(items) > LIST_CAP:
        lines.append(f"[… {len(items) - LIST_CAP} more entries not shown: list a sub-folder or lower depth]")
    if examined > WALK_LIMIT:
        lines.append(f"[stopped after {WALK_LIMIT:,} entries: list a smaller folder]")
    if ignored:
        lines.append(f"[{ignored} ignored entries not shown (.gitignore, .wyckoff/ignore)]")
    return "\n".join(lines)


async def _list_run(args: dict[str, Any], ctx: ToolContext) -> str:
    depth = int(args.get("depth") or 1)
    return await asyncio.to_thread(_list, ctx, str(args.get("path") or "."), depth)


list_dir = Tool(
    name="list_dir",
    description=LIST_DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Folder to list (default: workspace root)."},
            "depth": {"type": "integer", "minimum": 1, "maximum": 5, "description": "Levels (default 1)."},
        },
        "additionalProperties": False,
    },
    run=_list_run,
    concurrency_safe=True,
    kind="read",
    path_args=("path",),
    summary_arg="path",
)


# --------------------------------------------------------------------------- glob


def _split_pattern(pattern: str) -> tuple[str, str]:
    """(literal leading folders, the rest): `src/**/*.py` → ("src", "**/*.py")."""
    segments = pattern.split("/")
    literal: list[str] = []
    while len(segments) > 1 and not _MAGIC.search(segments[0]):
        literal.append(segments.pop(0))
    return "/".join(s for s in literal if s not in ("", ".")), "/".join(segments)


def _glob(ctx: ToolContext, pattern: str, raw: str) -> str:
    pattern = pattern.strip()
    if pattern.startswith(("/", "~")) or ".." in pattern.split("/"):
        raise ToolError(
            "the pattern must be relative to `path` and must not contain `..`: "
            "pass the folder to search as `path` instead."
        )
    want_dirs = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if pattern.startswith("./"):
        pattern = pattern[2:]
    matcher, start_rel, base = _start(ctx, raw)
    literal, rest = _split_pattern(pattern)
    if literal:
        start_rel = f"{start_rel}/{literal}" if start_rel else literal
        folder = matcher.root / start_rel
        if not folder.is_dir():
            return f"No {'folders' if want_dirs else 'files'} match {pattern!r}: {literal}/ does not exist."
        resolve_for_tool(ctx, str(folder), reading=True)  # a symlinked folder may point out
    regex = re.compile(glob_to_regex(rest, anchored=True) + r"\Z", re.DOTALL)
    max_depth = None if "**" in rest else rest.count("/") + 1
    prefix_len = len(start_rel) + 1 if start_rel else 0
    found: list[_Item] = []
    examined = 0
    for walked in matcher.walk(start_rel, max_depth=max_depth):
        examined += 1
        if examined > WALK_LIMIT * 4:
            break
        if walked.ignored or walked.is_dir != want_dirs or ctx.hidden(matcher.root / walked.rel):
            continue
        if regex.match(walked.rel[prefix_len:]):
            try:
                mtime = walked.entry.stat(follow_symlinks=False).st_mtime
            except OSError:
                mtime = 0.0
            rel_path = matcher.root / walked.rel
            shown = display_path(rel_path, ctx.workspace) + ("/" if want_dirs else "")
            found.append(_Item(shown, mtime))
    found.sort(key=lambda item: (-item.mtime, item.shown))
    if not found:
        hint = ""
        if "/" not in pattern and not want_dirs:
            hint = f" (a pattern without `/` matches only at the top; try '**/{pattern}')"
        where = display_path(base, ctx.workspace)
        return f"No {'folders' if want_dirs else 'files'} match {pattern!r} in {where}{hint}."
    noun = ("folder" if want_dirs else "file") + ("" if len(found) == 1 else "s")
    lines = [f"{len(found)} {noun} {'matches' if len(found) == 1 else 'match'} {pattern!r}, newest first:"]
    lines.extend(item.shown for item in found[:GLOB_CAP])
    if len(found) > GLOB_CAP:
        lines.append(f"[… {len(found) - GLOB_CAP} more not shown: narrow the pattern or the path]")
    return "\n".join(lines)


async def _glob_run(args: dict[str, Any], ctx: ToolContext) -> str:
    return await asyncio.to_thread(_glob, ctx, args["pattern"], str(args.get("path") or "."))


glob = Tool(
    name="glob",
    description=GLOB_DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "minLength": 1, "description": "Glob, e.g. **/*.py."},
            "path": {"type": "string", "description": "Folder to search (default: workspace root)."},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    run=_glob_run,
    concurrency_safe=True,
    kind="read",
    path_args=("path",),
    summary_arg="pattern",
)
