"""Every example in docs/SDK.md runs, against the fake server playing the answers
written in the comment above it (issue 32, part 1)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from wyckoff_cli.testing.fake_server import FakeServer

DOC = Path(__file__).resolve().parents[2] / "docs" / "SDK.md"
EXAMPLE = re.compile(r"<!-- fake-server: (?P<answers>.*?) -->\n```python\n(?P<code>.*?)```", re.DOTALL)


def examples() -> list[tuple[str, str]]:
    found = [(m["answers"], m["code"]) for m in EXAMPLE.finditer(DOC.read_text(encoding="utf-8"))]
    assert len(found) == DOC.read_text(encoding="utf-8").count("```python"), "every example has its answers"
    return found


@pytest.mark.parametrize(("answers", "code"), examples(), ids=lambda v: v.split("\n")[0][:40])
def test_the_example_runs(
    answers: str,
    code: str,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (workspace / "app.py").write_text("print('hi')\n")
    if "worktree=" in code:  # the worktree example runs in a repository
        git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=T"]
        subprocess.run([*git, "init", "-q", "-b", "main"], cwd=workspace, check=True)
        subprocess.run([*git, "add", "app.py"], cwd=workspace, check=True)
        subprocess.run([*git, "commit", "-q", "-m", "start"], cwd=workspace, check=True)
    monkeypatch.chdir(workspace)
    with FakeServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        scripted = json.loads(answers)
        server.script(*scripted)
        exec(compile(code, str(DOC), "exec"), {"__name__": "__sdk_example__"})
        assert server.pending == 0, "the example made every request its answers are for"
    out = capsys.readouterr().out
    assert "Traceback" not in out
    if "worktree=" in code:
        assert "wyckoff/notes ['notes.txt'] True" in out and not (workspace / "notes.txt").exists()
        assert (workspace / ".wyckoff" / "worktrees" / "notes" / "notes.txt").read_text() == "hi\n"
    elif "files_changed" in code:
        assert "['notes.txt']" in out and (workspace / "notes.txt").read_text() == "hi\n"
    if "TextDelta" in code:
        assert "Hello there.\n[completed]" in out
