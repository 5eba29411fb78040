"""`@path` imports in Claude Code's instruction files (`CLAUDE.md` and its kin).

A `CLAUDE.md` may say `See @README.md and @docs/style.md` or `@~/.claude/my-rules.md`:
each `@path` (outside code spans and fences) names a file, relative to the file that
names it (`~/` is the home folder). An imported file may import others, at most
`MAX_DEPTH` (5) levels deep. Only files inside the workspace or the home folder are
read; a name that is not such a file is left as it is (an `@someone` mention, say).
A file already read (an `AGENTS.md` the `CLAUDE.md` imports, or one imported twice) is
not read again, so its content is in the instructions once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MAX_DEPTH = 5
_IMPORT = re.compile(r"(?<![\w`@])@((?:~/|\.{1,2}/|/)?[\w.\-+/]+[\w])")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SPAN = re.compile(r"`[^`]*`")


@dataclass(frozen=True, slots=True)
class Imported:
    path: Path
    text: str
    by: Path  # the file that imported it


def import_names(text: str) -> list[str]:
    """The `@path` names in `text`, in order, skipping code fences and code spans."""
    names: list[str] = []
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        names.extend(match.group(1) for match in _IMPORT.finditer(_SPAN.sub("", line)))
    return names


def resolve_imports(
    path: Path,
    text: str,
    *,
    roots: tuple[Path, ...],
    seen: set[Path],
    read: Callable[[Path], str | None],
    depth: int = 1,
) -> list[Imported]:
    """The files `path`'s text imports (and theirs, to `MAX_DEPTH`), each once: `seen`
    holds the resolved paths already read and is updated."""
    if depth > MAX_DEPTH:
        return []
    found: list[Imported] = []
    for name in import_names(text):
        target = _target(path.parent, name)
        if target is None or target in seen or not _inside(target, roots) or not target.is_file():
            continue
        content = read(target)
        if content is None:
            continue
        seen.add(target)
        found.append(Imported(target, content.strip(), path))
        found.extend(resolve_imports(target, content, roots=roots, seen=seen, read=read, depth=depth + 1))
    return found


def _target(folder: Path, name: str) -> Path | None:
    try:
        if name.startswith("~/"):
            return (Path.home() / name[2:]).resolve()
        return (folder / name).resolve()
    except (OSError, RuntimeError):
        return None


def _inside(target: Path, roots: tuple[Path, ...]) -> bool:
    return any(target.is_relative_to(root) for root in roots)
