"""A trusted `.claude/settings*.json` `permissions.additionalDirectories` (more
workspace roots for the tools and the sandbox) and `permissions.defaultMode` (the
start-up mode, Claude Code's names mapped): nothing widens before the file is trusted."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.session.subagent_support import build, make_builder
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.hook_config import load_hooks, trust_files
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.storage import managed, paths
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.permissions.sandbox import probe
from wyckoff_cli.tools.shell import make_shell_tools

from ..tools.conftest import run_tool

TOOLS = {tool.name: tool for tool in default_registry()}
WHY_NOT = probe()
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"the sandbox cannot start here: {WHY_NOT}")


@pytest.fixture
def library() -> Iterator[Path]:
    """A folder outside the workspace and outside the temp folder (which the sandbox
    leaves writable anyway), with a git folder of its own."""
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()
    folder = Path(os.path.realpath(tempfile.mkdtemp(prefix="wyckoff-extra-root-", dir=base)))
    (folder / ".git").mkdir()
    (folder / ".git" / "config").write_text("[core]\n")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def settings(root: Path, permissions: dict[str, Any], name: str = "settings.json") -> Path:
    path = root / ".claude" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": permissions}))
    return path


def builder_for(workspace: Path) -> Any:
    return make_builder(workspace, lambda model: ScriptedProvider([{"text": "ok"}]))


def test_additional_directories_widen_only_once_trusted(workspace: Path, library: Path) -> None:
    settings(workspace, {"additionalDirectories": [str(library)]})
    waiting = load_hooks(workspace).needing_trust()
    assert [f.grants for f in waiting] == [(f"read and write files in {library}",)]  # shown before trust
    policy = build(builder_for(workspace), "scripted", "auto-edit").policy
    assert policy.extra_roots == []
    ctx = ToolContext(workspace=workspace)
    args = {"path": str(library / "notes.md"), "content": "x"}
    assert policy.evaluate(TOOLS["write_file"], args, ctx).action == "ask"  # an outside path
    trust_files(waiting)
    policy = build(builder_for(workspace), "scripted", "auto-edit").policy
    assert policy.extra_roots == [library]
    ctx = ToolContext(workspace=workspace, extra_roots=tuple(policy.extra_roots))
    assert policy.evaluate(TOOLS["write_file"], args, ctx).action == "allow"
    assert policy.evaluate(TOOLS["read_file"], {"path": str(library / "notes.md")}, ctx).action == "allow"
    for protected in (".git/config", ".claude/settings.json", ".wyckoff/config.toml", ".mcp.json"):
        verdict = policy.evaluate(
            TOOLS["write_file"], {"path": str(library / protected), "content": "x"}, ctx
        )
        assert verdict.action in ("ask", "deny"), protected  # .git internals: refused
    outside = {"path": str(library.parent / "elsewhere.md"), "content": "x"}
    assert policy.evaluate(TOOLS["write_file"], outside, ctx).action == "ask"


async def test_the_file_tools_write_there(workspace: Path, library: Path) -> None:
    ctx = ToolContext(workspace=workspace, extra_roots=(library,))
    await run_tool(TOOLS["write_file"], ctx, path=str(library / "new.md"), content="hello\n")
    assert (library / "new.md").read_text() == "hello\n"
    outcome = await run_tool(TOOLS["read_file"], ctx, path=str(library / "new.md"))
    assert "hello" in outcome.text


def test_relative_entries_and_missing_folders(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    settings(workspace, {"additionalDirectories": ["../shared", "../nowhere"]})
    trust_files(load_hooks(workspace).needing_trust())
    found = load_hooks(workspace)
    assert any("additionalDirectories: ../nowhere is not a folder; skipped" in p for p in found.problems)
    assert builder_for(workspace).extra_roots() == (Path(os.path.realpath(tmp_path / "shared")),)


@needs_sandbox
async def test_the_sandbox_leaves_them_writable_and_their_git_read_only(
    workspace: Path, library: Path
) -> None:
    settings(workspace, {"additionalDirectories": [str(library)]})
    builder = builder_for(workspace)
    assert builder.shell().extra_workspaces == ()
    trust_files(load_hooks(workspace).needing_trust())
    builder = builder_for(workspace)
    shell = builder.shell()
    assert shell.extra_workspaces == (library,)
    tool, _, _ = make_shell_tools(shell)
    ctx = ToolContext(workspace=workspace, extra_roots=(library,))
    outcome = await run_tool(
        tool, ctx, command=f"echo made > {library}/made.txt; echo bad >> {library}/.git/config; "
        f"mkdir {library}/.claude; echo done",
    )  # fmt: skip
    assert "done" in outcome.text
    assert (library / "made.txt").read_text() == "made\n"
    assert (library / ".git" / "config").read_text() == "[core]\n"
    assert not (library / ".claude").exists()


@pytest.mark.parametrize(
    ("claude", "wyckoff"),
    [("acceptEdits", "auto-edit"), ("plan", "plan"), ("bypassPermissions", "yolo"), ("dontAsk", "default")],
)
def test_default_mode_starts_the_session_once_trusted(workspace: Path, claude: str, wyckoff: str) -> None:
    settings(workspace, {"defaultMode": claude}, "settings.local.json")
    assert ChatController(builder_for(workspace), model="scripted").mode == "default"
    (file,) = load_hooks(workspace).needing_trust()
    assert file.grants == (f"start in {wyckoff} mode",)
    trust_files([file])
    assert ChatController(builder_for(workspace), model="scripted").mode == wyckoff
    assert ChatController(builder_for(workspace), model="scripted", mode="plan").mode == "plan"  # --mode wins


def test_wyckoffs_own_permission_mode_wins(workspace: Path) -> None:
    settings(workspace, {"defaultMode": "acceptEdits"})
    trust_files(load_hooks(workspace).needing_trust())
    paths.config_file().parent.mkdir(parents=True, exist_ok=True)
    paths.config_file().write_text('permission_mode = "plan"\n')
    assert ChatController(builder_for(workspace), model="scripted").mode == "plan"


def test_a_managed_policy_still_disables_bypass_permissions(workspace: Path) -> None:
    settings(workspace, {"defaultMode": "bypassPermissions"})
    trust_files(load_hooks(workspace).needing_trust())
    managed.MANAGED_PATH.parent.mkdir(parents=True, exist_ok=True)
    managed.MANAGED_PATH.write_text("disable_yolo = true\n")
    controller = ChatController(builder_for(workspace), model="scripted")
    assert controller.mode == "default" and str(managed.MANAGED_PATH) in controller.mode_notice
