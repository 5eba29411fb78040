"""Issue 27: sandbox auto-allow. A command that stays inside the sandbox runs without
asking (`[shell] auto_allow = true` in default and auto-edit mode, or the `auto` mode);
everything that could leave it still asks: network, unsandboxed, outside paths,
deny rules, the destructive list, escalations, commands the parser cannot follow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.session.shell import sandbox_auto_allow
from wyckoff_cli.session.status import StatusModel
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, PermissionMode
from wyckoff_cli.tools.permissions.sandbox import ShellSettings, probe
from wyckoff_cli.tools.shell import make_shell_tools

pytestmark = pytest.mark.skipif(probe() is not None, reason=f"the sandbox cannot start here: {probe()}")


def shell_tool(**settings: Any) -> Tool:
    tool, _, _ = make_shell_tools(ShellSettings(**{"sandbox": "workspace-write", **settings}))
    return tool


AUTO_ALLOW = shell_tool(auto_allow=True)
SANDBOX_ONLY = shell_tool()


def decide(root: Path, tool: Tool, mode: PermissionMode, args: dict[str, Any], **policy: Any) -> str:
    verdict = ApprovalPolicy(mode=mode, worktree_dirty=lambda _p: True, **policy).evaluate(
        tool, args, ToolContext(workspace=root)
    )
    return verdict.action


# (the call, what sandbox auto-allow decides for it)
TABLE: list[tuple[dict[str, Any], str]] = [
    ({"command": "python3 -m pytest -q"}, "allow"),
    ({"command": "make test && ruff check ."}, "allow"),
    ({"command": "ls -la | grep x > found.txt"}, "allow"),
    ({"command": "npm test", "background": True}, "allow"),
    ({"command": "curl https://example.com", "network": True}, "ask"),
    ({"command": "pip install x", "network": True}, "ask"),
    ({"command": "make", "unsandboxed": True}, "ask"),
    ({"command": "echo x > /etc/profile.d/x.sh"}, "ask"),
    ({"command": "echo x >> ~/.bashrc"}, "ask"),
    ({"command": "rm -rf ~"}, "ask"),
    ({"command": "bash -c 'rm -rf /'"}, "ask"),
    ({"command": "git reset --hard"}, "ask"),
    ({"command": "git clean -fdx"}, "ask"),  # deletes ignored files: the destructive list
    ({"command": "sudo make install"}, "ask"),
    ({"command": "$(echo rm) -rf x"}, "ask"),
    ({"command": "$CMD"}, "ask"),
    ({"command": "echo '{}' > .mcp.json"}, "ask"),
    ({"command": "echo x > .wyckoff/config.toml"}, "ask"),
    ({"command": "git config core.fsmonitor ./x"}, "ask"),
    ({"command": "ls", "cwd": "/"}, "ask"),
]


@pytest.mark.parametrize(("args", "expected"), TABLE)
@pytest.mark.parametrize(("tool", "mode"), [(AUTO_ALLOW, "default"), (AUTO_ALLOW, "auto-edit"),
                                             (SANDBOX_ONLY, "auto")])  # fmt: skip
def test_what_sandbox_auto_allow_runs_without_asking(
    root: Path, tool: Tool, mode: PermissionMode, args: dict[str, Any], expected: str
) -> None:
    assert decide(root, tool, mode, args) == expected


@pytest.mark.parametrize(("args", "_"), TABLE)
def test_without_auto_allow_default_mode_still_asks(root: Path, args: dict[str, Any], _: str) -> None:
    assert decide(root, SANDBOX_ONLY, "default", args) == "ask"
    assert decide(root, SANDBOX_ONLY, "auto-edit", args) == "ask"


@pytest.mark.parametrize(
    "tool",
    [shell_tool(sandbox="off", auto_allow=True), shell_tool(auto_allow=True, network=True)],
    ids=["sandbox off", "sandbox with the network"],
)
@pytest.mark.parametrize("mode", ["default", "auto"])
def test_auto_allow_needs_a_sandbox_without_the_network(root: Path, tool: Tool, mode: PermissionMode) -> None:
    assert decide(root, tool, mode, {"command": "python3 -m pytest -q"}) == "ask"


def test_deny_rules_and_plan_mode_still_refuse(root: Path) -> None:
    args = {"command": "python3 -m pytest -q"}
    assert decide(root, AUTO_ALLOW, "default", args, deny=["run_shell(python3*)"]) == "deny"
    assert decide(root, SANDBOX_ONLY, "auto", args, deny=["run_shell(python3*)"]) == "deny"
    assert decide(root, AUTO_ALLOW, "plan", args) == "deny"


def test_an_editors_terminal_is_no_sandbox(root: Path) -> None:
    class Terminal:
        async def run(self, *args: Any) -> Any: ...

    context = ToolContext(workspace=root, host_terminal=Terminal())  # type: ignore[arg-type]
    verdict = ApprovalPolicy(mode="auto").evaluate(AUTO_ALLOW, {"command": "python3 -m pytest"}, context)
    assert verdict.action == "ask"


def test_the_status_bar_and_permissions_say_when_it_is_on() -> None:
    on = ShellSettings(sandbox="workspace-write", auto_allow=True)
    assert sandbox_auto_allow(on, "default") == "sandbox auto-allow"
    assert sandbox_auto_allow(ShellSettings(sandbox="workspace-write"), "auto") == "sandbox auto-allow"
    assert sandbox_auto_allow(ShellSettings(sandbox="workspace-write"), "default") == ""
    assert sandbox_auto_allow(on, "yolo") == "" and sandbox_auto_allow(on, "plan") == ""
    assert sandbox_auto_allow(ShellSettings(sandbox="off"), "auto") == "sandbox off: commands ask"
    status = StatusModel(model="m", mode="default", auto_allow=sandbox_auto_allow(on, "default"))
    assert ("mode", "default · sandbox auto-allow") in status.segments()
