"""`wyckoff permissions list|add|remove` and the saved-rule store behind it."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.session.builder import build_policy
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.config import load_config
from wyckoff_cli.storage.permissions import list_rules, remove_rule, save_rule


@pytest.fixture
def project(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(workspace)
    return workspace.resolve()


def test_save_rule_writes_project_config_and_keeps_other_keys(project: Path) -> None:
    config = paths.project_config_file(project)
    config.write_text('model = "openai:gpt-5"\n\n[permissions]\ndeny = ["run_shell(curl*)"]\n')
    target = save_rule("run_shell(pytest)", root=project)
    save_rule("run_shell(pytest)", root=project)  # idempotent
    save_rule("edit_file(src/app.py)", root=project)
    assert target == config
    data = tomllib.loads(config.read_text())
    assert data["model"] == "openai:gpt-5"
    assert data["permissions"] == {
        "deny": ["run_shell(curl*)"],
        "allow": ["run_shell(pytest)", "edit_file(src/app.py)"],
    }
    loaded = load_config(project).config
    assert loaded.permissions.allow == ["run_shell(pytest)", "edit_file(src/app.py)"]


def test_save_into_a_project_without_a_wyckoff_folder(tmp_path: Path) -> None:
    save_rule("read_file", root=tmp_path)
    assert paths.project_config_file(tmp_path).exists()


def test_list_and_remove_across_scopes(project: Path) -> None:
    save_rule("run_shell(make)", root=project, scope="user")
    save_rule("run_shell(make)", root=project)
    save_rule("run_shell(rm*)", root=project, kind="deny")
    assert [(r.rule, r.kind, r.scope) for r in list_rules(project)] == [
        ("run_shell(make)", "allow", "user"),
        ("run_shell(make)", "allow", "project"),
        ("run_shell(rm*)", "deny", "project"),
    ]
    removed = remove_rule("run_shell(make)", root=project, scope="user")
    assert [(r.scope, r.file) for r in removed] == [("user", paths.config_file())]
    assert [r.scope for r in list_rules(project) if r.rule == "run_shell(make)"] == ["project"]
    assert remove_rule("nothing", root=project) == []
    assert len(remove_rule("run_shell(make)", root=project)) == 1
    assert [r.rule for r in list_rules(project)] == ["run_shell(rm*)"]


def test_cli_add_list_remove(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["permissions", "list"]) == 0
    assert "No saved rules" in capsys.readouterr().out
    assert main(["permissions", "add", "run_shell(pytest*)"]) == 0
    assert main(["permissions", "add", "--deny", "--user", "run_shell(git push*)"]) == 0
    out = capsys.readouterr().out
    assert "saved allow rule run_shell(pytest*)" in out and "saved deny rule run_shell(git push*)" in out
    assert main(["permissions", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("deny   run_shell(git push*)  user (")
    assert lines[1].startswith("allow  run_shell(pytest*)    project (")
    assert main(["permissions", "list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["rule"], r["kind"], r["scope"]) for r in rows} == {
        ("run_shell(git push*)", "deny", "user"),
        ("run_shell(pytest*)", "allow", "project"),
    }
    assert main(["permissions", "remove", "--allow", "run_shell(git push*)"]) == 2
    assert "no saved rule" in capsys.readouterr().err
    assert main(["permissions", "remove", "run_shell(git push*)"]) == 0
    assert "removed deny rule run_shell(git push*)" in capsys.readouterr().out


def test_cli_rejects_malformed_rules(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["permissions", "add", "run_shell("]) == 2
    assert "invalid rule" in capsys.readouterr().err
    assert list_rules(project) == []


def test_build_policy_reports_malformed_rules(project: Path) -> None:
    config = load_config(project).config
    config.permissions.allow = ["run_shell(pytest*)", "oops rule"]
    with pytest.raises(ConfigError, match="invalid rule 'oops rule'"):
        build_policy(config, "default", [])
    with pytest.raises(ConfigError, match="invalid rule 'x\\(\\)'"):
        build_policy(load_config(project).config, "default", ["x()"])
    policy = build_policy(load_config(project).config, "auto-edit", ["run_shell(make)"])
    assert policy.mode == "auto-edit" and policy.allow == ["run_shell(make)"]
