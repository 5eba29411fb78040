"""The bubblewrap sandbox and the scrubbed environment, on real processes.

These skip, with the reason, only where the sandbox cannot start (not Linux, no user
namespaces); on our machines and in CI they run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.permissions.sandbox import ShellSettings, find_bwrap, probe, sandbox_status
from wyckoff_cli.tools.process import child_env, is_secret_name, removed_variables
from wyckoff_cli.tools.shell import make_shell_tools

from .conftest import run_tool

WHY_NOT = probe()
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"the sandbox cannot start here: {WHY_NOT}")


def test_the_sandbox_starts_on_linux_ci_machines() -> None:
    if sys.platform.startswith("linux") and os.environ.get("CI"):
        assert WHY_NOT is None, WHY_NOT
    assert find_bwrap() is not None or WHY_NOT is not None


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside the workspace and outside the system temp folder (which the
    sandbox leaves writable)."""
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()
    folder = Path(tempfile.mkdtemp(prefix="wyckoff-sandbox-test-", dir=base))
    yield Path(os.path.realpath(folder))
    shutil.rmtree(folder, ignore_errors=True)


def settings(tmp_path: Path, **kw: object) -> ShellSettings:
    return ShellSettings(sandbox="workspace-write", hidden=(tmp_path / "wyckoff-home",), **kw)  # type: ignore[arg-type]


async def run(ctx: ToolContext, shell: ShellSettings, command: str, **args: object) -> str:
    tool, _, _ = make_shell_tools(shell)
    outcome = await run_tool(tool, ctx, command=command, **args)
    return outcome.text


@needs_sandbox
async def test_writes_inside_succeed_and_outside_fail(
    ctx: ToolContext, tmp_path: Path, outside: Path
) -> None:
    shell = settings(tmp_path)
    text = await run(ctx, shell, "echo hi > inside.txt && cat inside.txt")
    assert "hi" in text and "[exit code 0]" in text
    assert (ctx.workspace / "inside.txt").read_text() == "hi\n"
    text = await run(ctx, shell, f"echo bad > {outside}/planted.txt")
    assert not (outside / "planted.txt").exists()
    assert "Read-only file system" in text and "[sandbox:" in text and "unsandboxed" in text


@needs_sandbox
async def test_git_hooks_and_wyckoff_folder_are_read_only(ctx: ToolContext, tmp_path: Path) -> None:
    root = ctx.workspace
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    shell = settings(tmp_path)
    text = await run(ctx, shell, "echo 'rm -rf ~' > .git/hooks/pre-commit; echo x >> .git/config; "
                     "mkdir -p .wyckoff && echo 'allow=[1]' > .wyckoff/config.toml; echo done")  # fmt: skip
    assert "done" in text
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    assert "x" not in (root / ".git" / "config").read_text().splitlines()
    assert not (root / ".wyckoff" / "config.toml").exists()
    assert not (root / ".wyckoff").exists()  # the empty mount point is removed again


@needs_sandbox
async def test_the_network_is_unreachable(ctx: ToolContext, tmp_path: Path) -> None:
    code = (
        "import socket; s=socket.socket(); s.settimeout(2); s.connect(('127.0.0.1', 9)); print('connected')"
    )
    text = await run(ctx, settings(tmp_path), f'{sys.executable} -c "{code}"')
    assert "connected" not in text
    assert "Network is unreachable" in text or "Connection refused" in text
    # ip link shows only the loopback device of the new network namespace
    text = await run(ctx, settings(tmp_path), "cat /proc/net/dev")
    assert "eth" not in text.split("[exit")[0].replace("Inter-|", "")


@needs_sandbox
async def test_the_parent_environment_and_wyckoff_folders_are_hidden(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-parent-secret-value-123456")
    home = tmp_path / "wyckoff-home"
    (home / "config").mkdir(parents=True)
    (home / "config" / "credentials.toml").write_text('anthropic = "sk-ant-stored"\n')
    text = await run(ctx, settings(tmp_path), f"cat /proc/$PPID/environ; ls {home}/config; echo pid $$")
    assert "sk-ant-parent" not in text and "ANTHROPIC_API_KEY" not in text
    assert "credentials.toml" not in text
    unsandboxed = await run(ctx, ShellSettings(), f"ls {home}/config")
    assert "credentials.toml" in unsandboxed  # what the sandbox protects against


@needs_sandbox
async def test_background_tasks_run_in_the_same_sandbox(
    ctx: ToolContext, tmp_path: Path, outside: Path
) -> None:
    tool, _, _ = make_shell_tools(settings(tmp_path))
    assert ctx.background is not None
    await run_tool(tool, ctx, command=f"echo bad > {outside}/bg.txt; echo ok > bg.txt", background=True)
    for task in ctx.background.tasks():
        await task._task  # type: ignore[misc]
    assert (ctx.workspace / "bg.txt").exists()
    assert not (outside / "bg.txt").exists()


@needs_sandbox
async def test_an_approved_unsandboxed_run_can_write_outside(
    ctx: ToolContext, tmp_path: Path, outside: Path
) -> None:
    await run(ctx, settings(tmp_path), f"echo ok > {outside}/approved.txt", unsandboxed=True)
    assert (outside / "approved.txt").read_text() == "ok\n"


@needs_sandbox
async def test_read_only_mode_writes_nothing(ctx: ToolContext, tmp_path: Path) -> None:
    shell = ShellSettings(sandbox="read-only")
    text = await run(ctx, shell, "echo x > a.txt; echo y > /tmp/scratch-$$ && echo scratch-ok")
    assert not (ctx.workspace / "a.txt").exists()
    assert "scratch-ok" in text


@needs_sandbox
async def test_a_timeout_still_stops_the_sandboxed_group(ctx: ToolContext, tmp_path: Path) -> None:
    text = await run(ctx, settings(tmp_path), "sleep 30 & sleep 30", timeout=0.5)
    assert "timed out" in text


def test_sandbox_status_says_why_it_is_off() -> None:
    mode, notice = sandbox_status("off")
    assert mode == "off" and "can read Wyckoff's config" in notice
    mode, notice = sandbox_status("workspace-write")
    if WHY_NOT is None:
        assert (mode, notice) == ("workspace-write", "")
    else:
        assert mode == "off" and WHY_NOT in notice


# ---------------------------------------------------------------- the environment

SECRETS = [
    "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "MY_SECRET_TOKEN",
    "DB_PASSWORD", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_ID",
    "NPM_AUTH_TOKEN", "some_private_key", "Stripe_Secret", "DOCKER_CREDENTIAL_HELPER",
]  # fmt: skip
KEPT = ["PATH", "HOME", "LANG", "LC_ALL", "TERM", "AWS_REGION", "AWS_PROFILE", "AWS_DEFAULT_REGION", "EDITOR"]


@pytest.mark.parametrize("name", SECRETS)
def test_secret_looking_variables_are_removed(name: str) -> None:
    assert is_secret_name(name)
    assert name not in child_env({name: "x", "PATH": "/bin"})


@pytest.mark.parametrize("name", KEPT)
def test_everyday_variables_stay(name: str) -> None:
    assert not is_secret_name(name)
    assert child_env({name: "x"})[name] == "x"


def test_env_keep_and_env_remove() -> None:
    env = {"MY_TOKEN_PATH": "a", "INTERNAL_URL": "b", "PATH": "/bin"}
    assert "MY_TOKEN_PATH" in child_env(env, keep=["MY_TOKEN_*"])
    assert "INTERNAL_URL" not in child_env(env, remove=["internal_*"])
    assert removed_variables(env) == ["MY_TOKEN_PATH"]


async def test_env_in_a_shell_call_shows_no_secret(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "MY_SECRET_TOKEN"):
        monkeypatch.setenv(name, f"value-of-{name.lower()}")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    text = await run(ctx, ShellSettings(), "env")
    assert "value-of" not in text
    assert "AWS_REGION=eu-west-1" in text


@needs_sandbox
async def test_writable_roots_are_writable(ctx: ToolContext, tmp_path: Path, outside: Path) -> None:
    shell = settings(tmp_path, writable_roots=(outside,))
    await run(ctx, shell, f"echo ok > {outside}/allowed.txt")
    assert (outside / "allowed.txt").read_text() == "ok\n"


@needs_sandbox
async def test_git_reads_in_a_worktree_but_its_repository_stays_read_only(tmp_path: Path) -> None:
    """Issue 27: the whole repository is read-only inside the sandbox (a writable index
    could register a submodule whose planted config runs on the user's `git status`);
    a commit is refused, reading works, hooks cannot be planted."""
    main_repo = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main_repo)], check=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}  # fmt: skip
    subprocess.run(
        ["git", "-C", str(main_repo), "commit", "-q", "--allow-empty", "-m", "init"], check=True, env=env
    )
    tree = tmp_path / "tree"
    subprocess.run(["git", "-C", str(main_repo), "worktree", "add", "-q", str(tree)], check=True)
    ctx = ToolContext(workspace=Path(os.path.realpath(tree)))
    text = await run(
        ctx,
        settings(tmp_path),
        "git log --oneline && echo logged; "
        "git -c user.name=t -c user.email=t@x commit -q --allow-empty -m inside && echo committed; "
        f"echo evil > {main_repo}/.git/hooks/post-commit; echo done",
    )
    assert "logged" in text and "init" in text, text
    assert "committed" not in text and "done" in text, text
    assert not (main_repo / ".git" / "hooks" / "post-commit").exists()
    log = subprocess.run(
        ["git", "-C", str(main_repo), "log", "--all", "--oneline"], capture_output=True, text=True
    )
    assert "inside" not in log.stdout
