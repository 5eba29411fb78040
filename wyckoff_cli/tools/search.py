"""`grep`: regular-expression search with ripgrep's semantics and speed.

The `rg` binary comes from the `ripgrep` wheel (a dependency), installed next to the
Python interpreter; `shutil.which("rg")` is the second choice. Only when no binary is
found, or it cannot be executed on this machine, does the pure-Python search in
pygrep.py take over (the result says so).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.grep_results import (
    CONTENT_FILES,
    FILES_CAP,
    FileHits,
    Found,
    GrepRequest,
    Mode,
    format_results,
)
from wyckoff_cli.tools.ignore import PROJECT_IGNORE, IgnoreMatcher
from wyckoff_cli.tools.paths import hard_link_count, is_within
from wyckoff_cli.tools.permissions.workspace import display_path, relative_to_root, resolve_for_tool
from wyckoff_cli.tools.pygrep import python_grep

MAX_OUTPUT_BYTES = 32_000_000  # rg output read before the search is cut short
RgLocator = Callable[[], str | None]
_UNUSABLE: set[str] = set()  # binaries that failed to start in this process

DESCRIPTION = """\
Search file contents with a regular expression (ripgrep).

- `pattern`: a regular expression (ripgrep/Rust syntax: escape literal `.(){}[]*+?` \
with `\\`). `path`: a file or folder (default: the workspace root).
- `glob`: only files matching it, e.g. `*.py`, `*.{ts,tsx}`, `src/**/*.rs`, or `!*.min.js` to exclude.
- `case`: `sensitive` (default), `insensitive`, or `smart` (insensitive unless the \
pattern has a capital letter).
- `output`: `content` (default: matching lines as `NUM:text` under each file, with \
`context` lines around them as `NUM-text`), `files` (just the paths), or `count` \
(matching lines per file). Start with `files` or `count` for broad searches.
- Files excluded by .gitignore or .wyckoff/ignore, hidden .git/, and binary files are \
skipped. Output is capped (about 6,500 characters); what is left out is counted, so \
narrow with `path` or `glob` when you see that note.
Use this rather than running grep or rg through run_shell."""


def find_rg() -> str | None:
    """The `rg` installed with the `ripgrep` wheel (next to the interpreter), else on PATH."""
    name = "rg.exe" if os.name == "nt" else "rg"
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


def _rg_args(rg: str, request: GrepRequest, target: str, ignore_file: Path | None) -> list[str]:
    args = [
        rg,
        "--no-config",
        "--hidden",
        "--no-require-git",
        "--no-ignore-dot",
        "--no-ignore-global",
        "--glob",
        "!.git",
        "--color",
        "never",
        "--null",
        "--with-filename",
        "--no-messages",
        "--max-columns",
        "1000",
        "--max-columns-preview",
    ]
    args.append(
        {"sensitive": "--case-sensitive", "insensitive": "--ignore-case", "smart": "--smart-case"}[
            request.case
        ]
    )
    if ignore_file is not None:
        args += ["--ignore-file", str(ignore_file)]
    if request.glob:
        args += ["--glob", request.glob]
    if request.mode == "files":
        args.append("--files-with-matches")
    elif request.mode == "count":
        args.append("--count")
    else:
        args += ["--line-number", "--heading"]
        if request.context:
            args += ["--context", str(request.context)]
    args += ["--regexp", request.pattern, "--", target]
    return args


class RgUnavailable(Exception):
    """rg could not do this search; `lasting` when it cannot even start here."""

    def __init__(self, message: str, *, lasting: bool) -> None:
        super().__init__(message)
        self.lasting = lasting


async def _run_rg(args: list[str], cwd: Path, env: dict[str, str] | None) -> tuple[bytes, str, int, bool]:
    """(stdout, stderr, exit status, whether the output was cut). The output is read by
    a worker thread in large blocking reads: far cheaper than an event-loop wake-up
    for each of the thousands of small writes rg makes on a big result. Cancelling
    kills rg, which ends the thread's read."""
    try:
        proc = subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise RgUnavailable(str(exc), lasting=True) from None
    try:
        return await asyncio.to_thread(_collect, proc)
    except BaseException:
        with contextlib.suppress(OSError):
            proc.kill()
        raise


def _collect(proc: subprocess.Popen[bytes]) -> tuple[bytes, str, int, bool]:
    assert proc.stdout is not None and proc.stderr is not None
    chunks: list[bytes] = []
    size = 0
    cut = False
    with proc.stdout, proc.stderr:
        fd = proc.stdout.fileno()
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_OUTPUT_BYTES:
                cut = True
                proc.kill()
                break
        stderr = proc.stderr.read().decode("utf-8", errors="replace")  # only fatal errors (--no-messages)
    return b"".join(chunks), stderr, proc.wait(), cut


_MATCH_AFTER_NEWLINE = re.compile(rb"\n\d+:")  # literal first bytes: a fast scan
_MATCH_AFTER_NAME = re.compile(rb"\0\d+:")


def _matching_lines(chunk: bytes, context: bool) -> int:
    """Match lines (`NUM:text`) in a piece of `--heading` output: without context every
    line but the empty ones between files is one."""
    if not context:
        return chunk.count(b"\n") - chunk.count(b"\n\n")
    return len(_MATCH_AFTER_NEWLINE.findall(chunk)) + len(_MATCH_AFTER_NAME.findall(chunk))


def _parse(data: bytes, request: GrepRequest) -> Found:
    """rg's `--null` output as a `Found`, working on bytes in bulk: only the files
    that can be shown are split into lines (and decoded later, when shown)."""
    if request.mode == "files":
        paths = sorted(_clean(p) for p in data.split(b"\0") if p.strip(b"\n"))
        return Found([FileHits(p, count=1) for p in paths[:FILES_CAP]], len(paths), len(paths))
    if request.mode == "count":
        rows = sorted(line.partition(b"\0")[::2] for line in data.split(b"\n") if b"\0" in line)
        total = sum(int(count) for _, count in rows if count.isdigit())
        counted = [
            FileHits(_clean(path), count=int(count)) for path, count in rows[:FILES_CAP] if count.isdigit()
        ]
        return Found(counted, len(rows), total)
    # Content, with --heading: per file `PATH\0` then its lines; files end with an empty line.
    blocks = [block for block in data.split(b"\n\n") if b"\0" in block]
    total = _matching_lines(data, bool(request.context))
    order = sorted(range(len(blocks)), key=[b.partition(b"\0")[0] for b in blocks].__getitem__)
    files: list[FileHits] = []
    for index in order[:CONTENT_FILES]:
        path, _, body = blocks[index].partition(b"\0")
        body = body.strip(b"\n")
        count = _matching_lines(b"\n" + body, True) if request.context else body.count(b"\n") + 1
        files.append(FileHits(_clean(path), count=count, raw=body))
    return Found(files, len(blocks), total)


def _clean(path: bytes) -> bytes:
    return path[2:] if path.startswith(b"./") else path


async def grep_with_rg(
    rg: str, request: GrepRequest, target: Path, ctx: ToolContext
) -> tuple[Found, list[str]]:
    root = Path(os.path.realpath(ctx.workspace))
    rel = relative_to_root(target, root)
    ignore = root / PROJECT_IGNORE
    ignore_file = ignore if rel is not None and ignore.is_file() else None
    args = _rg_args(rg, request, "." if rel == "." else (rel or str(target)), ignore_file)
    env = dict(ctx.env) if ctx.env is not None else None
    data, stderr, status, cut = await _run_rg(args, root, env)
    if status < 0 and not cut:
        raise RgUnavailable(f"rg was killed by signal {-status}", lasting=False)
    if status == 2 and not data:
        message = stderr.strip().splitlines()
        raise ToolError("grep failed: " + (" ".join(message[-6:]) if message else "rg exited with status 2"))

    notes = ["[output was very large and the search was cut short]"] if cut else []
    return _parse(data, request), notes


def _python_fallback(request: GrepRequest, target: Path, ctx: ToolContext) -> list[FileHits]:
    root = Path(os.path.realpath(ctx.workspace))
    rel = relative_to_root(target, root)
    if rel is None:
        folder = target if target.is_dir() else target.parent
        matcher = IgnoreMatcher.for_root(folder)
        return python_grep(request, target, matcher, "", str(target), str(folder) + "/")
    matcher = IgnoreMatcher.for_root(root)
    return python_grep(request, target, matcher, "" if rel == "." else rel, rel, "")


def _without_denied(found: Found, ctx: ToolContext, notes: list[str]) -> Found:
    """Leave out files a deny rule refuses to read (a path deny covers grep too), and
    hard-linked files, whose other names may lie outside the workspace (a note says
    how many; reading one by its path asks)."""
    root = Path(os.path.realpath(ctx.workspace))
    kept: list[FileHits] = []
    dropped_lines = 0
    linked = 0
    for hits in found.files:
        path = Path(os.path.realpath(root / hits.path))
        if ctx.read_denied is not None and ctx.hidden(path):
            dropped_lines += hits.count
        elif hard_link_count(path) and not any(is_within(path, a) for a in ctx.approved_outside_paths):
            dropped_lines += hits.count
            linked += 1
        else:
            kept.append(hits)
    if linked:
        notes.append(
            f"[left out {linked} hard-linked file(s): their other names may lie outside the workspace; "
            "grep or read one by its path to ask the user]"
        )
    dropped = len(found.files) - len(kept)
    if not dropped:
        return found
    return Found(kept, found.total_files - dropped, found.total_lines - dropped_lines)


def make_grep_tool(locate: RgLocator = find_rg) -> Tool:
    """The grep tool; `locate` finds the rg binary (None: use the Python search)."""

    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        target = resolve_for_tool(ctx, str(args.get("path") or "."), reading=True)
        where = display_path(target, ctx.workspace)
        if not target.exists():
            raise ToolError(f"{where} does not exist.")
        request = GrepRequest(
            pattern=args["pattern"],
            case=cast(Any, args.get("case") or "sensitive"),
            context=int(args.get("context") or 0),
            mode=cast(Mode, args.get("output") or "content"),
            glob=args.get("glob") or None,
        )
        rg = locate()
        notes: list[str] = []
        found: Found | None = None
        if rg is not None and rg not in _UNUSABLE:
            try:
                found, notes = await grep_with_rg(rg, request, target, ctx)
            except RgUnavailable as exc:
                if exc.lasting:
                    _UNUSABLE.add(rg)
        if found is None:
            found = Found.of(await asyncio.to_thread(_python_fallback, request, target, ctx))
            notes.append(
                "[searched without ripgrep (the rg binary is not available here); patterns use Python regex syntax]"
            )
        found = _without_denied(found, ctx, notes)
        return format_results(found, request, where, notes=notes)

    return Tool(
        name="grep",
        description=DESCRIPTION,
        parameters={
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "minLength": 1, "description": "Regular expression."},
                "path": {"type": "string", "description": "File or folder (default: workspace root)."},
                "glob": {"type": "string", "minLength": 1, "description": "File filter, e.g. *.py."},
                "case": {"type": "string", "enum": ["sensitive", "insensitive", "smart"]},
                "context": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 20,
                    "description": "Lines around matches.",
                },
                "output": {"type": "string", "enum": ["content", "files", "count"]},
            },
            "required": ["pattern"],
            "additionalProperties": False,
        },
        run=run,
        concurrency_safe=True,
        kind="read",
        path_args=("path",),
        summary_arg="pattern",
    )


grep = make_grep_tool()
