"""What install shows of a plugin: its parts, what its commands and agents grant, and the
context its agents' and skills' descriptions cost."""

from __future__ import annotations

from pathlib import Path

from tests.plugin_support import PLUGIN, make_plugin, write
from wyckoff_cli.context.plugin_listing import list_plugin
from wyckoff_cli.context.tokens import estimate_text
from wyckoff_cli.storage.plugin_manifest import read_plugin


def test_the_listing_of_a_full_plugin(tmp_path: Path) -> None:
    listing = list_plugin(read_plugin(make_plugin(tmp_path / "p")))
    assert [c.name for c in listing.commands] == [f"{PLUGIN}:git:commit", f"{PLUGIN}:review"]
    assert listing.commands[1].description.endswith("[allowed-tools: Bash(git diff:*), Read]")
    (agent,) = listing.agents
    (skill,) = listing.skills
    assert agent.tokens == estimate_text(f"- security-reviewer: {agent.description}")
    assert listing.context_tokens == agent.tokens + skill.tokens > 0
    assert listing.runs_programs and len(listing.hooks) == 1 and listing.servers[0].startswith("demo: ")
    assert listing.problems == []


def test_an_agent_that_cannot_be_read_is_named_and_not_counted(tmp_path: Path) -> None:
    root = make_plugin(tmp_path / "p")
    write(root / "agents" / "broken.md", "---\nname: broken\ndescription: x\n<example>\n---\nbody")
    write(
        root / "agents" / "bold.md",
        "---\nname: bold\ndescription: Runs free\npermissionMode: bypassPermissions\n---\n",
    )
    listing = list_plugin(read_plugin(root))
    assert [a.name for a in listing.agents] == ["bold", "security-reviewer"]
    assert listing.agents[0].description == "Runs free [permissionMode: bypassPermissions]"
    assert listing.agents[0].tokens == estimate_text("- bold: Runs free")  # what is granted costs no context
    (problem,) = listing.problems
    assert (
        problem
        == f"{PLUGIN}/agents/broken.md, line 4: expected `key: value`, got '<example>'; it will be skipped"
    )


def test_a_plugin_without_parts_lists_nothing_to_run(tmp_path: Path) -> None:
    write(tmp_path / "p" / ".claude-plugin" / "plugin.json", '{"name": "empty"}')
    listing = list_plugin(read_plugin(tmp_path / "p"))
    assert not listing.runs_programs and listing.context_tokens == 0
    assert listing.lines() == ["empty", "  context cost of its agents and skills: 0 tokens per request"]
