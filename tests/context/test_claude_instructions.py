"""CLAUDE.md, CLAUDE.local.md and .claude/CLAUDE.md beside AGENTS.md, `@path` imports,
and `~/.claude/CLAUDE.md` as the user level."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.context.test_instructions import write
from wyckoff_cli.context.claude_imports import MAX_DEPTH, import_names
from wyckoff_cli.context.instructions import discover_instruction_files, load_project_instructions


def test_claude_files_are_read_with_the_agents_md_hierarchy(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    cwd = root / "pkg"
    claude_home = tmp_path / "claude-home"
    write(root / "AGENTS.md", "agents rule")
    write(root / "CLAUDE.md", "claude rule")
    write(root / ".claude" / "CLAUDE.md", "dot-claude rule")
    write(root / "CLAUDE.local.md", "my local rule")
    write(cwd / "CLAUDE.md", "pkg claude rule")
    write(claude_home / "CLAUDE.md", "my claude-wide rule")
    found = discover_instruction_files(root, cwd, None, claude_home)
    assert found == [
        root / "AGENTS.md",
        root / "CLAUDE.md",
        root / ".claude" / "CLAUDE.md",
        root / "CLAUDE.local.md",
        cwd / "CLAUDE.md",
        claude_home / "CLAUDE.md",
    ]
    text = load_project_instructions(root, cwd, claude_home=claude_home).text
    rules = ("agents rule", "claude rule", "dot-claude rule", "my local rule", "pkg claude rule")
    order = [text.index(rule) for rule in (*rules, "my claude-wide rule")]
    assert order == sorted(order)
    assert "## .claude/CLAUDE.md\n\ndot-claude rule" in text


def test_without_claude_home_the_users_claude_md_is_not_read(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / "AGENTS.md", "x")
    write(tmp_path / "claude-home" / "CLAUDE.md", "claude-wide")
    assert "claude-wide" not in load_project_instructions(root).text


def test_imports_are_read_after_the_file_that_names_them(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(
        root / "CLAUDE.md",
        "Read @docs/style.md and see @README.md.\n`@not/code.md` and\n```\n@fenced.md\n```\n",
    )
    write(root / "docs" / "style.md", "style rules, and @./more.md")
    write(root / "docs" / "more.md", "more rules")
    write(root / "README.md", "readme text")
    write(root / "not" / "code.md", "in a code span")
    write(root / "fenced.md", "in a fence")
    text = load_project_instructions(root).text
    assert "## docs/style.md (imported by CLAUDE.md)\n\nstyle rules" in text
    assert "## docs/more.md (imported by docs/style.md)\n\nmore rules" in text
    assert "readme text" in text
    assert "in a code span" not in text and "in a fence" not in text
    order = [text.index(s) for s in ("Read @docs", "style rules", "more rules", "readme text")]
    assert order == sorted(order)


def test_agents_md_imported_by_claude_md_is_there_once(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / "AGENTS.md", "the one set of rules")
    write(root / "CLAUDE.md", "@AGENTS.md")
    text = load_project_instructions(root).text
    assert text.count("the one set of rules") == 1


def test_a_file_imported_twice_or_in_a_cycle_is_read_once(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / "CLAUDE.md", "@a.md @b.md")
    write(root / "a.md", "rule a @b.md @CLAUDE.md")
    write(root / "b.md", "rule b @a.md")
    text = load_project_instructions(root).text
    assert text.count("rule a") == 1 and text.count("rule b") == 1


def test_imports_stop_at_depth_five(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / "CLAUDE.md", "@l1.md")
    for level in range(1, MAX_DEPTH + 2):
        write(root / f"l{level}.md", f"level {level} @l{level + 1}.md")
    text = load_project_instructions(root).text
    assert f"level {MAX_DEPTH}" in text and f"level {MAX_DEPTH + 1}" not in text


@pytest.mark.parametrize(
    "name",
    ["../outside.md", "{absolute}", "../../outside.md", "link.md"],
)
def test_imports_outside_the_workspace_and_home_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "work" / "repo"
    write(tmp_path / "work" / "outside.md", "secret outside")
    write(tmp_path / "outside.md", "secret outside")
    (root).mkdir(parents=True)
    (root / "link.md").symlink_to(tmp_path / "outside.md")  # a link out of the workspace
    write(root / "CLAUDE.md", f"@{name}")
    text = load_project_instructions(root).text
    assert "secret outside" not in text
    assert (
        Path("/etc/hostname").read_text().strip() not in text.replace(f"@{name}", "")
        or name != "/etc/hostname"
    )


def test_a_home_import_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    write(home / ".claude" / "my-rules.md", "my personal rules")
    root = tmp_path / "repo"
    write(root / "CLAUDE.md", "@~/.claude/my-rules.md")
    assert "## ~/.claude/my-rules.md (imported by CLAUDE.md)\n\nmy personal rules" in (
        load_project_instructions(root).text
    )


def test_mentions_that_are_not_files_stay_as_written(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / "CLAUDE.md", "Ask @alice or mail a@b.example about it.")
    text = load_project_instructions(root).text
    assert text == "## CLAUDE.md\n\nAsk @alice or mail a@b.example about it."
    assert import_names("mail a@b.example") == []
