"""The pure-Python grep, used only where the `rg` binary cannot run.

It follows ripgrep's behaviour as far as the grep tool exposes it: ignore files and
`.git/` skipped (an explicitly named file is always searched), binary files (a NUL
byte) skipped, `--glob` filters, case modes, context lines. Patterns are Python
regular expressions, which agree with ripgrep's syntax for everything common.
"""

from __future__ import annotations

import re
from pathlib import Path

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.grep_results import FileHits, GrepRequest
from wyckoff_cli.tools.ignore import GlobFilter, IgnoreMatcher

MAX_FILE_BYTES = 50_000_000


def smart_is_insensitive(pattern: str) -> bool:
    """ripgrep's smart case: insensitive unless the pattern has an upper-case letter
    (escapes such as `\\S` and `\\W` do not count)."""
    return not any(ch.isupper() for ch in re.sub(r"\\.", "", pattern))


def compile_pattern(request: GrepRequest) -> re.Pattern[str]:
    flags = re.MULTILINE
    if request.case == "insensitive" or (request.case == "smart" and smart_is_insensitive(request.pattern)):
        flags |= re.IGNORECASE
    try:
        return re.compile(request.pattern, flags)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {request.pattern!r}: {exc}") from None


def search_file(path: Path, shown: str, regex: re.Pattern[str], request: GrepRequest) -> FileHits | None:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data:
        return None
    text = data.decode("utf-8", errors="replace")
    if regex.search(text) is None:
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    matching = [i for i, line in enumerate(lines) if regex.search(line.rstrip("\r"))]
    if not matching:
        return None
    hits = FileHits(shown, count=len(matching))
    if request.mode != "content":
        return hits
    context = request.context
    wanted: list[int] = []
    seen: set[int] = set()
    for index in matching:
        for near in range(max(0, index - context), min(len(lines), index + context + 1)):
            if near not in seen:
                seen.add(near)
                wanted.append(near)
    wanted.sort()
    match_set = set(matching)
    previous = None
    for index in wanted:
        if previous is not None and index != previous + 1:
            hits.lines.append((None, "", False))
        hits.lines.append((index + 1, lines[index].rstrip("\r"), index in match_set))
        previous = index
    return hits


def python_grep(
    request: GrepRequest,
    target: Path,
    matcher: IgnoreMatcher,
    start_rel: str,
    shown: str,
    root_prefix: str,
) -> list[FileHits]:
    """Search `target`: a file (shown as `shown`), or the folder `start_rel` under the
    matcher's root, whose files are shown as `root_prefix` + their root-relative path."""
    regex = compile_pattern(request)
    globs = GlobFilter(request.glob) if request.glob else None
    if target.is_file():
        hit = search_file(target, shown, regex, request)
        return [hit] if hit else []
    results: list[FileHits] = []
    for walked in matcher.walk(start_rel):
        if walked.ignored or walked.is_dir or walked.entry.is_symlink():
            continue  # like rg: symlinks are not followed
        rel_to_search = walked.rel[len(start_rel) + 1 :] if start_rel else walked.rel
        if globs is not None and not globs.accepts(rel_to_search):
            continue
        hit = search_file(Path(walked.entry.path), root_prefix + walked.rel, regex, request)
        if hit is not None:
            results.append(hit)
    return results
