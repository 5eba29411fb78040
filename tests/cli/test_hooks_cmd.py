"""`wyckoff hooks list|trust|untrust` and `wyckoff run --trust-hooks`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runtime.hook_support import group, hook_command, inputs, write_user_hooks
from wyckoff_cli.cli.main import main


def project_hooks(root: Path, command: str) -> Path:
    path = root / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}})
    )
    return path


def test_list_shows_source_and_trust_then_trust_records_it(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_user_hooks({"Stop": [group("echo mine")]})
    path = project_hooks(workspace, "./check.sh")
    assert main(["hooks", "list", "--cwd", str(workspace), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {(r["event"], r["command"], r["trust"]) for r in rows} == {
        ("Stop", "echo mine", "user"),
        ("UserPromptSubmit", "./check.sh", "untrusted"),
    }
    assert main(["hooks", "trust", "--cwd", str(workspace), "--yes"]) == 0
    assert "./check.sh" in capsys.readouterr().out
    assert main(["hooks", "list", "--cwd", str(workspace)]) == 0
    assert f"{path}  [trusted]" in capsys.readouterr().out


def test_trust_without_a_terminal_or_yes_refuses(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project_hooks(workspace, "./check.sh")
    assert main(["hooks", "trust", "--cwd", str(workspace)]) == 2
    assert "--yes" in capsys.readouterr().err


def test_run_warns_about_untrusted_hooks_and_trust_hooks_runs_them(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command, log = hook_command(tmp_path / "h", "prompt", stdout="extra context")
    project_hooks(workspace, command)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rounds": [{"text": "ok"}, {"text": "ok"}]}))
    base = ["run", "-m", f"scripted:{script}", "--cwd", str(workspace)]
    assert main([*base, "hi"]) == 0
    assert "are not trusted" in capsys.readouterr().err and inputs(log) == []
    assert main([*base, "--trust-hooks", "hi"]) == 0
    assert inputs(log)[0]["input"]["prompt"] == "hi"
