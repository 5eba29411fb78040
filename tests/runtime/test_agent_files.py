"""Agent files: Claude Code-compatible front matter, lookup order, and bad front matter
reported with file and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wyckoff_cli.runtime.agent_files import FrontMatterError, load_agents, narrower_mode, parse_agent

GOOD = "---\nname: helper\ndescription: Helps.\n---\nYou help.\n"


def test_a_full_definition() -> None:
    agent = parse_agent(
        "---\n"
        "name: reviewer  # a comment\n"
        'description: "Reviews code: use after edits."\n'
        "tools:\n  - read_file\n  - run_shell(git diff *)\n"
        "model: anthropic:claude-haiku-4-5\n"
        "max_rounds: 7\n"
        "permission_mode: plan\n"
        "---\n\nYou review.\n",
        "x.md",
    )
    assert agent.name == "reviewer" and agent.description == "Reviews code: use after edits."
    assert agent.tools == ("read_file", "run_shell(git diff *)")
    assert (agent.model, agent.max_rounds, agent.permission_mode, agent.prompt) == (
        "anthropic:claude-haiku-4-5",
        7,
        "plan",
        "You review.",
    )


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("name: x\n", 1, "must start with front matter"),
        ("---\nname: x\ndescription: y\n", 1, "not closed"),
        ("---\ndescription: y\n---\nbody\n", 1, "`name` is missing"),
        ("---\nname: Bad Name\ndescription: y\n---\nbody\n", 2, "lowercase"),
        ("---\nname: x\n---\nbody\n", 1, "`description` is missing"),
        ("---\nname: x\ndescription: y\nthis is not yaml\n---\nbody\n", 4, "expected `key: value`"),
        ("---\nname: x\ndescription: y\nname: z\n---\nbody\n", 4, "given twice"),
        ("---\nname: x\ndescription: y\nfrobnicate: 1\n---\nbody\n", 4, "unknown key `frobnicate`"),
        ("---\nname: x\ndescription: y\nmax_rounds: 0\n---\nbody\n", 4, "`max_rounds` must be"),
        ("---\nname: x\ndescription: y\npermission_mode: root\n---\nbody\n", 4, "`permission_mode` must be"),
        ("---\nname: x\ndescription: y\ntools: [Task]\n---\nbody\n", 4, "do not nest"),
        ("---\nname: x\ndescription: y\ntools: [read_file\n---\nbody\n", 4, "not closed by `]`"),
        ("---\nname: x\ndescription: y\ntools: run_shell(ls\n---\nbody\n", 4, "not a tool name or rule"),
        ("---\nname: x\ndescription: y\n- stray\n---\nbody\n", 4, "must follow a `key:`"),
        ("---\nname: x\ndescription: y\n---\n\n", 4, "body"),
    ],
)
def test_bad_front_matter_names_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(FrontMatterError) as caught:
        parse_agent(text, "a.md")
    assert caught.value.line == line and words in caught.value.message


def test_lookup_order_and_built_ins(tmp_path: Path) -> None:
    root, user = tmp_path / "p", tmp_path / "cfg"
    for folder, description in (
        (root / ".wyckoff" / "agents", "Project."),
        (user / "agents", "User."),
        (root / ".claude" / "agents", "Claude."),
    ):
        folder.mkdir(parents=True)
        (folder / "helper.md").write_text(GOOD.replace("Helps.", description), encoding="utf-8")
    (root / ".claude" / "agents" / "explore.md").write_text(
        GOOD.replace("helper", "explore").replace("Helps.", "Mine."), encoding="utf-8"
    )
    catalog = load_agents(root, user)
    assert catalog.names() == ["explore", "general", "helper"]
    assert catalog.agents["helper"].description == "Project."
    assert catalog.agents["explore"].description == "Mine."  # a file overrides a built-in
    assert catalog.agents["general"].source == "built-in"


def test_modes_only_narrow() -> None:
    assert narrower_mode("default", "yolo") == "default"
    assert narrower_mode("yolo", "plan") == "plan"
    assert narrower_mode("auto-edit", None) == "auto-edit"
    assert narrower_mode("plan", "auto-edit") == "plan"


def test_wyckoff_agents_list(workspace: Path) -> None:
    folder = workspace / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "helper.md").write_text(
        GOOD.replace("---\nYou", "tools: Read, Grep\n---\nYou"), encoding="utf-8"
    )
    (folder / "bad.md").write_text("---\nname: bad\n", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "agents", "list", "--cwd", str(workspace)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "explore" in out and "general" in out and "built-in" in out
    assert f"helper   {folder / 'helper.md'}" in out and "tools: read_file, grep" in out
    assert f"{folder / 'bad.md'}, line 1: the front matter is not closed" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("toml", "words"),
    [
        ("[agents]\nmax_rounds = 0\n", "agents.max_rounds must be an integer at least 1"),
        ("[agents]\nmax_rounds = 99999\n", "at most 10,000"),
        ("[session]\nmax_budget_usd = 0\n", "session.max_budget_usd must be a finite number greater than 0"),
        ("[session]\nmax_budget_usd = -1.5\n", "greater than 0"),
        ("[session]\nmax_budget_usd = nan\n", "session.max_budget_usd"),
    ],
)
def test_bad_agent_and_budget_settings_are_config_errors(workspace: Path, toml: str, words: str) -> None:
    from wyckoff_cli.core.errors import ConfigError
    from wyckoff_cli.storage.config import load_config

    (workspace / ".wyckoff" / "config.toml").write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError, match="line 2") as caught:
        load_config(workspace)
    assert words in caught.value.message


def test_agent_and_budget_settings_load(workspace: Path) -> None:
    from wyckoff_cli.storage.config import load_config

    (workspace / ".wyckoff" / "config.toml").write_text(
        "[agents]\nmax_rounds = 5\n[session]\nmax_budget_usd = 2.5\n", encoding="utf-8"
    )
    config = load_config(workspace).config
    assert (config.agents.max_rounds, config.session.max_budget_usd) == (5, 2.5)
