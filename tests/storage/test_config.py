"""Typed configuration: reading, merging, errors, and `wyckoff config`."""

from __future__ import annotations

from pathlib import Path

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.config import load_config, split_key


def write_user(text: str) -> Path:
    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_wyckoff_home_relocates_every_path(isolated_environment: Path) -> None:
    assert paths.config_dir() == isolated_environment / "config"
    assert paths.data_dir() == isolated_environment / "data"
    assert paths.cache_dir() == isolated_environment / "cache"
    assert not paths.config_dir().exists()  # nothing is created by asking


def test_defaults_without_any_file(workspace: Path) -> None:
    loaded = load_config(workspace)
    assert loaded.files == ()
    assert loaded.config.max_tool_rounds == 15 and loaded.config.permission_mode == "default"


def test_project_file_overrides_user_file_and_rules_are_combined(workspace: Path) -> None:
    write_user('model = "openai:gpt-5"\nmax_tool_rounds = 9\n[permissions]\nallow = ["run_shell(pytest*)"]\n')
    project = paths.project_config_file(workspace)
    project.write_text(
        'model = "anthropic:claude-opus-4-5"\n[permissions]\nallow = ["edit_file(src/**)"]\n'
        'deny = ["run_shell(rm*)"]\n[models.fast]\nprovider = "openai"\nmodel = "gpt-5-mini"\n'
    )
    config = load_config(workspace).config
    assert config.model == "anthropic:claude-opus-4-5"
    assert config.max_tool_rounds == 9
    assert config.permissions.allow == ["run_shell(pytest*)", "edit_file(src/**)"]
    assert config.permissions.deny == ["run_shell(rm*)"]
    assert config.models["fast"].model_id == "openai:gpt-5-mini"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('max_tool_rounds = "ten"\n', "line 1: max_tool_rounds must be an integer, got string 'ten'"),
        ('\n\n[permissions]\nallow = "x"\n', "line 4: permissions.allow must be a list"),
        (
            'permission_mode = "wild"\n',
            "permission_mode must be one of 'default', 'plan', 'auto-edit', 'auto', 'yolo'",
        ),
        ('[models.x]\nprovider = "openai"\n', "models.x.model is required"),
        (
            '[ui]\nnotifications = "loud"\n',
            "line 2: ui.notifications must be one of 'auto', 'bell', 'off', got 'loud'",
        ),
        ("[ui]\nnotifications = true\n", "ui.notifications must be one of 'auto', 'bell', 'off'"),
        ('[ui]\nnotify = "bell"\n', "unknown key 'ui.notify'"),
        ("colour = 1\n", "unknown key 'colour'"),
        ("model = \n", "invalid TOML"),
    ],
)
def test_bad_config_names_the_file_line_and_key(workspace: Path, text: str, message: str) -> None:
    path = write_user(text)
    with pytest.raises(ConfigError) as info:
        load_config(workspace)
    assert str(path) in info.value.message
    assert message in info.value.message


def test_bad_config_exits_2_without_traceback(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_user("max_tool_rounds = true\n")
    monkeypatch.chdir(workspace)
    assert main(["config", "show"]) == 2
    err = capsys.readouterr().err
    assert "max_tool_rounds must be an integer" in err and "Traceback" not in err


def test_config_set_get_unset(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    assert main(["config", "set", "max_tool_rounds", "20"]) == 0
    assert main(["config", "set", "permissions.allow", '["run_shell(make*)"]']) == 0
    assert main(["config", "set", "models.local.provider", "openai"]) == 2  # incomplete alias is refused
    capsys.readouterr()
    assert main(["config", "get", "max_tool_rounds"]) == 0
    assert capsys.readouterr().out.strip() == "20"
    assert main(["config", "get", "permissions.allow"]) == 0
    assert capsys.readouterr().out.strip() == '["run_shell(make*)"]'
    assert paths.config_file().stat().st_mode & 0o777 == 0o600
    assert main(["config", "unset", "max_tool_rounds"]) == 0
    capsys.readouterr()
    assert main(["config", "get", "max_tool_rounds"]) == 0
    assert capsys.readouterr().out.strip() == "15"
    assert main(["config", "get", "nope"]) == 2


def test_config_set_project_and_path(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    assert main(["config", "set", "--project", "permission_mode", "auto-edit"]) == 0
    assert main(["config", "path"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == str(paths.project_config_file(workspace.resolve()))
    assert load_config(workspace.resolve()).config.permission_mode == "auto-edit"


def test_split_key_honours_quotes() -> None:
    assert split_key('model_overrides."openai:gpt-5.1".input') == [
        "model_overrides",
        "openai:gpt-5.1",
        "input",
    ]


def test_ui_notifications_default_and_set(workspace: Path) -> None:
    assert load_config(workspace).config.ui.notifications == "auto"
    write_user('[ui]\nnotifications = "bell"\n')
    assert load_config(workspace).config.ui.notifications == "bell"
