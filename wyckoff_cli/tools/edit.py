"""`edit_file`: exact text replacement, with the closest candidates when `old` misses."""

from __future__ import annotations

import asyncio
import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.permissions.policy import preview_rule
from wyckoff_cli.tools.permissions.workspace import (
    describe_os_error,
    display_path,
    ensure_not_git_internal,
    resolve_for_tool,
    resolve_path,
)
from wyckoff_cli.tools.textio import (
    TextFile,
    count_changes,
    decode_file,
    looks_binary,
    show,
    unified_diff,
    write_atomic_bytes,
)

MAX_CANDIDATES = 3
MAX_SHOWN_LINES = 12

DESCRIPTION = """\
Replace exact text in an existing file.

- `old`: text copied exactly from the file, whitespace and indentation included \
(never the line-number prefix read_file shows). It must occur exactly once, unless \
`replace_all` is true. `new`: its replacement (may be empty to delete).
- Include enough surrounding lines in `old` to make it unique.
- `edits`: instead of `old`/`new`, a list of {old, new, replace_all?} applied in \
order to the same file, all or nothing: if one fails, the file is left unchanged.
- When `old` is not found, or found more than once, the error shows the closest \
matching lines with their line numbers: fix `old` from them and call again.
- The file keeps its newline style, encoding and permissions. To create a file, use write_file."""

_EDIT_ITEM = {
    "type": "object",
    "properties": {
        "old": {"type": "string", "description": "Exact text to replace."},
        "new": {"type": "string", "description": "Replacement text."},
        "replace_all": {"type": "boolean", "description": "Replace every occurrence."},
    },
    "required": ["old", "new"],
    "additionalProperties": False,
}


class EditFailed(ToolError):
    pass


@dataclass(frozen=True, slots=True)
class _Planned:
    file: TextFile
    before: str
    after: str
    replacements: int
    first_line: int


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _numbered(lines: list[str], first: int) -> str:
    shown = lines[:MAX_SHOWN_LINES]
    body = "".join(f"{first + i:>6}\t{show(line)}\n" for i, line in enumerate(shown))
    if len(lines) > len(shown):
        body += f"{'':>6}\t[… {len(lines) - len(shown)} more lines]\n"
    return body


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _closest(text: str, old: str) -> str:
    """The closest places in `text` to `old`, numbered, for a not-found error."""
    lines = text.split("\n")
    wanted = old.strip("\n").split("\n")
    size = len(wanted)
    squashed_old = _squash(old)
    # Whitespace-only differences first: the most common miss.
    if squashed_old:
        for start in range(len(lines)):
            block = lines[start : start + size]
            if _squash("\n".join(block)) == squashed_old:
                return (
                    f"The same text with different whitespace or indentation is at line {start + 1}:\n"
                    + _numbered(block, start + 1)
                    + "Copy it exactly, spaces and tabs included."
                )
    anchor = next((line.strip() for line in wanted if line.strip()), "")
    if not anchor:
        return "`old` has no visible text to look for."
    offset = next(i for i, line in enumerate(wanted) if line.strip() == anchor)
    scored: list[tuple[float, int]] = []
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(anchor)
    for number, line in enumerate(lines):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() < 0.4 or matcher.quick_ratio() < 0.4:
            continue
        ratio = matcher.ratio()
        if ratio >= 0.4:
            scored.append((ratio, number))
    scored.sort(key=lambda item: (-item[0], item[1]))
    windows: list[tuple[float, int]] = []
    target = "\n".join(wanted)
    for _, number in scored[:20]:
        start = max(0, number - offset)
        window = "\n".join(lines[start : start + size])
        windows.append((difflib.SequenceMatcher(None, window, target, autojunk=False).ratio(), start))
    windows.sort(key=lambda item: (-item[0], item[1]))
    if not windows:
        return "Nothing in the file resembles it: read the file again before editing."
    chosen: list[tuple[float, int]] = []
    for ratio, start in windows:
        if all(abs(start - other) >= size for _, other in chosen):
            chosen.append((ratio, start))
        if len(chosen) == MAX_CANDIDATES:
            break
    blocks = [
        f"Lines {start + 1}-{start + size} ({ratio:.0%} similar):\n"
        + _numbered(lines[start : start + size], start + 1)
        for ratio, start in chosen
    ]
    return "The closest text in the file:\n" + "\n".join(blocks)


def _occurrences(text: str, old: str) -> list[int]:
    found: list[int] = []
    start = text.find(old)
    while start >= 0:
        found.append(start)
        start = text.find(old, start + max(1, len(old)))
    return found


def _apply(text: str, edit: dict[str, Any], shown: str, label: str) -> tuple[str, int, int]:
    """(new text, replacements, first changed line)."""
    old = str(edit["old"]).replace("\r\n", "\n")
    new = str(edit["new"]).replace("\r\n", "\n")
    if not old:
        raise EditFailed(
            f"{label}`old` is empty: give the exact text to replace (use write_file to create a file)."
        )
    if old == new:
        raise EditFailed(f"{label}`old` and `new` are identical: there is nothing to change.")
    found = _occurrences(text, old)
    if not found:
        raise EditFailed(f"{label}`old` was not found in {shown}. {_closest(text, old)}")
    if len(found) > 1 and not edit.get("replace_all"):
        numbers = [_line_of(text, index) for index in found]
        listed = ", ".join(str(n) for n in numbers[:20]) + (" …" if len(numbers) > 20 else "")
        lines = text.split("\n")
        samples = "".join(_numbered([lines[n - 1]], n) for n in numbers[:5])
        raise EditFailed(
            f"{label}`old` occurs {len(found)} times in {shown} (lines {listed}):\n{samples}"
            "Add surrounding lines to `old` so it matches exactly one place, "
            "or set replace_all to true to change every occurrence."
        )
    first = _line_of(text, found[0])
    if edit.get("replace_all"):
        return text.replace(old, new), len(found), first
    return text[: found[0]] + new + text[found[0] + len(old) :], 1, first


def _missing(shown: str) -> ToolError:
    return ToolError(
        f"{shown} does not exist: edit_file changes existing files; use write_file to create it."
    )


def _plan(path: Path, shown: str, edits: list[dict[str, Any]]) -> _Planned:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise _missing(shown) from None
    except OSError as exc:
        raise ToolError(describe_os_error(exc, shown)) from None
    if looks_binary(data[:8_192]):
        raise ToolError(f"{shown} is a binary file: edit_file changes text files only.")
    return _plan_text(decode_file(data), shown, edits)


def _plan_text(file: TextFile, shown: str, edits: list[dict[str, Any]]) -> _Planned:
    text = file.text
    total = 0
    first_line = 0
    for index, edit in enumerate(edits):
        label = ""
        if len(edits) > 1:
            label = (
                f"Edit {index + 1} of {len(edits)} failed, so none was applied (the edits are all or nothing"
            )
            label += ", and this one applies to the text after the earlier ones). " if index else "). "
        text, count, line = _apply(text, edit, shown, label)
        total += count
        first_line = first_line or line
    return _Planned(file, file.text, text, total, first_line)


def _edits_of(args: dict[str, Any]) -> list[dict[str, Any]]:
    edits = args.get("edits")
    has_single = "old" in args or "new" in args
    if edits is not None:
        if has_single:
            raise ToolError("give either `old`/`new` or `edits`, not both.")
        if not edits:
            raise ToolError("`edits` is empty: give at least one {old, new}.")
        return [dict(e) for e in edits]
    if "old" not in args or "new" not in args:
        raise ToolError("give `old` and `new` (or a list of them in `edits`).")
    return [{"old": args["old"], "new": args["new"], "replace_all": bool(args.get("replace_all"))}]


def _edit(path: Path, shown: str, edits: list[dict[str, Any]]) -> ToolOutcome:
    ensure_not_git_internal(path, shown)
    planned = _plan(path, shown, edits)
    try:
        write_atomic_bytes(path, planned.file.encode(planned.after))
    except OSError as exc:
        raise ToolError(describe_os_error(exc, shown)) from None
    return _edited(shown, planned)


def _edited(shown: str, planned: _Planned) -> ToolOutcome:
    diff = unified_diff(planned.before, planned.after, shown)
    added, removed = count_changes(diff)
    plural = "s" if planned.replacements != 1 else ""
    text = (
        f"Edited {shown}: {planned.replacements} replacement{plural} from line {planned.first_line} "
        f"(+{added} -{removed} lines)."
    )
    return ToolOutcome(text, {"diff": diff, "path": shown, "new_file": False})


async def _run(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
    edits = _edits_of(args)
    path = resolve_for_tool(ctx, args["path"], reading=False)
    shown = display_path(path, ctx.workspace)
    if ctx.host_files is not None:
        ensure_not_git_internal(path, shown)
        text = await ctx.host_files.read_text(path)
        if text is None:
            raise _missing(shown)
        planned = _plan_text(decode_file(text.encode("utf-8", "surrogateescape")), shown, edits)
        await ctx.host_files.write_text(path, planned.after)
        return _edited(shown, planned)
    return await asyncio.to_thread(_edit, path, shown, edits)


def _surrounding(text: str, old: str, lines: int = 3) -> dict[str, Any]:
    """The lines just before and after the replaced text (an editor shows them
    around the editable replacement)."""
    start = text.find(old.replace("\r\n", "\n"))
    head, tail = text[:start], text[start + len(old) :]
    before = head.split("\n")
    after = tail.split("\n")
    # a partial line the replaced text starts or ends in is context too; an empty one is not
    if before[-1] == "":
        before.pop()
    if after[0] == "":
        after.pop(0)
    return {"before": before[-lines:], "after": after[:lines], "line": head.count("\n") + 1}


def _preview(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    path = resolve_path(ctx.workspace, args["path"])
    shown = display_path(path, ctx.workspace)
    preview: dict[str, Any] = {"kind": "diff", "path": shown, "new_file": False}
    try:
        edits = _edits_of(args)
        planned = _plan(path, shown, edits)
        preview["diff"] = unified_diff(planned.before, planned.after, shown)
        if len(edits) == 1:
            preview["context"] = _surrounding(planned.before, str(edits[0]["old"]))
    except ToolError as exc:
        preview["error"] = exc.message
    rule = preview_rule(edit_file, args, ctx)
    if rule:
        preview["rule"] = rule
    return preview


edit_file = Tool(
    name="edit_file",
    description=DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to edit."},
            "old": {"type": "string", "description": "Exact text to replace (unique unless replace_all)."},
            "new": {"type": "string", "description": "Replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence of `old`."},
            "edits": {
                "type": "array",
                "items": _EDIT_ITEM,
                "minItems": 1,
                "description": "Several edits applied in order, all or nothing.",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    run=_run,
    requires_approval=True,
    kind="edit",
    path_args=("path",),
    path_access="read-write",
    preview=_preview,
    summary_arg="path",
    editable_fields=("new",),
)
