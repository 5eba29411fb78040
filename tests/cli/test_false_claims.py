"""The refused-edit false claim, headless: `wyckoff run` in the default permission mode
(no one to approve), with the scripted provider through main() and with the real
OpenAI SDK against the loopback fake server in a subprocess. Exit codes are the point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.testing.fake_server import FakeServer

EDIT = {"name": "edit_file", "args": {"path": "calc.py", "old": "a - b", "new": "a + b"}}
SHELL = {"name": "run_shell", "args": {"command": "python -m pytest -q"}}


@pytest.fixture
def calc(workspace: Path) -> Path:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return workspace


def scripted(tmp_path: Path, rounds: list[Any]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


@pytest.mark.parametrize(
    ("answers", "code", "reason"),
    [
        (["Fixed: add() now adds.", "Fixed: add() now adds."], 1, "unreliable"),
        (["Fixed: add() now adds.", "I could not edit calc.py: it needs approval."], 0, "completed"),
        (["I couldn't change calc.py: the edit was refused. Apply a + b yourself."], 0, "completed"),
    ],
)
def test_scripted_refused_edit(
    tmp_path: Path, calc: Path, capsys: pytest.CaptureFixture[str], answers: list[str], code: int, reason: str
) -> None:
    rounds: list[Any] = [{"tool_calls": [EDIT]}, {"tool_calls": [SHELL]}, *({"text": a} for a in answers)]
    model = scripted(tmp_path, rounds)
    result = main(["run", "-m", model, "--cwd", str(calc), "--output-format", "json", "fix add()"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert (result, data["reason"]) == (code, reason)
    assert data["summary"]["tool_calls"] == {"ok": 0, "refused": 2, "failed": 0}
    assert data["summary"]["files_changed"] == []
    assert "[summary] 4 rounds" in captured.err or "[summary] 3 rounds" in captured.err
    assert (calc / "calc.py").read_text().endswith("a - b\n")  # nothing was changed


def test_the_summary_counts_a_real_edit(
    tmp_path: Path, calc: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = scripted(tmp_path, [{"tool_calls": [EDIT]}, {"text": "Fixed: add() now adds."}])
    code = main(["run", "-m", model, "--cwd", str(calc), "--permission-mode", "auto-edit", "fix add()"])
    err = capsys.readouterr().err
    assert code == 0
    assert "[summary] 2 rounds · tool calls: 1 ok, 0 refused, 0 failed · 1 file changed" in err
    assert (calc / "calc.py").read_text().endswith("a + b\n")


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("last", "code"),
    [("Fixed: add() now adds.", 1), ("I could not edit calc.py: the edit was refused.", 0)],
)
def test_fake_server_refused_edit(calc: Path, last: str, code: int) -> None:
    with FakeServer() as server:
        server.script(
            {"tool_calls": [EDIT]},
            {"text": "Done — updated calc.py."},
            {"text": last},
        )
        env = dict(os.environ)
        env["OPENAI_BASE_URL"] = server.openai_url
        env["OPENAI_API_KEY"] = "fake-key"
        result = _run(["--model", "openai:gpt-5", "--output-format", "json", "fix add()"], calc, env)
        assert result.returncode == code, result.stderr
        data = json.loads(result.stdout.strip().splitlines()[-1])
        assert data["summary"]["tool_calls"]["refused"] == 1
        assert len(server.requests) == 3
        retry = server.requests[2].body["messages"][-1]
        assert retry["role"] == "user" and "truthfully" in retry["content"]
        assert "[summary] 3 rounds · tool calls: 0 ok, 1 refused, 0 failed · 0 files changed" in result.stderr
        warnings = [e["message"] for e in data["events"] if e["type"] == "notice"]
        assert data["reason"] == ("unreliable" if code else "completed")
        assert any("unreliable" in w for w in warnings) == bool(code)
