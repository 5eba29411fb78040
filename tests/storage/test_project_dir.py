"""The project's `.wyckoff/` gets a `.gitignore`: shared files stay committable, local
ones are ignored (checked with git itself)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from wyckoff_cli.storage.permissions import save_rule
from wyckoff_cli.storage.project_dir import GITIGNORE, ensure_gitignore


def test_saving_a_project_rule_writes_the_gitignore_once(tmp_path: Path) -> None:
    save_rule("run_shell(ls)", root=tmp_path)
    ignore = tmp_path / ".wyckoff" / ".gitignore"
    assert ignore.read_text() == GITIGNORE
    ignore.write_text("# mine\n")
    save_rule("run_shell(make)", root=tmp_path)
    assert ignore.read_text() == "# mine\n"  # never overwritten


def test_only_a_wyckoff_folder_gets_one(tmp_path: Path) -> None:
    assert ensure_gitignore(tmp_path) is None and not (tmp_path / ".gitignore").exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_keeps_shared_files_and_ignores_local_ones(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    save_rule("run_shell(ls)", root=tmp_path)
    folder = tmp_path / ".wyckoff"
    for name in (
        "ignore",
        "commands/review.md",
        "agents/tester.md",
        "skills/x/SKILL.md",
        "settings.local.toml",
        "local/notes",
        "state/x.json",
        "trust/records.json",
    ):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("x")
    shown = subprocess.run(
        ["git", "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    listed = {line[3:] for line in shown.splitlines()}
    assert {
        ".wyckoff/.gitignore",
        ".wyckoff/config.toml",
        ".wyckoff/ignore",
        ".wyckoff/commands/review.md",
        ".wyckoff/agents/tester.md",
        ".wyckoff/skills/x/SKILL.md",
    } <= listed
    assert not {p for p in listed if "local" in p or "state/" in p or "trust/" in p}
