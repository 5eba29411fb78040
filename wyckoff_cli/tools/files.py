"""`read_file` and `write_file` (edit_file lives in edit.py)."""

from __future__ import annotations

import asyncio
import difflib
import os
from pathlib import Path
from typing import Any, BinaryIO

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.image_read import is_image_file, read_image
from wyckoff_cli.tools.permissions.policy import preview_rule
from wyckoff_cli.tools.permissions.workspace import (
    describe_os_error,
    display_path,
    ensure_not_git_internal,
    resolve_for_tool,
    resolve_path,
)
from wyckoff_cli.tools.textio import (
    count_changes,
    decode_file,
    looks_binary,
    show,
    unified_diff,
    write_atomic_bytes,
)

PAGE_CHARS = 7_000  # numbered lines per page; the whole result stays under ~7,500
LINE_CHARS = 2_000  # longer lines are cut (with a note) so every page makes progress
DEFAULT_LINES = 2_000
NUMBER_WIDTH = 6

READ_DESCRIPTION = """\
Read a text file, returned as numbered lines (`   12\\tline`), one page at a time.

- `path`: relative to the workspace root, or absolute.
- `offset`: the first line to show (1-based, default 1). `limit`: at most this many lines (default 2000).
- A page holds about 7,000 characters at most; the header says which lines you got and \
the total line count, and the footer gives the exact call for the next page.
- Lines longer than 2,000 characters are cut; grep finds text inside them.
- The line numbers are not part of the file: never copy them into edit_file's `old`.
- Images (PNG, JPEG, GIF, WebP) are shown to you as images when your model takes them.
- Other binary files are refused. Bytes that are not valid UTF-8 are shown as \ufffd.
- Large tool results saved to disk can be read with this tool, page by page, at the path given.
Prefer reading the specific range you need over whole large files, and read several \
files in parallel when you need them all."""

WRITE_DESCRIPTION = """\
Create a file, or replace a file's whole content, with `content`.

- `path`: relative to the workspace root (or absolute). Missing parent folders are created.
- The write is atomic. An existing file keeps its newline style (LF or CRLF), byte \
order mark and permissions.
- For a change to part of an existing file, use edit_file instead: it is smaller and safer.
- Files inside .git/ are never written."""


def _missing_message(path: Path, shown: str) -> str:
    parent = path.parent
    if not parent.is_dir():
        return f"{shown} does not exist (nor does its folder {parent.name or parent}/)."
    try:
        names = os.listdir(parent)
    except OSError:
        names = []
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    hint = f" Similar names there: {', '.join(close)}." if close else ""
    return f"{shown} does not exist.{hint} list_dir or glob show what is there."


def _read_page(path: Path, shown: str, offset: int, limit: int) -> str:
    try:
        if path.is_dir():
            raise ToolError(f"{shown} is a folder, not a file: use list_dir to see its entries.")
        handle = path.open("rb")
    except FileNotFoundError:
        raise ToolError(_missing_message(path, shown)) from None
    except OSError as exc:
        raise ToolError(describe_os_error(exc, shown)) from None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(8_192)
        if looks_binary(head):
            raise ToolError(
                f"{shown} is a binary file ({size:,} bytes): read_file shows text only. "
                "Inspect it with run_shell (e.g. `file`, `xxd | head`) if you must."
            )
        if head.startswith((b"\xff\xfe", b"\xfe\xff")):
            decoded = decode_file(head + handle.read())
            return _page_from_lines(decoded.text.split("\n"), shown, offset, limit, True)
        handle.seek(0)
        return _page_from_stream(handle, shown, offset, limit)


def _page_from_lines(lines: list[str], shown: str, offset: int, limit: int, valid: bool) -> str:
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    page: list[str] = []
    budget = PAGE_CHARS
    index = offset - 1
    while index < total and len(page) < limit:
        rendered = _render_line(index + 1, lines[index])
        if page and len(rendered) > budget:
            break
        page.append(rendered)
        budget -= len(rendered)
        index += 1
    return _format_page(shown, page, offset, total, valid)


def _page_from_stream(handle: BinaryIO, shown: str, offset: int, limit: int) -> str:
    page: list[str] = []
    budget = PAGE_CHARS
    valid = True
    number = 0
    for raw in handle:
        number += 1
        if number < offset:
            continue
        text, ok = _decode_line(raw, first=number == 1)
        valid = valid and ok
        rendered = _render_line(number, text)
        if len(page) >= limit or (page and len(rendered) > budget):
            number += _count_rest(handle)
            break
        page.append(rendered)
        budget -= len(rendered)
    return _format_page(shown, page, offset, number, valid)


def _decode_line(raw: bytes, *, first: bool) -> tuple[str, bool]:
    if first and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    raw = raw[:-1] if raw.endswith(b"\n") else raw
    raw = raw[:-1] if raw.endswith(b"\r") else raw
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return raw.decode("utf-8", errors="replace"), False


def _count_rest(handle: BinaryIO) -> int:
    """Lines left in `handle` (a last line without a newline counts)."""
    count = 0
    last = b"\n"
    while chunk := handle.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (0 if last == b"\n" else 1)


def _render_line(number: int, text: str) -> str:
    text = show(text)
    if len(text) > LINE_CHARS:
        extra = len(text) - LINE_CHARS
        text = f"{text[:LINE_CHARS]} [… line cut: {extra:,} more characters]"
    return f"{number:>{NUMBER_WIDTH}}\t{text}\n"


def _format_page(shown: str, page: list[str], offset: int, total: int, valid: bool) -> str:
    if total == 0:
        return f"{shown} is empty (0 lines)."
    if offset > total:
        raise ToolError(
            f"offset {offset} is past the end of {shown}, which has {total:,} lines. "
            f"Use an offset from 1 to {total}."
        )
    last = offset + len(page) - 1
    header = f"{shown}: lines {offset}-{last} of {total:,}"
    if not valid:
        header += " (not valid UTF-8: undecodable bytes are shown as \ufffd)"
    parts = [header + "\n", *page]
    if last < total:
        parts.append(
            f"[{total - last:,} more lines. Next page: read_file(path={shown!r}, offset={last + 1})]"
        )
    else:
        parts.append("[end of file]")
    return "".join(parts)


async def _read_run(args: dict[str, Any], ctx: ToolContext) -> str | ToolOutcome:
    path = resolve_for_tool(ctx, args["path"], reading=True)
    shown = display_path(path, ctx.workspace)
    if is_image_file(path):
        return await asyncio.to_thread(read_image, path, shown, ctx)
    offset = int(args.get("offset") or 1)
    limit = int(args.get("limit") or DEFAULT_LINES)
    if ctx.host_files is not None:
        text = await ctx.host_files.read_text(path)
        if text is None:
            raise ToolError(_missing_message(path, shown))
        return _page_from_lines(text.split("\n"), shown, offset, limit, True)
    return await asyncio.to_thread(_read_page, path, shown, offset, limit)


def _read_preview(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    path = resolve_path(ctx.workspace, args["path"])
    return {"kind": "read", "path": display_path(path, ctx.workspace)}


read_file = Tool(
    name="read_file",
    description=READ_DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to read."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    run=_read_run,
    concurrency_safe=True,
    kind="read",
    path_args=("path",),
    preview=_read_preview,
    summary_arg="path",
)


# --------------------------------------------------------------------------- write_file


def _existing_bytes(path: Path, shown: str) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a folder: write_file writes files.") from None
    except OSError as exc:
        raise ToolError(describe_os_error(exc, shown)) from None


def _plan_write(path: Path, shown: str, content: str) -> tuple[bytes, str, bool]:
    """(bytes to write, unified diff, whether the file is new)."""
    old = _existing_bytes(path, shown)
    if old is None:
        return content.encode("utf-8", errors="surrogateescape"), unified_diff("", content, shown), True
    if looks_binary(old[:8_192]):
        data = content.encode("utf-8", errors="surrogateescape")
        return data, f"(binary file {shown} replaced by {len(content):,} characters of text)\n", False
    before = decode_file(old)
    if "\n" not in before.text and not before.bom:
        data = content.encode("utf-8", errors="surrogateescape")  # no style to keep
    else:
        data = before.encode(content.replace("\r\n", "\n"))
    return data, unified_diff(before.text, content.replace("\r\n", "\n"), shown), False


def _write(path: Path, shown: str, content: str) -> ToolOutcome:
    ensure_not_git_internal(path, shown)
    data, diff, new = _plan_write(path, shown, content)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic_bytes(path, data)
    except FileExistsError:
        raise ToolError(f"cannot create {shown}: a part of its folder path is a file.") from None
    except OSError as exc:
        raise ToolError(describe_os_error(exc, shown)) from None
    return _written(shown, content, diff, new)


def _written(shown: str, content: str, diff: str, new: bool) -> ToolOutcome:
    lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
    if new:
        text = f"Created {shown} ({lines:,} lines)."
    else:
        added, removed = count_changes(diff)
        text = (
            f"Updated {shown} ({lines:,} lines; +{added} -{removed})."
            if diff
            else f"{shown} already had exactly this content; nothing changed."
        )
    return ToolOutcome(text, {"diff": diff, "path": shown, "new_file": new})


async def _write_run(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
    path = resolve_for_tool(ctx, args["path"], reading=False)
    shown = display_path(path, ctx.workspace)
    if ctx.host_files is not None:
        ensure_not_git_internal(path, shown)
        before = await ctx.host_files.read_text(path)
        content = str(args["content"])
        await ctx.host_files.write_text(path, content)
        return _written(shown, content, unified_diff(before or "", content, shown), before is None)
    return await asyncio.to_thread(_write, path, shown, args["content"])


def _write_preview(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    path = resolve_path(ctx.workspace, args["path"])
    shown = display_path(path, ctx.workspace)
    preview: dict[str, Any] = {"kind": "diff", "path": shown}
    try:
        _, diff, new = _plan_write(path, shown, args["content"])
        preview.update(diff=diff, new_file=new)
    except ToolError as exc:
        preview["error"] = exc.message
    rule = preview_rule(write_file, args, ctx)
    if rule:
        preview["rule"] = rule
    return preview


write_file = Tool(
    name="write_file",
    description=WRITE_DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "File to create or replace."},
            "content": {"type": "string", "description": "The file's complete new content."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    run=_write_run,
    requires_approval=True,
    kind="edit",
    path_args=("path",),
    preview=_write_preview,
    summary_arg="path",
    editable_fields=("content",),
)
