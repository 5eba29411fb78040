"""list_dir and glob: ignore files respected, newest first, capped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tools.conftest import run_tool, write
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.listing import GLOB_CAP, LIST_CAP, glob, list_dir


@pytest.fixture
def tree(root: Path) -> Path:
    write(root, ".gitignore", "build/\n*.log\n", mtime=1_000)
    write(root, ".wyckoff/ignore", "secret/\n", mtime=1_000)
    write(root, "src/old.py", "x", mtime=2_000)
    write(root, "src/new.py", "x", mtime=5_000)
    write(root, "src/pkg/deep.py", "x", mtime=3_000)
    write(root, "README.md", "x", mtime=4_000)
    write(root, "build/out.py", "x", mtime=9_000)
    write(root, "debug.log", "x", mtime=9_000)
    write(root, "secret/key.py", "x", mtime=9_000)
    write(root, ".git/HEAD", "ref", mtime=9_000)
    return root


async def test_list_dir_newest_first_with_ignored_count(tree: Path, ctx: ToolContext) -> None:
    text = (await run_tool(list_dir, ctx)).text
    lines = text.splitlines()
    assert lines[0].startswith("./ — ")
    entries = lines[1:-1]
    assert "README.md" in entries and "src/" in entries and ".wyckoff/" in entries
    assert all(name not in text for name in ("build", "debug.log", "secret", ".git/"))
    assert lines[-1] == "[3 ignored entries not shown (.gitignore, .wyckoff/ignore)]"


async def test_list_dir_depth_and_subfolder(tree: Path, ctx: ToolContext) -> None:
    os.utime(tree / "src/pkg", (2_500, 2_500))
    text = (await run_tool(list_dir, ctx, path="src", depth=2)).text
    assert text.splitlines() == [
        "src/ — 4 entries (depth 2), newest first:",
        "src/new.py",
        "src/pkg/deep.py",
        "src/pkg/",
        "src/old.py",
    ]
    assert "deep.py" not in (await run_tool(list_dir, ctx, path="src")).text


async def test_list_dir_of_an_ignored_folder_when_named(tree: Path, ctx: ToolContext) -> None:
    text = (await run_tool(list_dir, ctx, path="build")).text
    assert "build/out.py" in text


async def test_list_dir_cap(root: Path, ctx: ToolContext) -> None:
    for i in range(LIST_CAP + 20):
        write(root, f"f{i:04d}.txt", mtime=1_000 + i)
    text = (await run_tool(list_dir, ctx)).text
    assert "[… 20 more entries not shown" in text
    assert text.splitlines()[1] == f"f{LIST_CAP + 19:04d}.txt"


async def test_list_dir_symlink_shows_target(root: Path, ctx: ToolContext, outside: Path) -> None:
    (root / "link").symlink_to(outside)
    text = (await run_tool(list_dir, ctx)).text
    assert f"link -> {outside}" in text


async def test_list_dir_errors(root: Path, ctx: ToolContext) -> None:
    write(root, "a.txt")
    with pytest.raises(ToolError, match="use read_file"):
        await run_tool(list_dir, ctx, path="a.txt")
    with pytest.raises(ToolError, match="does not exist"):
        await run_tool(list_dir, ctx, path="nope")
    with pytest.raises(ToolError, match="outside the workspace"):
        await run_tool(list_dir, ctx, path="..")
    (root / "empty").mkdir()
    assert (await run_tool(list_dir, ctx, path="empty")).text == "empty/ is empty."


async def test_glob_patterns(tree: Path, ctx: ToolContext) -> None:
    text = (await run_tool(glob, ctx, pattern="**/*.py")).text
    assert text.splitlines() == [
        "3 files match '**/*.py', newest first:",
        "src/new.py",
        "src/pkg/deep.py",
        "src/old.py",
    ]
    text = (await run_tool(glob, ctx, pattern="src/*.py")).text
    assert text.splitlines()[1:] == ["src/new.py", "src/old.py"]
    text = (await run_tool(glob, ctx, pattern="*.py", path="src")).text
    assert text.splitlines()[1:] == ["src/new.py", "src/old.py"]
    text = (await run_tool(glob, ctx, pattern="*.{md,py}")).text
    assert text.splitlines()[1:] == ["README.md"]
    text = (await run_tool(glob, ctx, pattern="**/pkg/")).text
    assert text.splitlines()[1:] == ["src/pkg/"]
    text = (await run_tool(glob, ctx, pattern="build/*.py")).text  # named explicitly
    assert "build/out.py" in text


async def test_glob_no_match_hint(tree: Path, ctx: ToolContext) -> None:
    text = (await run_tool(glob, ctx, pattern="*.py")).text
    assert "try '**/*.py'" in text
    assert "does not exist" in (await run_tool(glob, ctx, pattern="nope/**/*.py")).text


async def test_glob_refuses_escaping_patterns(root: Path, ctx: ToolContext, outside: Path) -> None:
    for pattern in ("../*", "/etc/*", "a/../../x"):
        with pytest.raises(ToolError, match="relative"):
            await run_tool(glob, ctx, pattern=pattern)
    (root / "out").symlink_to(outside)
    with pytest.raises(ToolError, match="outside the workspace"):
        await run_tool(glob, ctx, pattern="out/*.txt")


async def test_glob_cap(root: Path, ctx: ToolContext) -> None:
    for i in range(GLOB_CAP + 5):
        write(root, f"d/f{i}.txt")
    assert "[… 5 more not shown" in (await run_tool(glob, ctx, pattern="d/*.txt")).text


async def test_glob_unicode_and_spaces(root: Path, ctx: ToolContext) -> None:
    write(root, "docs/été notes.md")
    assert "docs/été notes.md" in (await run_tool(glob, ctx, pattern="docs/*notes.md")).text
