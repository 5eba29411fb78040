"""Headless `wyckoff run` expands what the app expands: `@SERVER:URI` attaches the
server's resource and `/mcp__SERVER__PROMPT ARGS` sends the server's prompt, against
the real demo MCP server; an unknown prompt is a clear error and nothing is sent."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import DEMO
from wyckoff_cli.cli.main import main

pytestmark = pytest.mark.timeout(120)


def script(tmp_path: Path, rounds: list[Any]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


def sent_user_message(out: str) -> str:
    """The user message the run committed (the first `message` event), as JSON text."""
    events = [json.loads(line) for line in out.splitlines()]
    first = next(e for e in events if e["type"] == "message")
    return json.dumps(first["message"])


@pytest.fixture
def demo_server(workspace: Path) -> None:
    command = ["mcp", "add", "--scope", "user", "demo", "--", sys.executable, str(DEMO), "stdio"]
    assert main(command) == 0


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("summarise @demo:demo://readme", "This is the demo resource."),
        ("/mcp__demo__review app.py style", "Please review app.py, looking for style."),
    ],
)
def test_resources_and_prompts_are_expanded_headless(
    demo_server: None,
    tmp_path: Path,
    workspace: Path,
    capsys: pytest.CaptureFixture[str],
    prompt: str,
    expected: str,
) -> None:
    capsys.readouterr()
    model = script(tmp_path, [{"text": "ok"}])
    args = ["run", "-m", model, "--cwd", str(workspace), "--output-format", "stream-json", prompt]
    assert main(args) == 0
    assert expected in sent_user_message(capsys.readouterr().out)


def test_an_unknown_mcp_prompt_is_a_clear_error(
    demo_server: None, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    model = script(tmp_path, [{"text": "never sent"}])
    code = main(["run", "-m", model, "--cwd", str(workspace), "/mcp__demo__nothing here"])
    captured = capsys.readouterr()
    assert code != 0
    assert "no MCP prompt /mcp__demo__nothing" in captured.err + captured.out
    assert "never sent" not in captured.out


def test_an_mcp_prompt_is_saved_as_typed(
    demo_server: None, tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The transcript (and a resumed one) shows `/mcp__demo__review ...`, as the app does."""
    from wyckoff_cli.core.shown import COMMAND

    capsys.readouterr()
    model = script(tmp_path, [{"text": "ok"}])
    typed = "/mcp__demo__review app.py style"
    assert main(["run", "-m", model, "--cwd", str(workspace), "--output-format", "stream-json", typed]) == 0
    first = next(e for e in map(json.loads, capsys.readouterr().out.splitlines()) if e["type"] == "message")
    assert first["message"]["meta"][COMMAND] == typed
    assert "Please review app.py, looking for style." in json.dumps(first["message"]["parts"])
