"""Positions as the model gives them (1-based line, 1-based column or a symbol name
on that line) to LSP positions (0-based, UTF-16 code units) and back."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.permissions.workspace import display_path, resolve_path


def utf16_column(line: str, characters: int) -> int:
    return len(line[:characters].encode("utf-16-le")) // 2


def character_column(line: str, units: int) -> int:
    """The code-point index of UTF-16 offset `units` in `line`."""
    count = 0
    for index, ch in enumerate(line):
        if count >= units:
            return index
        count += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def read_source(path: Path, shown: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ToolError(f"{shown} does not exist") from None
    except IsADirectoryError:
        raise ToolError(f"{shown} is a folder, not a file") from None
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not UTF-8 text") from None
    except OSError as exc:
        raise ToolError(f"{shown}: cannot read it ({exc.strerror or exc})") from None


def target_path(args: dict[str, Any], workspace: Path) -> tuple[Path, str]:
    path = resolve_path(workspace, str(args["path"]))
    return path, display_path(path, workspace)


def position_of(args: dict[str, Any], text: str, shown: str) -> lsp.Position:
    """The LSP position named by `line` and `column` or `symbol`."""
    lines = text.splitlines()
    number = int(args["line"])
    if not 1 <= number <= max(len(lines), 1):
        raise ToolError(f"line {number} is outside {shown} (it has {len(lines)} lines)")
    line = lines[number - 1] if lines else ""
    symbol = args.get("symbol")
    if symbol is not None:
        match = re.search(rf"(?<![\w]){re.escape(str(symbol))}(?![\w])", line)
        if match is None:
            raise ToolError(
                f"{symbol!r} is not on line {number} of {shown}; the line reads: {line.strip()!r}"
            )
        column = match.start()
    elif args.get("column") is not None:
        column = int(args["column"]) - 1
        if not 0 <= column <= len(line):
            raise ToolError(
                f"column {column + 1} is outside line {number} of {shown} ({len(line)} characters)"
            )
    else:
        raise ToolError("give `column` or `symbol` to say where on the line")
    return lsp.Position(number - 1, utf16_column(line, column))


POSITION_PROPERTIES: dict[str, Any] = {
    "path": {"type": "string", "minLength": 1, "description": "The file."},
    "line": {"type": "integer", "minimum": 1, "description": "1-based line number."},
    "column": {"type": "integer", "minimum": 1, "description": "1-based column of the symbol."},
    "symbol": {
        "type": "string",
        "minLength": 1,
        "description": "The symbol's name on that line (instead of column).",
    },
}


def describe_location(workspace: Path, uri: str, start: lsp.Position, texts: dict[str, list[str]]) -> str:
    """`path:line:column: the line's text` with 1-based numbers."""
    from wyckoff_cli.tools.lsp.client import uri_path

    path = uri_path(uri)
    if uri not in texts:
        try:
            texts[uri] = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            texts[uri] = []
    lines = texts[uri]
    line = lines[start.line] if 0 <= start.line < len(lines) else ""
    column = character_column(line, start.character) + 1
    return f"{display_path(path, workspace)}:{start.line + 1}:{column}: {line.strip()}"
