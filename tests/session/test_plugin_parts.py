"""An installed plugin's parts plug into the same paths as `.claude/`'s: its commands
are `/plugin-name:command`, its agents and skills join the catalogues, its hooks get
Claude Code's payload (the grep validator blocks as in Claude Code) and its MCP server
(the SDK's own example) starts — hooks and servers only once trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.plugin_support import MARKET, PLUGIN, make_marketplace, write
from tests.runtime.support import collect, make_runtime, of_type
from tests.runtime.test_user_hooks import Approver, call, shell, tool_result
from tests.session.test_custom_commands import run
from tests.tui.support import make_controller
from wyckoff_cli.context.skills import discover_skills
from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime.agent_files import load_agents
from wyckoff_cli.runtime.hook_config import load_hooks, trust_files
from wyckoff_cli.runtime.user_hooks import UserHooks
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.commands import parse
from wyckoff_cli.session.custom_commands import discover_commands
from wyckoff_cli.storage import paths, plugins
from wyckoff_cli.storage.config import load_config
from wyckoff_cli.storage.plugin_sources import classify
from wyckoff_cli.tools.base import ToolContext, ToolOutcome
from wyckoff_cli.tools.mcp.config import load_mcp_config
from wyckoff_cli.tools.mcp.extras import format_table, status_rows
from wyckoff_cli.tools.mcp.manager import start_mcp
from wyckoff_cli.tools.registry import ToolRegistry


@pytest.fixture
def installed(tmp_path: Path) -> Path:
    """guard-rails installed from a local marketplace and trusted, as `install --yes` does."""
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "market"))))
    plugins.install_staged(plugins.stage_plugin(PLUGIN), trust=True)
    return plugins.installed_dir(PLUGIN)


def test_commands_are_namespaced_by_the_plugin(workspace: Path, installed: Path) -> None:
    catalog = discover_commands(workspace)
    by_name = {c.name: c for c in catalog.commands}
    assert {"guard-rails:review", "guard-rails:git:commit"} <= set(by_name)
    review = by_name["guard-rails:review"]
    assert review.source == f"plugin {PLUGIN}" and review.trusted and not review.project
    assert review.description == "Review the staged changes for security problems"
    assert review.allowed_tools == ("run_shell(git diff:*)", "read_file")  # granted: the install showed them
    assert catalog.problems == []


async def test_a_plugin_command_becomes_a_turn(workspace: Path, installed: Path) -> None:
    chat, provider = make_controller(workspace, [{"text": "done"}])
    request = chat.expand("guard-rails:review", "the parser")
    assert request is not None and request.shown == "/guard-rails:review the parser"
    await run(chat, request)
    assert provider.requests[0].messages[-1].text == "Review the staged changes. Focus: the parser\n"
    listed = {c.name: c for c in chat.slash_commands}
    assert listed["guard-rails:review"].usage == "/guard-rails:review (plugin guard-rails) [focus]"
    await chat.aclose()


def test_agents_and_skills_join_the_catalogues(workspace: Path, installed: Path) -> None:
    agents = load_agents(workspace, paths.config_dir())
    agent = agents.get("security-reviewer")
    assert agent is not None and agent.description.startswith("Reviews a change for injection")
    skills = discover_skills(workspace)
    skill = skills.get("changelog-entry")
    assert skill is not None and skill.source == f"plugin {PLUGIN}"
    plugins.set_enabled(PLUGIN, False)
    assert load_agents(workspace, paths.config_dir()).get("security-reviewer") is None
    assert discover_skills(workspace).get("changelog-entry") is None
    assert "guard-rails:review" not in {c.name for c in discover_commands(workspace).commands}


async def test_the_plugins_validator_hook_blocks_grep_as_in_claude_code(
    workspace: Path, installed: Path
) -> None:
    found = load_hooks(workspace)
    (file,) = [f for f in found.files if f.source == f"plugin {PLUGIN}"]
    assert found.state_of(file) == "trusted" and file.path == installed / "hooks" / "hooks.json"
    (spec,) = file.specs
    assert spec.claude and spec.plugin_root == str(installed)
    assert spec.command.endswith(f' "{installed}"/hooks/bash_command_validator.py')  # the root, quoted
    hooks = UserHooks(found, project_dir=workspace)
    ran: list[str] = []
    rounds = [call("grep -r TODO src"), call("rg TODO src"), {"text": "done"}]
    runtime, _ = make_runtime(rounds, [shell(ran)], workspace, hooks=[hooks], approver=Approver())
    events, messages = await collect(runtime)
    assert ran == ["rg TODO src"]
    assert "Use 'rg' (ripgrep) instead of 'grep'" in tool_result(messages).text
    assert [(e.outcome, e.exit_code) for e in of_type(events, ev.HookRan)] == [("blocked", 2), ("ok", 0)]


def test_an_untrusted_plugins_hooks_and_servers_do_not_run(workspace: Path, tmp_path: Path) -> None:
    plugins.add_marketplace(classify(str(make_marketplace(tmp_path / "market"))))
    plugins.install_staged(plugins.stage_plugin(PLUGIN), trust=False)
    found = load_hooks(workspace)
    (file,) = [f for f in found.files if f.source == f"plugin {PLUGIN}"]
    assert found.runnable("PreToolUse") == [] and found.needing_trust() == [file]
    config = load_mcp_config(workspace, load_config(workspace))
    assert config.get(f"plugin_{PLUGIN}_demo") is None
    assert any(f"the servers of the plugin {PLUGIN} are not trusted" in p for p in config.problems)
    trust_files(found.needing_trust())  # `wyckoff hooks trust` trusts a plugin's hooks as a project's
    assert len(load_hooks(workspace).runnable("PreToolUse")) == 1


async def test_the_plugins_mcp_server_starts_with_its_root(workspace: Path, installed: Path) -> None:
    config = load_mcp_config(workspace, load_config(workspace))
    server = config.get(f"plugin_{PLUGIN}_demo")
    assert server is not None and server.args == (str(installed / "servers" / "demo.py"),)
    assert server.env["CLAUDE_PLUGIN_ROOT"] == str(installed)
    registry = ToolRegistry()
    manager = start_mcp(config, root=workspace, registry=registry, env={"PATH": os.environ.get("PATH", "")})
    try:
        await manager.wait_ready(30)
        (status,) = manager.statuses()
        assert status.state == "connected", status.reason
        assert status.scope == f"plugin:{PLUGIN}"  # as Claude Code shows a plugin's server
        assert status_rows(manager)[0]["scope"] == f"plugin:{PLUGIN}"
        assert f"plugin_{PLUGIN}_demo  plugin:{PLUGIN}  stdio" in format_table(manager)  # `wyckoff mcp list`
        name = next(n for n in status.tools if n.endswith("__add"))
        assert name.startswith("mcp__plugin_guard")
        tool = registry.get(name)
        assert tool is not None
        result = await tool.run({"a": 2, "b": 3}, ToolContext(workspace=workspace))
        assert isinstance(result, ToolOutcome) and "5" in result.text
    finally:
        await manager.aclose()


def test_a_project_settings_file_enabling_a_plugin_waits_for_the_same_trust(
    workspace: Path, installed: Path
) -> None:
    plugins.set_enabled(PLUGIN, False)
    key = f"{PLUGIN}@{MARKET}"
    settings = write(workspace / ".claude" / "settings.json", json.dumps({"enabledPlugins": {key: True}}))
    assert plugins.active_plugins(workspace) == []
    found = load_hooks(workspace)
    (file,) = found.needing_trust()
    assert file.path == settings and file.enables == (key,)
    trust_files([file])
    assert [m.name for m in plugins.active_plugins(workspace)] == [PLUGIN]
    again = load_hooks(workspace)  # the plugin's hooks now apply, trusted at its install
    assert again.needing_trust() == [] and len(again.runnable("PreToolUse")) == 1


async def test_slash_plugins_lists_enables_and_disables(workspace: Path, installed: Path) -> None:
    assert parse("/plugins") == rq.Plugins("")
    assert parse("/plugins disable guard-rails") == rq.Plugins("disable guard-rails")
    chat, _ = make_controller(workspace, [])
    (listing,) = [e async for e in chat.handle(rq.Plugins(""))]
    assert isinstance(listing, ev.CommandOutput) and listing.columns[0] == "plugin"
    ((key, version, state, brings, tokens),) = listing.rows
    assert (key, version, state) == (f"{PLUGIN}@{MARKET}", "1.2.0", "in use")
    assert brings == "2 commands, 1 agents, 1 skills, 1 hooks, 1 MCP servers" and int(tokens) > 10
    assert "guard-rails:review" in {c.name for c in chat.slash_commands}
    (done,) = [e async for e in chat.handle(rq.Plugins("disable guard-rails"))]
    assert isinstance(done, ev.Notice) and done.message.startswith(f"{PLUGIN}@{MARKET} is disabled")
    assert "guard-rails:review" not in {c.name for c in chat.slash_commands}
    (wrong,) = [e async for e in chat.handle(rq.Plugins("enable nothing-here"))]
    assert isinstance(wrong, ev.Notice) and wrong.level == "error" and "no installed plugin" in wrong.message
    (usage,) = [e async for e in chat.handle(rq.Plugins("frobnicate"))]
    assert isinstance(usage, ev.Notice) and usage.message.startswith("Usage: /plugins")
    await chat.aclose()
