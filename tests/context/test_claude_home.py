"""`~/.claude/commands`, `agents` and `skills` as the user level, after Wyckoff's own;
`[compat] claude_home = false` turns them off. The suite points CLAUDE_CONFIG_DIR at a
temporary folder, so the real ~/.claude is never read."""

from __future__ import annotations

from pathlib import Path

from wyckoff_cli.context.skills import discover_skills
from wyckoff_cli.runtime.agent_files import load_agents
from wyckoff_cli.session.custom_commands import discover_commands
from wyckoff_cli.storage import paths


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def claude_user_setup() -> Path:
    home = paths.claude_home()
    write(home / "commands" / "review.md", "---\ndescription: Review the diff\n---\nReview $ARGUMENTS\n")
    write(
        home / "agents" / "critic.md",
        "---\nname: critic\ndescription: Critiques\ntools: Read, Grep\n---\nBe harsh.\n",
    )
    write(
        home / "skills" / "release" / "SKILL.md",
        "---\nname: release\ndescription: Cut a release\n---\nSteps.\n",
    )
    return home


def test_the_claude_user_folder_is_the_user_level(workspace: Path) -> None:
    claude_user_setup()
    command = discover_commands(workspace).get("review")
    assert command is not None and command.source == "user (~/.claude)"
    agents = load_agents(workspace, paths.config_dir())
    critic = agents.get("critic")
    assert critic is not None and critic.tools is not None and set(critic.tools) == {"read_file", "grep"}
    skill = next(s for s in discover_skills(workspace).skills if s.name == "release")
    assert skill.source == "user (~/.claude)"


def test_wyckoffs_own_user_files_win_over_claude_ones(workspace: Path) -> None:
    claude_user_setup()
    write(paths.config_dir() / "commands" / "review.md", "Wyckoff's own review\n")
    command = discover_commands(workspace).get("review")
    assert command is not None and command.source == "user"


def test_claude_home_false_turns_it_off(workspace: Path) -> None:
    claude_user_setup()
    write(paths.config_file(), "[compat]\nclaude_home = false\n")
    assert discover_commands(workspace).get("review") is None
    assert load_agents(workspace, paths.config_dir()).get("critic") is None
    assert all(s.name != "release" for s in discover_skills(workspace).skills)
