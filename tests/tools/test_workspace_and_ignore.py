"""Path resolution against the workspace root, and .gitignore matching."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tools.conftest import write
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.ignore import GlobFilter, IgnoreMatcher, parse_ignore_text
from wyckoff_cli.tools.permissions.workspace import outside_paths, resolve_for_tool, resolve_path

TOOLS = {tool.name: tool for tool in default_registry()}


@pytest.mark.parametrize(
    ("raw", "inside"),
    [
        ("a.txt", True),
        ("./src/../a.txt", True),
        ("src/", True),
        (".", True),
        ("..", False),
        ("../elsewhere/secret.txt", False),
        ("src/../../elsewhere", False),
        ("/etc/passwd", False),
        ("~", False),
        ("dossier avec espaces/fichier é.txt", True),
        ("日本語/ファイル.txt", True),
    ],
)
def test_inside_or_outside(root: Path, raw: str, inside: bool) -> None:
    ctx = ToolContext(workspace=root)
    assert (outside_paths(TOOLS["read_file"], {"path": raw}, ctx) == ()) is inside


def test_absolute_path_inside_is_inside(root: Path) -> None:
    ctx = ToolContext(workspace=root)
    assert outside_paths(TOOLS["read_file"], {"path": str(root / "x")}, ctx) == ()


def test_symlinks_are_resolved(root: Path, outside: Path) -> None:
    (root / "out").symlink_to(outside)
    (root / "in").symlink_to(root / "real", target_is_directory=True)
    ctx = ToolContext(workspace=root)
    assert outside_paths(TOOLS["read_file"], {"path": "out/secret.txt"}, ctx) == (outside / "secret.txt",)
    assert outside_paths(TOOLS["read_file"], {"path": "in/x"}, ctx) == ()
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_for_tool(ctx, "out/secret.txt", reading=True)


def test_workspace_reached_through_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    alias = tmp_path / "alias"
    alias.symlink_to(real)
    ctx = ToolContext(workspace=alias)
    assert resolve_for_tool(ctx, "a.txt", reading=False) == Path(os.path.realpath(real)) / "a.txt"


def test_approved_outside_path_is_usable(root: Path, outside: Path) -> None:
    ctx = ToolContext(workspace=root, approved_outside_paths=frozenset({outside}))
    assert resolve_for_tool(ctx, str(outside / "secret.txt"), reading=True) == outside / "secret.txt"


def test_nul_in_path_is_a_tool_error(root: Path) -> None:
    with pytest.raises(ToolError, match="NUL"):
        resolve_path(root, "a\x00b")


def test_symlink_loop_does_not_crash(root: Path) -> None:
    (root / "loop").symlink_to(root / "loop")
    ctx = ToolContext(workspace=root)
    outside_paths(TOOLS["read_file"], {"path": "loop/x"}, ctx)  # no exception


IGNORE_CASES = [
    # patterns, path, is_dir, ignored
    ("*.log", "a.log", False, True),
    ("*.log", "deep/er/a.log", False, True),
    ("*.log\n!keep.log", "keep.log", False, False),
    ("build/", "build", True, True),
    ("build/", "build", False, False),
    ("build/", "src/build", True, True),
    ("/build", "src/build", True, False),
    ("/build", "build", True, True),
    ("docs/*.md", "docs/a.md", False, True),
    ("docs/*.md", "docs/sub/a.md", False, False),
    ("docs/**/*.md", "docs/sub/x/a.md", False, True),
    ("**/temp", "a/b/temp", True, True),
    ("a/**/b", "a/b", False, True),
    ("a/**/b", "a/x/y/b", False, True),
    ("logs/**", "logs/x/y.txt", False, True),
    ("file?.txt", "file1.txt", False, True),
    ("file[0-9].txt", "filex.txt", False, False),
    ("file[!0-9].txt", "filex.txt", False, True),
    ("\\#hash", "#hash", False, True),
    ("# comment", "# comment", False, False),
    ("\\!bang", "!bang", False, True),
    ("trailing   ", "trailing", False, True),
    ("*.{js,ts}", "a.ts", False, True),
]


@pytest.mark.parametrize(("patterns", "rel", "is_dir", "ignored"), IGNORE_CASES)
def test_gitignore_patterns(root: Path, patterns: str, rel: str, is_dir: bool, ignored: bool) -> None:
    (root / ".gitignore").write_text(patterns + "\n")
    assert IgnoreMatcher.for_root(root).is_ignored(rel, is_dir) is ignored


def test_nested_gitignore_and_project_ignore(root: Path) -> None:
    write(root, ".gitignore", "*.tmp\n")
    write(root, "pkg/.gitignore", "!keep.tmp\ngenerated/\n")
    write(root, ".wyckoff/ignore", "secrets/\n")
    matcher = IgnoreMatcher.for_root(root)
    assert matcher.is_ignored("a.tmp", False)
    assert not matcher.is_ignored("pkg/keep.tmp", False)
    assert matcher.is_ignored("pkg/generated/x.py", False)
    assert not matcher.is_ignored("generated/x.py", False)
    assert matcher.is_ignored("secrets/key.pem", False)
    assert matcher.is_ignored(".git/config", False)


def test_files_under_an_ignored_folder_stay_ignored(root: Path) -> None:
    write(root, ".gitignore", "build/\n!build/keep.txt\n")
    assert IgnoreMatcher.for_root(root).is_ignored("build/keep.txt", False)


def test_walk_skips_ignored_and_git(root: Path) -> None:
    write(root, ".gitignore", "node_modules/\n")
    write(root, "node_modules/x/index.js")
    write(root, ".git/HEAD", "ref")
    write(root, "src/a.py")
    (root / "src" / "link").symlink_to(root / "node_modules")
    walked = {e.rel: e.ignored for e in IgnoreMatcher.for_root(root).walk("")}
    assert walked == {
        ".gitignore": False,
        "node_modules": True,
        "src": False,
        "src/a.py": False,
        "src/link": False,
    }


def test_parse_ignore_text_skips_blank_lines() -> None:
    assert len(parse_ignore_text("\n# c\n\n*.a\n").patterns) == 1


@pytest.mark.parametrize(
    ("glob", "rel", "accepted"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/deep/a.py", True),
        ("*.py", "a.pyc", False),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "lib/src/a.py", False),
        ("*.{ts,tsx}", "x/a.tsx", True),
        ("!*.min.js", "a.min.js", False),
        ("!*.min.js", "a.js", True),
        ("!vendor", "vendor/a.js", False),
    ],
)
def test_glob_filter(glob: str, rel: str, accepted: bool) -> None:
    assert GlobFilter(glob).accepts(rel) is accepted
