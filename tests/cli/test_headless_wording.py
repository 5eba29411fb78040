"""What `wyckoff run` says, through a real subprocess (issue 28): a denial when no one
was asked, the answer's last line ending before the session hint, and a real
PreToolUse hook's block that the answer reports (no second answer, no warning)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.runtime.hook_support import group, hook_command, write_user_hooks

EDIT = {"name": "edit_file", "args": {"path": "calc.py", "old": "a - b", "new": "a + b"}}


def scripted(tmp_path: Path, rounds: list[Any]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


def run(args: list[str], cwd: Path, *, merged: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "run", *args],
        cwd=cwd,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        timeout=60,
    )


def test_a_denial_with_no_one_to_ask_says_so_and_how_to_allow_it(tmp_path: Path, workspace: Path) -> None:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    model = scripted(tmp_path, [{"tool_calls": [EDIT]}, {"text": "I could not edit calc.py."}])
    result = run(["-m", model, "fix add()"], workspace)
    assert result.returncode == 0, result.stderr
    assert "The user denied" not in result.stderr
    line = next(x for x in result.stderr.splitlines() if x.startswith("wyckoff: edit_file not run"))
    assert "this run has no one to ask" in line
    assert "--allow 'edit_file(calc.py)'" in line and "--permission-mode auto-edit" in line
    assert "[permissions] allow" in line and line.endswith("tell the user which to use.")


def test_the_session_hint_starts_on_its_own_line(tmp_path: Path, workspace: Path) -> None:
    model = scripted(tmp_path, [{"text": "The answer is 4."}])
    result = run(["-m", model, "what is 2+2?"], workspace, merged=True)
    assert result.returncode == 0, result.stdout
    assert "The answer is 4.\n[session " in result.stdout
    assert "4.[session" not in result.stdout


def test_a_real_hook_block_reported_by_the_answer_is_accepted(tmp_path: Path, workspace: Path) -> None:
    command, log = hook_command(tmp_path / "hooks", "pre", code=2, stderr="rm is not allowed here")
    write_user_hooks({"PreToolUse": [group(command, "run_shell")]})
    (workspace / "build").mkdir()
    rounds = [
        {"tool_calls": [{"name": "run_shell", "args": {"command": "rm -rf build"}}]},
        {"text": "The hook blocked my command."},
        {"text": "a second answer nobody should pay for"},
    ]
    model = scripted(tmp_path, rounds)
    result = run(["-m", model, "--output-format", "json", "remove the build folder"], workspace)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert (data["reason"], data["text"]) == ("completed", "The hook blocked my command.")
    assert [e for e in data["events"] if e["type"] == "retry"] == []
    assert not [e for e in data["events"] if e["type"] == "notice" and "unreliable" in e["message"]]
    assert data["summary"]["rounds"] == 2 and data["summary"]["tool_calls"]["refused"] == 1
    assert log.exists() and (workspace / "build").is_dir()  # the hook ran; the command did not


def test_a_retry_notice_on_stderr_says_what_was_sent(tmp_path: Path, workspace: Path) -> None:
    command, _ = hook_command(tmp_path / "hooks", "pre", code=2, stderr="rm is not allowed here")
    write_user_hooks({"PreToolUse": [group(command, "run_shell")]})
    rounds = [
        {"tool_calls": [{"name": "run_shell", "args": {"command": "rm -rf build"}}]},
        {"text": "All clean now."},
        {"text": "The hook blocked my command."},
    ]
    result = run(["-m", scripted(tmp_path, rounds), "remove the build folder"], workspace)
    assert result.returncode == 0, result.stderr
    assert (
        "[retry] Asked the model to answer again, truthfully: run_shell(command=rm -rf build) did not "
        "succeed and its answer did not say so (retry 1 of 2)"
    ) in result.stderr
    assert "Reminded the model to call" not in result.stderr


def test_a_custom_command_run_headless_is_titled_and_resumed_as_typed(
    tmp_path: Path, workspace: Path
) -> None:
    commands = workspace / ".wyckoff" / "commands"
    commands.mkdir(parents=True)
    # `audit`, not `review`: a custom command never replaces the built-in /review (commands.prefer)
    (commands / "audit.md").write_text("Review $ARGUMENTS carefully.\n")
    model = scripted(tmp_path, [{"text": "Looks fine."}])
    result = run(["-m", model, "--output-format", "json", "/audit calc.py"], workspace)
    assert result.returncode == 0, result.stderr
    session_id = json.loads(result.stdout.strip().splitlines()[-1])["session_id"]
    listed = subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "sessions", "list", "--json"],
        cwd=workspace,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
    )
    titles = {item["id"]: item["title"] for item in json.loads(listed.stdout)}
    assert titles[session_id] == "/audit calc.py"


def test_a_hook_block_through_the_real_sdk_and_the_fake_server(tmp_path: Path, workspace: Path) -> None:
    from wyckoff_cli.testing.fake_server import FakeServer

    command, _ = hook_command(tmp_path / "hooks", "pre", code=2, stderr="rm is not allowed here")
    write_user_hooks({"PreToolUse": [group(command, "run_shell")]})
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "run_shell", "args": {"command": "rm -rf build"}}]},
            {"text": "The hook blocked my command."},
            {"text": "a second answer nobody should pay for"},
        )
        env = dict(os.environ, OPENAI_BASE_URL=server.openai_url, OPENAI_API_KEY="fake-key")
        result = subprocess.run(
            [sys.executable, "-m", "wyckoff_cli", "run", "--model", "openai:gpt-5", "remove build/"],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert len(server.requests) == 2  # no second answer was asked for
    assert result.stdout == "The hook blocked my command.\n"
    assert "unreliable" not in result.stderr and "[retry]" not in result.stderr
    assert "rm is not allowed here" in result.stderr
