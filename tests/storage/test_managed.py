"""The managed policy: its keys win over user and project settings, nothing moves it,
and a file it cannot honour stops the session with an error naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.session.subagent_support import build, make_builder
from wyckoff_cli.cli.main import main
from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.hook_config import load_hooks
from wyckoff_cli.storage import managed, paths
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.builtin import default_registry

TOOLS = {tool.name: tool for tool in default_registry()}


def write_policy(text: str) -> Path:
    path = managed.MANAGED_PATH  # the suite points it at a temporary file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def session(workspace: Path, model: str = "scripted", mode: str = "default") -> object:
    builder = make_builder(workspace, lambda name: ScriptedProvider([{"text": "ok"}]))
    return build(builder, model, mode)


def test_the_default_path_is_the_system_file() -> None:
    import importlib
    import sys

    fresh = importlib.reload(managed)  # the module's own choice, before the suite's patch
    expected = (
        "/Library/Application Support/Wyckoff/managed.toml"
        if sys.platform == "darwin"
        else "/etc/wyckoff/managed.toml"
    )
    assert str(fresh.MANAGED_PATH) == expected


def test_no_environment_variable_moves_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("WYCKOFF_MANAGED", "WYCKOFF_MANAGED_PATH", "WYCKOFF_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(tmp_path))
    write_policy("disable_yolo = true\n")
    policy = managed.load_managed()
    assert policy is not None and policy.path == managed.MANAGED_PATH and policy.disable_yolo


def test_deny_rules_win_over_user_and_project_allow(workspace: Path) -> None:
    write_policy('deny = ["run_shell(curl:*)", "Bash(wget:*)"]\n')
    paths.config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.config_file().write_text('[permissions]\nallow = ["run_shell"]\n')
    policy = session(workspace, mode="yolo").policy  # type: ignore[attr-defined]
    ctx = ToolContext(workspace=workspace)
    for command in ("curl https://x.test", "cd a && curl x", "bash -c 'wget x'", "ls"):
        action = policy.evaluate(TOOLS["run_shell"], {"command": command}, ctx).action
        assert action == ("allow" if command == "ls" else "deny"), command


def test_disable_yolo_makes_yolo_ask_and_says_why(workspace: Path) -> None:
    path = write_policy("disable_yolo = true\n")
    policy = session(workspace, mode="yolo").policy  # type: ignore[attr-defined]
    verdict = policy.evaluate(TOOLS["run_shell"], {"command": "make"}, ToolContext(workspace=workspace))
    assert verdict.action == "ask" and f"yolo mode is disabled by the managed policy {path}" in verdict.reason
    policy.mode = "default"
    assert (
        "default mode asks"
        in policy.evaluate(TOOLS["run_shell"], {"command": "make"}, ToolContext(workspace=workspace)).reason
    )


def test_allowed_models_refuse_another_model_naming_the_file(workspace: Path) -> None:
    path = write_policy('allowed_models = ["anthropic:*"]\n')
    with pytest.raises(ConfigError) as raised:
        session(workspace, model="scripted")
    assert f"the model scripted is not allowed by the managed policy {path}" in raised.value.message
    write_policy('allowed_models = ["scripted*"]\n')
    session(workspace, model="scripted")  # allowed: builds


def test_allow_hooks_false_turns_every_hook_off(workspace: Path) -> None:
    path = write_policy("allow_hooks = false\n")
    paths.config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.config_file().write_text('[[hooks.PreToolUse]]\nhooks = [{ type = "command", command = "true" }]\n')
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}})
    )
    found = load_hooks(workspace)
    assert found.files == [] and found.problems == [
        f"hooks are turned off by the managed policy {path} (allow_hooks = false)"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("deny = [", "is not valid TOML"),
        ('deny = "run_shell"\n', "'deny' must be a list of strings"),
        ('disable_yolo = "yes"\n', "'disable_yolo' must be true or false"),
        ("disabel_yolo = true\n", "unknown managed policy key 'disabel_yolo'"),
        ('allow_plugins = "no"\n', "'allow_plugins' must be true or false"),
        ('sandbox = "optional"\n', "'sandbox' must be \"required\""),
        ("sandbox = true\n", "'sandbox' must be \"required\""),
        ('mcp_allowlist = "github"\n', "'mcp_allowlist' must be a list of strings"),
        ('deny = ["run_shell("]\n', "deny: invalid rule"),
    ],
)
def test_a_policy_it_cannot_honour_stops_the_session(workspace: Path, text: str, message: str) -> None:
    path = write_policy(text)
    with pytest.raises(ConfigError) as raised:
        session(workspace)
    assert str(path) in raised.value.message and message in raised.value.message


def test_config_show_origin_names_each_source(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_policy("disable_yolo = true\n")
    user = paths.config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('model = "openai:gpt-5"\n[permissions]\nallow = ["run_shell(ls)"]\n')
    project = paths.project_config_file(workspace)
    project.parent.mkdir(parents=True, exist_ok=True)
    project.write_text("max_tool_rounds = 7\n")
    monkeypatch.chdir(workspace)
    assert main(["config", "show", "--origin"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert f"managed.disable_yolo = true  # {path} (managed policy: wins)" in lines
    assert f'model = "openai:gpt-5"  # {user}' in lines
    assert f'permissions.allow = ["run_shell(ls)"]  # {user}' in lines
    assert f"max_tool_rounds = 7  # {project}" in lines
    assert any(line.startswith("permissions.deny = []  # default") for line in lines)


def test_mcp_allowlist_keeps_only_the_servers_it_names(workspace: Path) -> None:
    from types import SimpleNamespace

    from wyckoff_cli.session.mcp import client_servers
    from wyckoff_cli.storage.config import load_config
    from wyckoff_cli.tools.mcp.config import load_mcp_config

    path = write_policy('mcp_allowlist = ["github", "internal-*"]\n')
    user = paths.config_file()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(
        '[mcp_servers.github]\ncommand = "gh-mcp"\n[mcp_servers.scraper]\ncommand = "scrape"\n'
        '[mcp_servers.internal-docs]\nurl = "http://127.0.0.1:9/mcp"\n'
    )
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {"command": "evil"}}}))
    found = load_mcp_config(workspace, load_config(workspace).config)
    assert sorted(s.name for s in found.servers) == ["github", "internal-docs"]
    for name in ("scraper", "evil"):
        assert (
            f"[mcp] {name} is not started: it is not in mcp_allowlist of the managed policy {path}"
            in found.problems
        )
    client = [
        SimpleNamespace(name="github", type="http", url="http://127.0.0.1:9/mcp", headers=[]),
        SimpleNamespace(name="other", type="http", url="http://127.0.0.1:9/mcp", headers=[]),
    ]
    specs, problems = client_servers(client)
    assert [s.name for s in specs] == ["github"] and any("other is not started" in p for p in problems)
