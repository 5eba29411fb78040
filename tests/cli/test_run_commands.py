"""`wyckoff run "/name ..."`: the built-in commands headless offers, through the real
entry point, on a real work tree with real checkpoints."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_run_cmd import script
from wyckoff_cli.cli.main import main
from wyckoff_cli.session.commands import HEADLESS, offered_by


def run(workspace: Path, model: str, *args: str) -> int:
    return main(["run", "-m", model, "--cwd", str(workspace), *args])


def test_diff_undo_redo_rewind_and_cost_on_the_session_continued(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / "kept.txt").write_text("kept\n", encoding="utf-8")
    rounds = [
        {
            "tool_calls": [{"name": "write_file", "args": {"path": "b.txt", "content": "new line\n"}}],
            "usage": {"input_tokens": 100, "output_tokens": 5},
        },
        {"text": "Wrote b.txt.", "usage": {"input_tokens": 120, "output_tokens": 8}},
    ]
    model = script(tmp_path, rounds)
    assert run(workspace, model, "--permission-mode", "auto-edit", "write b.txt") == 0
    assert (workspace / "b.txt").exists()
    capsys.readouterr()

    assert run(workspace, model, "--continue", "/diff") == 0
    assert "+new line" in capsys.readouterr().out

    assert run(workspace, model, "--continue", "/undo") == 0
    captured = capsys.readouterr()
    assert "Undo done: 1 file deleted." in captured.out and "deleted     b.txt" in captured.err
    assert not (workspace / "b.txt").exists() and (workspace / "kept.txt").exists()

    assert run(workspace, model, "--continue", "/redo") == 0
    assert "Redo done" in capsys.readouterr().out and (workspace / "b.txt").exists()

    assert run(workspace, model, "--continue", "/rewind 1 code") == 0
    out = capsys.readouterr().out
    assert "Code restored" in out and "Conversation rewound" not in out
    assert not (workspace / "b.txt").exists()

    assert run(workspace, model, "--continue", "--output-format", "json", "/cost") == 0
    result = json.loads(capsys.readouterr().out)
    (table,) = [e for e in result["events"] if e["type"] == "command_output"]
    assert table["rows"][-1][0] == "total" and table["rows"][-1][2] == "220"  # both calls


def test_nothing_to_undo_says_so_and_an_app_command_is_a_usage_error(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = script(tmp_path, [])
    assert run(workspace, model, "/undo") == 0  # a new session: nothing has run, nothing changed
    assert "/undo: nothing has run in this session yet" in capsys.readouterr().out
    assert run(workspace, model, "/quit") == 2
    err = capsys.readouterr().err
    assert "/quit is not available in `wyckoff run`" in err and "/diff" in err


def test_every_command_headless_offers_answers(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each command of the table whose hosts include headless runs and says something
    (none is refused as unavailable or unknown)."""
    model = script(tmp_path, [{"text": "ok"}])
    writes = [
        {"tool_calls": [{"name": "write_file", "args": {"path": "AGENTS.md", "content": "# Agents\n"}}]},
        {"text": "Wrote AGENTS.md."},
    ]
    init = script(tmp_path / "init", writes) if (tmp_path / "init").mkdir() is None else ""
    assert run(workspace, model, "hi") == 0
    capsys.readouterr()
    answers: dict[str, str] = {}
    agents_md_after: dict[str, bool] = {}  # whether AGENTS.md exists after each command
    for command in offered_by(HEADLESS):
        used = init if command.name == "init" else model  # /init is a turn: it writes AGENTS.md
        code = run(workspace, used, "--continue", "--permission-mode", "auto-edit", f"/{command.name}")
        captured = capsys.readouterr()
        assert code in (0, 1), f"/{command.name}: {captured.err}"
        answers[command.name] = answer = captured.out + captured.err
        agents_md_after[command.name] = (workspace / "AGENTS.md").exists()
        assert answer.strip(), f"/{command.name} answered nothing"
        assert "not available" not in answer and "Unknown command" not in answer
    assert "Wrote AGENTS.md." in answers["init"]  # then /rewind went back to before it
    assert "Conversation rewound" in answers["rewind"] and not agents_md_after["rewind"]
    assert "Undo done" in answers["undo"] and agents_md_after["undo"]  # /undo takes the rewind back
