"""A plugin's agents and skills are named as Claude Code names them, `PLUGIN:NAME`: two
plugins' `code-reviewer` both load (as feature-dev's and pr-review-toolkit's do), `task`
and `skill` take the namespaced names (and a bare name only one plugin has), /help lists
them, and the published agent shapes load from a plugin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Static

from tests.plugin_support import make_marketplace, write
from tests.runtime.published_agents import PUBLISHED
from tests.session.subagent_support import build, make_builder, run, task_call
from tests.tui.support import make_app
from tests.tui.test_chat_flows import chat, send
from tests.waiting import until
from wyckoff_cli.context.skills import discover_skills, mentioned_skills, skill_tool
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.agent_files import load_agents
from wyckoff_cli.storage import paths, plugins
from wyckoff_cli.storage.plugin_sources import classify
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tui.widgets.tool_call import plain_text

PARENT = "scripted:parent"
REVIEWER = "---\nname: code-reviewer\ndescription: Reviews code for {who}.\nmodel: sonnet\n---\nYou review for {who}.\n"
SKILL = "---\nname: Writing Rules\ndescription: How {who} writes rules.\n---\nWrite rules as {who} does.\n"


def plugin(root: Path, name: str, agents: dict[str, str], skills: dict[str, str]) -> dict[str, str]:
    folder = root / "plugins" / name
    write(folder / ".claude-plugin" / "plugin.json", json.dumps({"name": name, "version": "1.0.0"}))
    for file, text in agents.items():
        write(folder / "agents" / f"{file}.md", text)
    for skill_folder, text in skills.items():
        write(folder / "skills" / skill_folder / "SKILL.md", text)
    return {"name": name, "source": f"./plugins/{name}"}


@pytest.fixture
def two_plugins(tmp_path: Path, workspace: Path) -> Path:
    market = tmp_path / "market"
    entries = [
        plugin(market, "feature-kit", {"code-reviewer": REVIEWER.format(who="features")}, {}),
        plugin(
            market,
            "pr-kit",
            {"code-reviewer": REVIEWER.format(who="pull requests"), **PUBLISHED},
            {"writing-rules": SKILL.format(who="pr-kit")},
        ),
    ]
    plugins.add_marketplace(classify(str(make_marketplace(market, plugins=entries))))
    for entry in entries:
        plugins.install_staged(plugins.stage_plugin(entry["name"]), trust=True)
    return workspace


def test_both_plugins_agents_load_namespaced(two_plugins: Path) -> None:
    catalog = load_agents(two_plugins, paths.config_dir())
    assert catalog.problems == []
    assert catalog.names() == [
        "explore",
        "general",
        "feature-kit:code-reviewer",
        *sorted(["pr-kit:code-reviewer", *(f"pr-kit:{name}" for name in PUBLISHED)]),
    ]
    feature, pr = catalog.get("feature-kit:code-reviewer"), catalog.get("pr-kit:code-reviewer")
    assert feature is not None and feature.description == "Reviews code for features."
    assert pr is not None and pr.description == "Reviews code for pull requests."
    assert catalog.get("code-reviewer") is None  # two plugins have it: the bare name is ambiguous
    only = catalog.get("config-checker")  # one plugin has it: the bare name finds it
    assert only is not None and only.name == "pr-kit:config-checker"
    assert catalog.get("pr-kit:nope") is None and catalog.get("nope") is None


def test_a_project_agent_keeps_its_bare_name_beside_a_plugins(two_plugins: Path) -> None:
    write(
        two_plugins / ".claude" / "agents" / "config-checker.md",
        REVIEWER.replace("code-reviewer", "config-checker"),
    )
    catalog = load_agents(two_plugins, paths.config_dir())
    mine = catalog.get("config-checker")
    assert mine is not None and mine.source.endswith(".claude/agents/config-checker.md")
    assert "pr-kit:config-checker" in catalog.names()


async def test_the_task_tool_runs_a_namespaced_agent(two_plugins: Path) -> None:
    parent = ScriptedProvider(
        [
            {"tool_calls": [task_call("pr-kit:code-reviewer", "Review src.", call_id="t1")]},
            {"text": "reviewed for pull requests"},  # the child: model sonnet is the parent's model
            {"text": "all done"},
        ],
        model=PARENT,
    )
    session = build(make_builder(two_plugins, lambda model: parent), PARENT)
    task = session.registry.get("task")
    assert task is not None and "- pr-kit:code-reviewer: Reviews code for pull requests." in task.description
    assert "pr-kit:code-reviewer" in task.parameters["properties"]["agent"]["enum"]
    events = await run(session, "go")
    assert parent.requests[1].system_prompt.startswith("You review for pull requests.")
    results = [e for e in events if isinstance(e, ev.ToolSucceeded) and e.name == "task"]
    assert results and "reviewed for pull requests" in results[0].result
    assert isinstance(events[-1], ev.TurnDone) and events[-1].reason == "completed"
    await session.aclose()


async def test_the_skill_tool_and_mentions_take_namespaced_names(two_plugins: Path) -> None:
    catalog = discover_skills(two_plugins)
    assert catalog.names == ["pr-kit:writing-rules"]
    assert catalog.skills[0].source == "plugin pr-kit"
    tool = skill_tool(catalog)
    for name in ("pr-kit:writing-rules", "writing-rules", "$pr-kit:writing-rules"):
        assert "Write rules as pr-kit does." in str(
            await tool.run({"name": name}, ToolContext(workspace=two_plugins))
        )
    with pytest.raises(ToolError, match="Skills: pr-kit:writing-rules"):
        await tool.run({"name": "feature-kit:writing-rules"}, ToolContext(workspace=two_plugins))
    assert [s.name for s in mentioned_skills("use $pr-kit:writing-rules, then $writing-rules", catalog)] == [
        "pr-kit:writing-rules"
    ]


async def test_help_lists_the_namespaced_agents_and_skills(two_plugins: Path) -> None:
    app, _ = make_app(two_plugins, [{"text": "hi"}], [])
    async with app.run_test(size=(160, 80)) as pilot:
        await send(pilot, "/help")

        def shown() -> str:
            outputs = chat(app).query(".command-output").results(Static)
            return " ".join(plain_text(s.content, width=300) for s in outputs)

        await until(pilot, lambda: "Ctrl+G" in shown(), what="the /help table")
        text = " ".join(shown().split())
    assert "agent feature-kit:code-reviewer Reviews code for features." in text
    assert "agent pr-kit:code-reviewer Reviews code for pull requests." in text
    assert "$pr-kit:writing-rules How pr-kit writes rules." in text
    assert "agent explore" not in text  # the built-ins are the task tool's own


def test_wyckoff_agents_list_shows_the_namespaced_names(
    two_plugins: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from wyckoff_cli.cli.main import main

    assert main(["agents", "list", "--cwd", str(two_plugins)]) == 0
    captured = capsys.readouterr()
    assert "feature-kit:code-reviewer" in captured.out and "pr-kit:code-reviewer" in captured.out
    assert "pr-kit:config-checker" in captured.out and "skipped" not in captured.err
