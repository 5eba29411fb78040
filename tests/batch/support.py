"""Shared pieces of the batch tests: a real git repo, task files, a scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def git(cwd: Path, *argv: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    done = subprocess.run(["git", *argv], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def make_repo(path: Path) -> Path:
    """A repository with one commit on `main` and a tag `v1`."""
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    (path / "README.md").write_text("hello\n")
    git(path, "add", "-A")
    git(path, "commit", "--quiet", "-m", "first")
    git(path, "tag", "v1")
    return path


def scripted_model(tmp_path: Path, rounds: list[dict[str, Any]], name: str = "script.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


def writes_file(tmp_path: Path, file: str = "hello.txt", content: str = "hi\n") -> str:
    """A model that writes `file` then answers."""
    return scripted_model(
        tmp_path,
        [
            {"tool_calls": [{"name": "write_file", "args": {"path": file, "content": content}}]},
            {"text": "wrote it"},
        ],
        name=f"writes-{file}.json",
    )


def task_file(path: Path, tasks: list[dict[str, Any] | str]) -> Path:
    path.write_text("".join((t if isinstance(t, str) else json.dumps(t)) + "\n" for t in tasks))
    return path


def results(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "results.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    assert len({r["id"] for r in records}) == len(records), "one line per id"
    return {r["id"]: r for r in records}


def batch_argv(tasks: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "wyckoff_cli", "batch", str(tasks), "--out", str(out), *extra]
