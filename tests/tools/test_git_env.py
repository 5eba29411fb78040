"""Issue 27: git as Wyckoff runs it for itself runs nothing a repository or the
environment plants (real git, real planted programs)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from wyckoff_cli.tools.permissions.git_env import hardened_git_argv, hardened_git_env, untrusted_repository

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    folder.mkdir()
    for args in (["init", "-q"], ["config", "user.name", "t"], ["config", "user.email", "t@x"]):
        subprocess.run(["git", *args], cwd=folder, check=True)
    (folder / "a.txt").write_text("a\n")
    subprocess.run(["git", "add", "a.txt"], cwd=folder, check=True)
    subprocess.run(["git", "commit", "-qm", "one"], cwd=folder, check=True)
    (folder / "a.txt").write_text("b\n")
    return folder


def planted_program(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "planted-ran"
    program = tmp_path / "planted.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n")
    program.chmod(0o755)
    return program, marker


# (what is planted: repository config lines, environment; the git command Wyckoff runs)
PLANTS = [
    ("[core]\n\tfsmonitor = {p}\n", {}, ["status", "--porcelain"]),
    ("[core]\n\thooksPath = {hooks}\n", {}, ["checkout", "-q", "-b", "other"]),
    ("[diff]\n\texternal = {p}\n", {}, ["diff"]),
    ("", {"GIT_EXTERNAL_DIFF": "{p}"}, ["diff"]),
    ("", {"GIT_CONFIG_PARAMETERS": "'core.fsmonitor={p}'"}, ["status", "--porcelain"]),
    (
        "",
        {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor", "GIT_CONFIG_VALUE_0": "{p}"},
        ["status", "--porcelain"],
    ),  # fmt: skip
    ("[core]\n\tsshCommand = {p}\n", {}, ["ls-remote", "ssh://example.invalid/x"]),
    ("", {"GIT_SSH_COMMAND": "{p}"}, ["ls-remote", "ssh://example.invalid/x"]),
]


@pytest.mark.parametrize(("config", "env", "command"), PLANTS)
def test_planted_programs_do_not_run(
    repo: Path, tmp_path: Path, config: str, env: dict[str, str], command: list[str]
) -> None:
    program, marker = planted_program(tmp_path)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "post-index-change", "reference-transaction"):
        shutil.copy(program, hooks / hook)
    with (repo / ".git" / "config").open("a") as file:
        file.write(config.format(p=program, hooks=hooks))
    planted_env = {key: value.format(p=program) for key, value in env.items()}
    plain = subprocess.run(["git", *command], cwd=repo, env={**os.environ, **planted_env},
                           capture_output=True, check=False, timeout=30)  # fmt: skip
    assert marker.exists(), plain.stderr  # the plant is real: plain git runs it
    marker.unlink()
    env = hardened_git_env(base={**os.environ, **planted_env})
    for args in (["checkout", "-q", "-"], command):  # back to where plain git started, then again
        subprocess.run(hardened_git_argv("git", "-C", str(repo), *args), env=env, capture_output=True,
                       check=False, timeout=30, stdin=subprocess.DEVNULL)  # fmt: skip
    assert not marker.exists()


def test_the_environment_keeps_only_everyday_variables() -> None:
    base = {"PATH": "/bin", "HOME": "/h", "GIT_DIR": "/x", "GIT_ALTERNATE_OBJECT_DIRECTORIES": "/y",
            "GIT_EXEC_PATH": "/z", "ANTHROPIC_API_KEY": "k", "LD_PRELOAD": "/evil.so"}  # fmt: skip
    env = hardened_git_env(base=base)
    assert env["PATH"] == "/bin" and env["HOME"] == "/h"
    for gone in (
        "GIT_DIR",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_EXEC_PATH",
        "ANTHROPIC_API_KEY",
        "LD_PRELOAD",
    ):
        assert gone not in env
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == os.devnull
    assert env["GIT_OPTIONAL_LOCKS"] == "0" and env["GIT_TERMINAL_PROMPT"] == "0"
    assert hardened_git_env({"GIT_DIR": "/shadow"}, base=base)["GIT_DIR"] == "/shadow"


def test_git_is_not_asked_about_repositories_a_command_could_have_written(tmp_path: Path) -> None:
    workspace = Path(os.path.realpath(tmp_path)) / "ws"  # under the temp folder
    (workspace / "sub" / ".git").mkdir(parents=True)
    (workspace / ".git").mkdir()
    (workspace / "plain").mkdir()
    (tmp_path / "elsewhere" / ".git").mkdir(parents=True)
    assert untrusted_repository(workspace / "sub", workspace)  # nested
    assert untrusted_repository(tmp_path / "elsewhere", workspace)  # in the temp folder
    assert not untrusted_repository(workspace, workspace)  # its own: read-only in the sandbox
    assert not untrusted_repository(workspace / "plain", workspace)
    (workspace / ".git").rmdir()
    (tmp_path / ".git").mkdir()  # a repository around the workspace, but in the temp folder
    assert untrusted_repository(workspace, workspace)
    assert not untrusted_repository(Path("/"), workspace)  # no repository at all
