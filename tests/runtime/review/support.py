"""Real git repositories with a planted bug, and fake-server answers for reviewers and checkers."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.testing.fake_server import FakeServer

MODEL = "anthropic:claude-sonnet-4-5"

CALC_BEFORE = "def average(xs):\n    return sum(xs) / len(xs)\n"
CALC_AFTER = (
    "def average(xs):\n"
    "    total = sum(xs)\n"
    "    return total / (len(xs) - 1)\n"
    "\n"
    "\n"
    "def label(x):\n"
    "    return f'value {x}'\n"
)


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    done = subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def make_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    for name, text in (files or {"calc.py": CALC_BEFORE, "README.md": "# demo\n"}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def plant_bug(root: Path, commit: bool = False) -> None:
    (root / "calc.py").write_text(CALC_AFTER)
    if commit:
        git(root, "checkout", "-q", "-b", "feature")
        git(root, "commit", "-q", "-am", "average: off by one")


def configure(server: FakeServer, monkeypatch: pytest.MonkeyPatch, root: Path, extra: str = "") -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-anthropic")
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-openai")
    (root / ".wyckoff").mkdir(exist_ok=True)
    (root / ".wyckoff" / "config.toml").write_text(f'model = "{MODEL}"\n{extra}')


def finding(**overrides: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "file": "calc.py",
        "start_line": 3,
        "end_line": 3,
        "severity": "high",
        "title": "average divides by len - 1",
        "explanation": "average([2, 4]) returns 6 instead of 3, and a list of one divides by zero.",
        "suggested_patch": "--- a/calc.py\n+++ b/calc.py\n@@ -3 +3 @@\n-    return total / (len(xs) - 1)\n+    return total / len(xs)\n",
    }
    args.update(overrides)
    return args


def reviewer(marker: str, *findings: dict[str, Any]) -> list[dict[str, Any]]:
    """A reviewer's answers (taken by requests whose body holds `marker`): its reports, then its end."""
    calls = [{"name": "report_finding", "args": f} for f in findings]
    rounds: list[dict[str, Any]] = [{"when": marker, "tool_calls": calls}] if calls else []
    return [*rounds, {"when": marker, "text": f"Reported {len(findings)} findings.", "usage": USAGE}]


def checker(title: str, confirm: bool, reason: str = "the code shows it") -> list[dict[str, Any]]:
    """A checker of the finding titled `title`: it reads the file, then confirms or rejects it."""
    verdict = "confirm_finding" if confirm else "reject_finding"
    marker = [CHECKER_MARK, title]
    return [
        {
            "when": marker,
            "tool_calls": [{"name": "changed_file", "args": {"path": "calc.py"}}],
            "usage": USAGE,
        },
        {"when": marker, "tool_calls": [{"name": verdict, "args": {"reason": reason}}], "usage": USAGE},
    ]


USAGE = {"input_tokens": 1000, "output_tokens": 50}
REVIEWER_MARK = "Review the "  # only a reviewer's task says this
CHECKER_MARK = "reported this finding"  # only a checker's task says this


def planted_bug_answers(confirm: bool = True) -> list[dict[str, Any]]:
    return [*reviewer(REVIEWER_MARK, finding()), *checker(finding()["title"], confirm)]
