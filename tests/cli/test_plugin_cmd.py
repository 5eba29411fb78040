"""`wyckoff plugin …` as a user runs it: the listing shown before the question, the
question itself, `--yes` for scripts, and each bad input as one clear line."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.plugin_support import (
    MARKET,
    PLUGIN,
    bare_repository,
    commit_all,
    make_marketplace,
    serve_files,
    sha256,
    tar_gz,
    write,
)
from wyckoff_cli.cli.main import main
from wyckoff_cli.storage import plugins


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def answer(monkeypatch: pytest.MonkeyPatch, reply: str) -> list[str]:
    asked: list[str] = []
    monkeypatch.setattr("sys.stdin", Terminal())

    def fake_input(question: str) -> str:
        asked.append(question)
        return reply

    monkeypatch.setattr("builtins.input", fake_input)
    return asked


@pytest.fixture
def market(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = make_marketplace(tmp_path / "market")
    assert main(["plugin", "marketplace", "add", str(root)]) == 0
    assert (
        capsys.readouterr().out
        == f"Added the marketplace {MARKET} (1 plugins, owner Platform Team <platform@example.com>)\n"
    )
    return root


def test_install_lists_what_the_plugin_brings_then_installs_with_yes(
    market: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plugin", "install", f"{PLUGIN}@{MARKET}", "--yes"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{PLUGIN} 1.2.0 — Guard rails for the team")
    assert "  hooks (run programs once trusted):\n    PreToolUse [Bash] command: " in out
    assert "bash_command_validator.py" in out
    assert "  MCP servers (run once trusted):\n    demo: " in out and "servers/demo.py" in out
    assert (
        "    /guard-rails:review — Review the staged changes for security problems"
        " [allowed-tools: Bash(git diff:*), Read]\n" in out
    )
    assert "    /guard-rails:git:commit — Write a commit message" in out
    assert "  agents:\n    security-reviewer (" in out and " tokens) — Reviews a change" in out
    assert "  skills:\n    changelog-entry (" in out
    assert "  context cost of its agents and skills: " in out and " tokens per request" in out
    assert out.endswith(f"Installed {PLUGIN}@{MARKET} 1.2.0 (new sessions use it)\n")
    assert plugins.installed_dir(PLUGIN).is_dir()


def test_without_a_terminal_and_without_yes_nothing_is_installed(
    market: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plugin", "install", PLUGIN]) == 2
    captured = capsys.readouterr()
    assert "PreToolUse [Bash]" in captured.out  # shown all the same
    assert captured.err == (
        f"wyckoff: not a terminal; `wyckoff plugin install {PLUGIN} --yes` installs and trusts it. "
        "Nothing was installed.\n"
    )
    assert not plugins.installed_dir(PLUGIN).exists() and plugins.load_registry().plugins == {}


def test_the_question_names_the_trust_and_no_installs_nothing(
    market: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = answer(monkeypatch, "n")
    assert main(["plugin", "install", PLUGIN]) == 1
    assert asked == [f"Install {PLUGIN}@{MARKET} and trust its hooks and MCP servers? [y/N] "]
    assert capsys.readouterr().out.endswith("Nothing was installed.\n")
    assert not plugins.installed_dir(PLUGIN).exists()
    answer(monkeypatch, "y")
    assert main(["plugin", "install", PLUGIN]) == 0
    assert plugins.installed_dir(PLUGIN).is_dir()


def test_list_enable_disable_remove(market: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugin", "list"]) == 0
    assert (
        capsys.readouterr().out
        == "No plugins installed. `wyckoff plugin install NAME@MARKETPLACE` installs one.\n"
    )
    main(["plugin", "install", PLUGIN, "--yes"])
    capsys.readouterr()
    assert main(["plugin", "list", "--available"]) == 0
    out = capsys.readouterr().out
    assert f"{PLUGIN}@{MARKET}  1.2.0  enabled, in use here\n" in out
    assert f"{MARKET} offers:\n  {PLUGIN}@{MARKET}  1.2.0  Guard rails (installed)\n" in out
    assert main(["plugin", "disable", PLUGIN]) == 0
    assert capsys.readouterr().out == f"{PLUGIN}@{MARKET} is disabled (new sessions use it so)\n"
    main(["plugin", "list"])
    assert f"{PLUGIN}@{MARKET}  1.2.0  disabled, not used here\n" in capsys.readouterr().out
    assert main(["plugin", "enable", PLUGIN]) == 0
    assert main(["plugin", "remove", PLUGIN]) == 0
    assert capsys.readouterr().out.endswith(f"Removed {PLUGIN}@{MARKET}\n")
    assert main(["plugin", "marketplace", "list"]) == 0
    assert capsys.readouterr().out.startswith(f"{MARKET}  local ")
    assert main(["plugin", "marketplace", "remove", MARKET]) == 0
    main(["plugin", "marketplace", "list"])
    assert "No marketplaces." in capsys.readouterr().out


def test_update_shows_the_new_version_and_asks_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = make_marketplace(tmp_path / "src")
    bare = bare_repository(source, tmp_path / "market.git")
    assert main(["plugin", "marketplace", "add", bare.as_uri()]) == 0
    assert main(["plugin", "install", PLUGIN, "--yes"]) == 0
    manifest = source / "plugins" / PLUGIN / ".claude-plugin" / "plugin.json"
    manifest.write_text(manifest.read_text().replace('"1.2.0"', '"2.0.0"'))
    commit_all(source, bare, "2.0.0")
    capsys.readouterr()
    assert main(["plugin", "update", PLUGIN]) == 2  # not a terminal, no --yes: nothing changes
    assert plugins.installed(PLUGIN).version == "1.2.0"
    assert f"{PLUGIN}@{MARKET}: installed 1.2.0, offered 2.0.0" in capsys.readouterr().out
    assert main(["plugin", "update", "--yes"]) == 0
    assert capsys.readouterr().out.endswith(f"Updated {PLUGIN}@{MARKET} 2.0.0 (new sessions use it)\n")
    assert plugins.installed(PLUGIN).version == "2.0.0"


BAD_INPUT = [
    (["plugin", "install", "nothing"], "wyckoff: no plugin named 'nothing' in any known marketplace\n"),
    (
        ["plugin", "install", f"{PLUGIN}@nowhere"],
        "wyckoff: no marketplace named 'nowhere' (known: team-tools)\n",
    ),
    (["plugin", "remove", "nothing"], "wyckoff: no installed plugin named 'nothing' (installed: none)\n"),
    (
        ["plugin", "marketplace", "add", "https://h.example/m.tar.gz"],
        "wyckoff: https://h.example/m.tar.gz: an archive URL needs its SHA-256 pin (--sha256 HEX)\n",
    ),
]


@pytest.mark.parametrize(("argv", "error"), BAD_INPUT)
def test_bad_input_is_one_clear_line(
    market: Path, capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == error


def test_a_pin_mismatch_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tar_gz(make_marketplace(tmp_path / "src"))
    with serve_files({"m.tgz": archive}) as base:
        assert main(["plugin", "marketplace", "add", f"{base}/m.tgz", "--sha256", "f" * 64]) == 2
        err = capsys.readouterr().err
        assert err.startswith(
            f"wyckoff: {base}/m.tgz: the archive's SHA-256 is {sha256(archive)}, not the pinned"
        )
        assert err.endswith("nothing was installed\n")
        assert main(["plugin", "marketplace", "add", f"{base}/m.tgz", "--sha256", sha256(archive)]) == 0
    assert main(["plugin", "install", PLUGIN, "--yes"]) == 0


def test_the_managed_policy_can_turn_plugins_off(market: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wyckoff_cli.storage import managed

    managed.MANAGED_PATH.parent.mkdir(parents=True, exist_ok=True)
    managed.MANAGED_PATH.write_text("allow_plugins = false\n")
    assert main(["plugin", "install", PLUGIN, "--yes"]) == 2
    assert capsys.readouterr().err == (
        f"wyckoff: plugins are turned off by the managed policy {managed.MANAGED_PATH} (allow_plugins = false)\n"
    )
    main(["plugin", "list"])
    assert capsys.readouterr().out.startswith(
        f"Plugins are turned off by the managed policy {managed.MANAGED_PATH}"
    )


def events_of(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("mode", ["default", "yolo"])
def test_a_headless_run_with_the_plugin_blocks_grep(
    market: Path, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    assert main(["plugin", "install", PLUGIN, "--yes"]) == 0
    rounds = [
        {"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "grep -r TODO ."}}]},
        {"text": "grep is refused here; use rg."},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rounds": rounds}))
    capsys.readouterr()
    argv = ["run", "-m", f"scripted:{script}", "--cwd", str(workspace), "--sandbox", "off"]
    main([*argv, "--permission-mode", mode, "--output-format", "stream-json", "find the TODOs"])
    events = events_of(capsys.readouterr().out)
    (hook,) = [e for e in events if e["type"] == "hook_run"]
    assert hook["outcome"] == "blocked" and hook["exit_code"] == 2
    (refused,) = [e for e in events if e["type"] == "tool_error"]
    assert "Use 'rg' (ripgrep) instead of 'grep'" in json.dumps(refused)
    assert not [e for e in events if e["type"] == "approval_request"]  # blocked before any question


def test_trust_hooks_takes_a_project_settings_files_enabled_plugins_for_one_run(
    market: Path, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plugin", "install", PLUGIN, "--yes"]) == 0
    assert main(["plugin", "disable", PLUGIN]) == 0
    settings = workspace / ".claude" / "settings.json"
    write(settings, json.dumps({"enabledPlugins": {f"{PLUGIN}@{MARKET}": True}}))
    rounds = [
        {"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "grep -r TODO ."}}]},
        {"text": "grep is refused here; use rg."},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rounds": rounds}))
    argv = ["run", "-m", f"scripted:{script}", "--cwd", str(workspace), "--sandbox", "off"]
    argv += ["--permission-mode", "yolo", "--output-format", "stream-json"]
    capsys.readouterr()
    main([*argv, "/guard-rails:review the parser"])  # untrusted: the plugin is not used
    untrusted = capsys.readouterr()
    assert not [e for e in events_of(untrusted.out) if e["type"] == "hook_run"]
    assert "Review the staged changes" not in untrusted.out
    assert main([*argv, "--trust-hooks", "/guard-rails:review the parser"]) == 0  # this run only
    events = events_of(capsys.readouterr().out)
    (hook,) = [e for e in events if e["type"] == "hook_run"]  # the plugin's validator, as enabled
    assert hook["outcome"] == "blocked" and hook["exit_code"] == 2
    assert "Review the staged changes. Focus: the parser" in json.dumps(events)
    assert plugins.active_plugins(workspace) == []  # nothing was recorded
    assert [m.name for m in plugins.active_plugins(workspace, trust_settings=True)] == [PLUGIN]
