"""`.gitignore` matching and an ignore-aware directory walk.

Which files the listing and search tools see: everything under the workspace except
`.git/` and what ignore files exclude. Ignore files, in increasing priority:
`.git/info/exclude`, `.gitignore` in the root and in every sub-folder (deeper files
win), and the project's `.wyckoff/ignore` (same syntax, relative to the root). Files
under an ignored folder stay ignored, as in git.

Pattern syntax follows gitignore(5): `#` comments, `!` negation, a trailing `/` for
folders only, a `/` elsewhere anchors the pattern to the ignore file's folder, `*`,
`?`, `[...]`, and `**` across folders. `{a,b}` alternatives are accepted too (ripgrep
globs have them), which is what the `grep` and `glob` tools' filters need.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

IGNORE_FILES = (".gitignore",)
PROJECT_IGNORE = ".wyckoff/ignore"
ALWAYS_SKIPPED = frozenset({".git"})


@dataclass(frozen=True, slots=True)
class Pattern:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


def glob_to_regex(glob: str, *, anchored: bool) -> str:
    """Translate one gitignore-style glob (without `!` or trailing `/`) to a regex body
    matched against a `/`-separated relative path."""
    out: list[str] = []
    i, n = 0, len(glob)
    depth = 0  # inside {…}
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                before_ok = i == 0 or glob[i - 1] == "/"
                after = glob[i + 2 : i + 3]
                if before_ok and after == "/":
                    out.append("(?:.*/)?")  # `**/`: zero or more folders
                    i += 3
                    continue
                if before_ok and after == "":
                    out.append(".*")  # trailing `/**` or a lone `**`
                    i += 2
                    continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = _class_end(glob, i)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    out.extend(")" * depth)
    body = "".join(out)
    return body if anchored else "(?:.*/)?" + body


def _class_end(glob: str, start: int) -> int:
    i = start + 1
    if i < len(glob) and glob[i] in "!^":
        i += 1
    if i < len(glob) and glob[i] == "]":
        i += 1
    while i < len(glob):
        if glob[i] == "]":
            return i
        i += 1
    return -1


@lru_cache(maxsize=4096)
def compile_line(line: str) -> Pattern | None:
    """One ignore-file line as a `Pattern`, or None for blanks and comments."""
    text = line.rstrip("\n").rstrip("\r")
    if not text or text.startswith("#"):
        return None
    # Trailing spaces are ignored unless escaped.
    while text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1]
    if not text:
        return None
    negated = text.startswith("!")
    if negated or text.startswith("\\!") or text.startswith("\\#"):
        text = text[1:]
    dir_only = text.endswith("/")
    text = text.rstrip("/")
    if not text:
        return None
    anchored = "/" in text
    text = text.lstrip("/")
    regex = re.compile(glob_to_regex(text, anchored=anchored) + r"\Z", re.DOTALL)
    return Pattern(regex, negated, dir_only)


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """The patterns of one ignore file, relative to `base` ("" for the root)."""

    base: str
    patterns: tuple[Pattern, ...]

    def verdict(self, rel: str, is_dir: bool) -> bool | None:
        """True (ignored), False (re-included by `!`) or None (no pattern matched)."""
        if self.base:
            if not rel.startswith(self.base + "/"):
                return None
            rel = rel[len(self.base) + 1 :]
        for pattern in reversed(self.patterns):
            if pattern.dir_only and not is_dir:
                continue
            if pattern.regex.match(rel):
                return not pattern.negated
        return None


def parse_ignore_text(text: str, base: str = "") -> IgnoreFile:
    patterns = tuple(p for p in (compile_line(line) for line in text.splitlines()) if p is not None)
    return IgnoreFile(base, patterns)


def _read_ignore(path: Path, base: str) -> IgnoreFile | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    parsed = parse_ignore_text(text, base)
    return parsed if parsed.patterns else None


@dataclass
class IgnoreMatcher:
    """Ignore rules of one workspace. Sub-folder `.gitignore` files are read as the
    walk reaches them (or when a path below them is checked)."""

    root: Path
    _per_dir: dict[str, tuple[IgnoreFile, ...]] = field(default_factory=dict)
    _top: tuple[IgnoreFile, ...] = ()
    _project: IgnoreFile | None = None

    @classmethod
    def for_root(cls, root: Path) -> IgnoreMatcher:
        matcher = cls(Path(os.path.realpath(root)))
        top = [_read_ignore(matcher.root / ".git" / "info" / "exclude", "")]
        matcher._top = tuple(f for f in top if f is not None)
        matcher._project = _read_ignore(matcher.root / PROJECT_IGNORE, "")
        return matcher

    def _files_in(self, rel_dir: str) -> tuple[IgnoreFile, ...]:
        cached = self._per_dir.get(rel_dir)
        if cached is None:
            folder = self.root / rel_dir if rel_dir else self.root
            base = rel_dir
            found = [_read_ignore(folder / name, base) for name in IGNORE_FILES]
            cached = tuple(f for f in found if f is not None)
            self._per_dir[rel_dir] = cached
        return cached

    def _chain(self, rel_dir: str) -> list[IgnoreFile]:
        """Ignore files that apply to entries of `rel_dir`, lowest priority first."""
        chain = list(self._top)
        parts = rel_dir.split("/") if rel_dir else []
        for depth in range(len(parts) + 1):
            chain.extend(self._files_in("/".join(parts[:depth])))
        if self._project is not None:
            chain.append(self._project)
        return chain

    def _decide(self, chain: list[IgnoreFile], rel: str, is_dir: bool) -> bool:
        for ignore_file in reversed(chain):
            verdict = ignore_file.verdict(rel, is_dir)
            if verdict is not None:
                return verdict
        return False

    def is_ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether the root-relative POSIX path `rel` is ignored (an ignored parent
        folder makes everything below it ignored)."""
        if rel in ("", "."):
            return False
        parts = rel.split("/")
        if any(part in ALWAYS_SKIPPED for part in parts):
            return True
        for depth in range(1, len(parts) + 1):
            sub = "/".join(parts[:depth])
            parent = "/".join(parts[: depth - 1])
            entry_is_dir = is_dir if depth == len(parts) else True
            if self._decide(self._chain(parent), sub, entry_is_dir):
                return True
        return False

    def walk(self, start_rel: str, max_depth: int | None = None) -> Iterator[WalkEntry]:
        """Entries under the root-relative folder `start_rel`, ignored ones skipped
        (ignored folders are not entered; symlinked folders are listed, not
        followed). Depth 1 is the folder's own entries."""
        start_rel = "" if start_rel in ("", ".") else start_rel
        stack: list[tuple[str, int]] = [(start_rel, 1)]
        while stack:
            rel_dir, depth = stack.pop()
            chain = self._chain(rel_dir)
            folder = self.root / rel_dir if rel_dir else self.root
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.name in ALWAYS_SKIPPED:
                    continue
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if self._decide(chain, rel, is_dir):
                    yield WalkEntry(rel, entry, is_dir, ignored=True)
                    continue
                yield WalkEntry(rel, entry, is_dir, ignored=False)
                if is_dir and (max_depth is None or depth < max_depth):
                    stack.append((rel, depth + 1))


@dataclass(frozen=True, slots=True)
class WalkEntry:
    rel: str  # root-relative POSIX path
    entry: os.DirEntry[str]
    is_dir: bool
    ignored: bool


class GlobFilter:
    """A ripgrep-style `--glob` filter for files found in a search: a pattern without
    `/` matches the file name at any depth, `{a,b}` gives alternatives, and a leading
    `!` excludes matching files and folders instead of selecting files."""

    def __init__(self, glob: str) -> None:
        self.text = glob
        pattern = compile_line(glob)
        if pattern is None:
            raise ValueError(f"empty glob {glob!r}")
        self._pattern = pattern

    def accepts(self, rel: str) -> bool:
        """Whether a file at search-relative path `rel` is searched."""
        regex = self._pattern.regex
        if not self._pattern.negated:
            return bool(regex.match(rel))
        parts = rel.split("/")
        return not any(regex.match("/".join(parts[:depth])) for depth in range(1, len(parts) + 1))
