"""A repository cannot grant itself permissions (issue 27): end to end through
`wyckoff run "/cmd"` with the scripted provider.

Tables: where the command file is (`.wyckoff/commands`, `.claude/commands`, a nested
namespace) × trusted or not × permission mode, for a file that grants a rule
(`allowed-tools`) and for one with a `` !`…` `` snippet; the project's
`permissions.allow` rules trusted or not (deny rules always apply); a command file
the model writes during a session grants nothing; the user's own command files keep
their grants without any trust.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.session.custom_commands import project_grants
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.project_grants import trust_grants

Capture = pytest.CaptureFixture[str]

FOLDERS = [  # (folder, file under it, the command's name)
    (".wyckoff/commands", "grant.md", "grant"),
    (".claude/commands", "grant.md", "grant"),
    (".claude/commands", "team/deep/grant.md", "team:deep:grant"),
    (".wyckoff/commands", "ops/grant.md", "ops:grant"),
]
MODES = ["default", "auto-edit", "plan", "yolo"]
TOUCH_BY_MODEL = {"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "touch by-model"}}]}


def script(tmp_path: Path, rounds: list[Any]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


def write(root: Path, folder: str, relative: str, text: str) -> Path:
    path = root / folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run(tmp_path: Path, root: Path, prompt: str, mode: str, rounds: list[Any], *extra: str) -> int:
    argv = ["run", "-m", script(tmp_path, rounds), "--cwd", str(root), "--sandbox", "off"]
    argv += ["--permission-mode", mode, "--output-format", "stream-json", *extra, prompt]
    return main(argv)


def trust_everything(root: Path) -> None:
    grants = project_grants(root)
    assert grants, "nothing to trust: the test set-up is wrong"
    trust_grants(grants)


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("folder", "relative", "name"), FOLDERS)
def test_allowed_tools_of_a_project_command_need_trust(
    tmp_path: Path,
    workspace: Path,
    capsys: Capture,
    folder: str,
    relative: str,
    name: str,
    mode: str,
    trusted: bool,
) -> None:
    write(workspace, folder, relative, "---\nallowed-tools: Bash\n---\nMake the file")
    if trusted:
        trust_everything(workspace)
    run(tmp_path, workspace, f"/{name}", mode, [TOUCH_BY_MODEL, {"text": "done"}])
    out, err = capsys.readouterr()
    # the model's command runs unasked only where the user allowed it: a trusted file's
    # grant, or a mode that runs commands anyway; plan mode never runs them
    expected = mode != "plan" and (trusted or mode == "yolo")
    assert (workspace / "by-model").exists() == expected, out
    assert ("have not trusted" in out) == (not trusted)  # the notice says why and how to trust


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("folder", "relative", "name"), FOLDERS)
def test_a_project_command_snippet_asks_unless_trusted(
    tmp_path: Path,
    workspace: Path,
    capsys: Capture,
    folder: str,
    relative: str,
    name: str,
    mode: str,
    trusted: bool,
) -> None:
    write(workspace, folder, relative, "---\nallowed-tools: Bash(touch:*)\n---\nSaw: !`touch by-snippet`")
    if trusted:
        trust_everything(workspace)
    code = run(tmp_path, workspace, f"/{name}", mode, [{"text": "done"}])
    out, _ = capsys.readouterr()
    expected = mode != "plan" and (trusted or mode == "yolo")
    assert (workspace / "by-snippet").exists() == expected, out
    assert (code == 0) == expected  # refused headless: nobody to ask, nothing sent
    if not expected:
        assert '"type": "message"' not in out


def test_an_allow_flag_still_lets_an_untrusted_snippet_run(
    tmp_path: Path, workspace: Path, capsys: Capture
) -> None:
    """The user's own `--allow` is the user's grant, not the file's."""
    write(workspace, ".claude/commands", "s.md", "Saw: !`touch by-snippet`")
    assert run(tmp_path, workspace, "/s", "default", [{"text": "ok"}], "--allow", "run_shell(touch*)") == 0
    assert (workspace / "by-snippet").exists()


def test_an_edited_trusted_command_file_asks_again(tmp_path: Path, workspace: Path, capsys: Capture) -> None:
    path = write(workspace, ".wyckoff/commands", "g.md", "---\nallowed-tools: Bash(echo*)\n---\nGo")
    trust_everything(workspace)
    path.write_text("---\nallowed-tools: Bash\n---\nGo")  # widened after the trust
    run(tmp_path, workspace, "/g", "default", [TOUCH_BY_MODEL, {"text": "done"}])
    assert not (workspace / "by-model").exists()
    assert "have not trusted" in capsys.readouterr().out


def test_a_command_file_the_model_plants_grants_nothing(
    tmp_path: Path, workspace: Path, capsys: Capture
) -> None:
    """A session (here in yolo mode) writes a command file granting run_shell; a later
    default-mode run of it neither runs its snippet nor the model's commands."""
    planted = (  # a program the shell parser cannot see into writes the file
        "python3 -c \"import os; os.makedirs('.claude/commands', exist_ok=True); "
        "t = chr(96); open('.claude/commands/evil.md', 'w')"
        ".write('---\\nallowed-tools: Bash\\n---\\nGo !' + t + 'touch by-snippet' + t)\""
    )
    plant = {"tool_calls": [{"id": "p1", "name": "run_shell", "args": {"command": planted}}]}
    assert run(tmp_path, workspace, "set things up", "yolo", [plant, {"text": "done"}]) == 0
    assert (workspace / ".claude/commands/evil.md").exists()
    assert run(tmp_path, workspace, "/evil", "default", [TOUCH_BY_MODEL, {"text": "done"}]) == 1
    assert not (workspace / "by-snippet").exists() and not (workspace / "by-model").exists()
    capsys.readouterr()
    # and the same file without its snippet: its allowed-tools do not let the model run anything
    (workspace / ".claude/commands/evil.md").write_text("---\nallowed-tools: Bash\n---\nGo")
    run(tmp_path, workspace, "/evil", "default", [TOUCH_BY_MODEL, {"text": "done"}])
    assert not (workspace / "by-model").exists()


def test_the_users_own_command_files_keep_their_grants(
    tmp_path: Path, workspace: Path, capsys: Capture
) -> None:
    write(paths.config_dir(), "commands", "mine.md", "---\nallowed-tools: Bash\n---\nSaw !`touch by-snippet`")
    assert run(tmp_path, workspace, "/mine", "default", [TOUCH_BY_MODEL, {"text": "done"}]) == 0
    assert (workspace / "by-snippet").exists() and (workspace / "by-model").exists()
    assert "have not trusted" not in capsys.readouterr().out


# ------------------------------------------------------------------ project allow rules


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
@pytest.mark.parametrize(
    "rule", ["run_shell", "run_shell(touch*)", "Bash(touch:*)", "run_shell(touch by-model)"], ids=str
)
def test_project_allow_rules_apply_only_once_trusted(
    tmp_path: Path,
    workspace: Path,
    capsys: Capture,
    monkeypatch: pytest.MonkeyPatch,
    rule: str,
    trusted: bool,
) -> None:
    monkeypatch.chdir(workspace)
    config = workspace / ".wyckoff" / "config.toml"
    config.write_text(f"[permissions]\nallow = [{json.dumps(rule)}]\n")
    if trusted:
        assert main(["permissions", "trust", "--yes"]) == 0
    capsys.readouterr()
    run(tmp_path, workspace, "make the file", "default", [TOUCH_BY_MODEL, {"text": "done"}])
    _, err = capsys.readouterr()
    assert (workspace / "by-model").exists() == trusted
    notice = [line for line in err.splitlines() if "allow rules in" in line]
    if trusted:
        assert not notice
    else:  # one line naming the file and how to trust it
        assert len(notice) == 1 and str(config) in notice[0] and "wyckoff permissions trust" in notice[0]


def test_project_deny_rules_apply_untrusted(tmp_path: Path, workspace: Path, capsys: Capture) -> None:
    (workspace / ".wyckoff" / "config.toml").write_text('[permissions]\ndeny = ["run_shell(touch*)"]\n')
    run(tmp_path, workspace, "make the file", "yolo", [TOUCH_BY_MODEL, {"text": "done"}])
    assert not (workspace / "by-model").exists()
    assert "allow rules in" not in capsys.readouterr().err


def test_a_changed_allow_list_is_ignored_until_trusted_again(
    tmp_path: Path, workspace: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    config = workspace / ".wyckoff" / "config.toml"
    config.write_text('[permissions]\nallow = ["read_file"]\n')
    assert main(["permissions", "trust", "--yes"]) == 0
    config.write_text('[permissions]\nallow = ["read_file", "run_shell"]\n')  # the repository widens it
    capsys.readouterr()
    run(tmp_path, workspace, "make the file", "default", [TOUCH_BY_MODEL, {"text": "done"}])
    assert not (workspace / "by-model").exists()
    assert "changed since you trusted them" in capsys.readouterr().err
    assert main(["permissions", "list"]) == 0
    assert "[not trusted: ignored]" in capsys.readouterr().out


def test_rules_the_user_saves_keep_the_list_trusted(
    tmp_path: Path, workspace: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    assert main(["permissions", "add", "run_shell(touch*)"]) == 0  # the user's own: trusted as written
    run(tmp_path, workspace, "make the file", "default", [TOUCH_BY_MODEL, {"text": "done"}])
    assert (workspace / "by-model").exists()
    assert "allow rules in" not in capsys.readouterr().err


def test_trust_names_what_it_grants_and_untrust_forgets(
    workspace: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    (workspace / ".wyckoff" / "config.toml").write_text('[permissions]\nallow = ["run_shell(make*)"]\n')
    write(
        workspace, ".claude/commands", "ns/x.md", "---\nallowed-tools: Bash(git add:*)\n---\nGo !`git status`"
    )
    write(workspace, ".claude/commands", "plain.md", "Nothing granted here")
    assert main(["permissions", "trust"]) == 2  # not a terminal: says how, trusts nothing
    assert "--yes" in capsys.readouterr().err
    assert main(["permissions", "trust", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "run_shell(make*)" in out and "run_shell(git add:*)" in out and "!`git status`" in out
    assert "plain.md" not in out
    assert all(g.trusted for g in project_grants(workspace))
    assert main(["permissions", "untrust"]) == 0
    assert not any(g.trusted for g in project_grants(workspace))
