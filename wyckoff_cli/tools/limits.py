"""Limits on path arguments, checked before any tool touches the file system.

A path the operating system would refuse (or that would exhaust Python's stack while
`pathlib` walks it) becomes a `ToolError` saying which limit it broke, so the model
can correct the call. Applied to every tool's `path_args` by `Tool.check_arguments`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

MAX_PATH_BYTES = 4_096  # Linux PATH_MAX
MAX_NAME_BYTES = 255  # NAME_MAX: one folder or file name
MAX_PATH_PARTS = 256  # folders deep; pathlib recurses once per missing parent


def path_problem(name: str, value: object) -> str | None:
    """Why the path argument `name` cannot be used, or None."""
    if not isinstance(value, str):
        return None  # the schema check names wrong types
    if "\x00" in value:
        return f"the {name} argument contains a NUL character, which no path may hold"
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_PATH_BYTES:
        return (
            f"the {name} argument is too long: {size:,} bytes, and a path may have at most {MAX_PATH_BYTES:,}"
        )
    parts = [p for p in value.replace("\\", "/").split("/") if p]
    if len(parts) > MAX_PATH_PARTS:
        return f"the {name} argument is too deep: {len(parts):,} levels of folders, and the limit is {MAX_PATH_PARTS}"
    for part in parts:
        length = len(part.encode("utf-8", "surrogatepass"))
        if length > MAX_NAME_BYTES:
            return (
                f"a file or folder name in the {name} argument is too long: {length:,} bytes "
                f"({part[:40]}…), and each name may have at most {MAX_NAME_BYTES}"
            )
    return None


def path_problems(path_args: Iterable[str], args: Mapping[str, Any]) -> list[str]:
    return [problem for name in path_args if (problem := path_problem(name, args.get(name))) is not None]
