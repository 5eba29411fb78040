"""Real temporary git repositories for the checkpoint tests."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
from wyckoff_cli.storage.config import CheckpointsConfig

GIT_ENV = {
    "GIT_AUTHOR_NAME": "user",
    "GIT_AUTHOR_EMAIL": "user@example.invalid",
    "GIT_COMMITTER_NAME": "user",
    "GIT_COMMITTER_EMAIL": "user@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def dot_git_state(repo: Path) -> dict[str, str]:
    """Every file under the user's .git, by path, as a sha256 of its bytes."""
    state: dict[str, str] = {}
    for path in sorted((repo / ".git").rglob("*")):
        if path.is_file():
            state[path.relative_to(repo).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with a commit, a stash entry, a second branch, an ignored
    file and staged work in the index."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 1\n")
    (root / "README.md").write_text("# Project\n")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    git(root, "branch", "feature")
    (root / "README.md").write_text("# Project\n\nstashed change\n")
    git(root, "stash", "-q")
    (root / "notes.txt").write_text("staged\n")
    git(root, "add", "notes.txt")
    (root / "debug.log").write_text("ignored log\n")
    return root


@pytest.fixture(params=["git", "dulwich"])
def backend(request: pytest.FixtureRequest) -> str:
    """Every engine test runs on both shadow-repository backends."""
    return str(request.param)


@pytest.fixture
def engine(repo: Path, backend: str) -> CheckpointEngine:
    return CheckpointEngine(repo, CheckpointsConfig(max_file_size=1024), backend=backend)
