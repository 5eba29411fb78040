"""Hard links (issue 27): a regular file inside the workspace with more than one name
may be another name of a file outside it, so the file tools treat it as outside — it
asks, in every mode, for reading and for writing — with real hard links on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tools.conftest import run_tool
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.paths import hard_link_count
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, PermissionMode

TOOLS = {tool.name: tool for tool in default_registry()}
MODES: list[PermissionMode] = ["default", "auto-edit", "yolo"]


@pytest.fixture
def linked(root: Path, outside: Path) -> Path:
    """`link.txt` in the workspace: a second name of `elsewhere/secret.txt`."""
    link = root / "link.txt"
    os.link(outside / "secret.txt", link)
    return link


CALLS = [
    ("read_file", {"path": "link.txt"}),
    ("grep", {"pattern": "secret", "path": "link.txt"}),
    ("edit_file", {"path": "link.txt", "old": "top", "new": "no"}),
    ("write_file", {"path": "link.txt", "content": "overwritten\n"}),
    ("read_file", {"path": "./sub/../link.txt"}),
]


@pytest.mark.parametrize(("name", "args"), CALLS)
@pytest.mark.parametrize("mode", MODES)
def test_a_hard_link_asks_like_an_outside_path(
    root: Path, linked: Path, name: str, args: dict[str, str], mode: PermissionMode
) -> None:
    policy = ApprovalPolicy(mode=mode, allow=[name, "Edit(**)", "Read(**)"])
    result = policy.evaluate(TOOLS[name], args, ToolContext(workspace=root))
    assert result.action == "ask", result
    assert result.outside_paths == (linked,)
    assert "hard link" in result.reason and "2 names" in result.reason
    assert result.rule is None


def test_a_symlink_to_a_hard_link_is_caught_too(root: Path, linked: Path) -> None:
    (root / "alias.txt").symlink_to(linked)
    result = ApprovalPolicy(mode="yolo").evaluate(
        TOOLS["read_file"], {"path": "alias.txt"}, ToolContext(workspace=root)
    )
    assert result.action == "ask" and result.outside_paths == (linked,)


def test_files_with_one_name_and_folders_are_inside(root: Path) -> None:
    (root / "plain.txt").write_text("x\n")
    (root / "folder" / "deeper").mkdir(parents=True)  # a folder's link count is above one
    ctx = ToolContext(workspace=root)
    policy = ApprovalPolicy(mode="default")
    assert policy.evaluate(TOOLS["read_file"], {"path": "plain.txt"}, ctx).action == "allow"
    assert policy.evaluate(TOOLS["list_dir"], {"path": "folder"}, ctx).action == "allow"
    assert hard_link_count(root / "folder") == 0 and hard_link_count(root / "missing") == 0


async def test_the_tools_refuse_an_unapproved_hard_link(root: Path, outside: Path, linked: Path) -> None:
    ctx = ToolContext(workspace=root)
    for name, args in CALLS[:4]:
        with pytest.raises(ToolError, match="hard link"):
            await run_tool(TOOLS[name], ctx, **args)
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_an_approved_hard_link_is_used(root: Path, outside: Path, linked: Path) -> None:
    ctx = ToolContext(workspace=root, approved_outside_paths=frozenset({linked}))
    read = await run_tool(TOOLS["read_file"], ctx, path="link.txt")
    assert "top secret" in read.text
    await run_tool(TOOLS["edit_file"], ctx, path="link.txt", old="top", new="no")
    assert linked.read_text() == "no secret\n"


async def test_grep_over_the_workspace_leaves_hard_links_out(root: Path, outside: Path, linked: Path) -> None:
    (root / "own.txt").write_text("secret of my own\n")
    result = await run_tool(TOOLS["grep"], ToolContext(workspace=root), pattern="secret")
    assert "own.txt" in result.text
    assert "top secret" not in result.text and "link.txt" not in result.text
    assert "left out 1 hard-linked file" in result.text


def test_a_hard_link_made_by_cp_al_inside_the_workspace_asks_too(root: Path) -> None:
    """`cp -al` (or a pnpm store) links files that are all inside: the rule cannot tell,
    so they ask too (documented in docs/TOOLS.md)."""
    (root / "a.txt").write_text("a\n")
    os.link(root / "a.txt", root / "b.txt")
    result = ApprovalPolicy(mode="yolo").evaluate(
        TOOLS["read_file"], {"path": "b.txt"}, ToolContext(workspace=root)
    )
    assert result.action == "ask"
