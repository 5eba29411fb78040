"""MCP tools under the approval policy: asks by default, read-only hints, modes, and
rules `mcp__SERVER__TOOL`, `mcp__SERVER__*` and `mcp__SERVER__TOOL(PATTERN)`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.types import Tool as McpTool
from mcp.types import ToolAnnotations

from tests.tools.mcp.conftest import stdio_spec
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.mcp.client import ServerConnection
from wyckoff_cli.tools.mcp.proxy import proxy_tool
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy
from wyckoff_cli.tools.permissions.rules import RuleError, parse_rule, suggest_rule


def make(name: str, server: str = "github", read_only: bool | None = None) -> Tool:
    connection = ServerConnection(stdio_spec(server), root=Path("/w"), env={})
    annotations = ToolAnnotations(read_only_hint=read_only) if read_only is not None else None
    mcp_tool = McpTool(name=name, description="d", input_schema={"type": "object"}, annotations=annotations)
    return proxy_tool(connection, mcp_tool, f"mcp__{server}__{name}")


CREATE = make("create_issue")
DELETE = make("delete_repo")
SEARCH = make("search", read_only=True)
OTHER = make("create_issue", server="gitlab")
CTX = ToolContext(workspace=Path("/w"))


def verdict(
    tool: Tool,
    args: dict[str, Any],
    mode: str = "default",
    allow: tuple[str, ...] = (),
    deny: tuple[str, ...] = (),
) -> str:
    policy = ApprovalPolicy(mode=mode, allow=list(allow), deny=list(deny))  # type: ignore[arg-type]
    return policy.evaluate(tool, args, CTX).action


def test_defaults_per_mode() -> None:
    assert [verdict(CREATE, {}, m) for m in ("default", "plan", "auto-edit", "yolo")] == [
        "ask",
        "deny",
        "ask",
        "allow",
    ]
    assert [verdict(SEARCH, {}, m) for m in ("default", "plan", "auto-edit", "yolo")] == ["allow"] * 4
    hint_false = make("x", read_only=False)
    assert verdict(hint_false, {}, "plan") == "deny"


def test_plan_mode_tells_the_model_why() -> None:
    result = ApprovalPolicy(mode="plan").evaluate(CREATE, {}, CTX)
    assert "plan mode" in result.reason and "calling MCP tools" in result.reason


ARGS = {"repo": "wyckoff", "title": "Bug"}


@pytest.mark.parametrize(
    ("rules", "tool", "args", "expected"),
    [
        # the tool by name
        ((), CREATE, ARGS, "ask"),
        (("mcp__github__create_issue",), CREATE, ARGS, "allow"),
        (("mcp__github__create_issue",), DELETE, ARGS, "ask"),
        (("mcp__github__create_issue",), OTHER, ARGS, "ask"),  # same tool name, other server
        # every tool of a server
        (("mcp__github__*",), CREATE, ARGS, "allow"),
        (("mcp__github__*",), DELETE, ARGS, "allow"),
        (("mcp__github__*",), OTHER, ARGS, "ask"),
        # the arguments as compact JSON, keys sorted
        (('mcp__github__create_issue({"repo":"wyckoff","title":"Bug"})',), CREATE, ARGS, "allow"),
        (('mcp__github__create_issue({"repo":"wyckoff"*)',), CREATE, ARGS, "allow"),
        (('mcp__github__create_issue({"repo":"wyckoff"*)',), CREATE, {"repo": "wyckoff-evil"}, "ask"),
        (
            ('mcp__github__create_issue({"repo":"wyckoff"*)',),
            CREATE,
            {"repo": "other", "x": '"repo":"wyckoff"'},
            "ask",
        ),
        (('mcp__github__create_issue(*"repo":"wyckoff"*)',), CREATE, {"a": 1, "repo": "wyckoff"}, "allow"),
        (('mcp__github__create_issue({"repo":"wyckoff"})',), CREATE, {"repo": "wyckoff", "more": 1}, "ask"),
        (('mcp__github__create_issue({"repo": "wyckoff"*)',), CREATE, ARGS, "ask"),  # compact: no spaces
        (("mcp__github__*(*wyckoff*)",), DELETE, ARGS, "allow"),
        (("mcp__github__*(*wyckoff*)",), DELETE, {"repo": "other"}, "ask"),
    ],
)
def test_allow_rules(rules: tuple[str, ...], tool: Tool, args: dict[str, Any], expected: str) -> None:
    assert verdict(tool, args, allow=rules) == expected


@pytest.mark.parametrize(
    ("deny", "tool", "args", "mode"),
    [
        (("mcp__github__delete_repo",), DELETE, ARGS, "yolo"),
        (("mcp__github__*",), DELETE, ARGS, "yolo"),
        (("mcp__github__*",), SEARCH, {}, "default"),  # read-only tools too
        (("mcp__github__create_issue(*wyckoff*)",), CREATE, ARGS, "yolo"),
        (("mcp__*",), CREATE, ARGS, "yolo"),
    ],
)
def test_deny_wins_over_allow_and_modes(
    deny: tuple[str, ...], tool: Tool, args: dict[str, Any], mode: str
) -> None:
    assert verdict(tool, args, mode, allow=("mcp__github__*", tool.name), deny=deny) == "deny"


@pytest.mark.parametrize(
    "rule", ["*", "run_*", "*shell", "mcp__*__x", "read_file*", "mcp__git*", "mcp__github_*", "mcp*", "mcp_*"]
)
def test_wildcards_outside_mcp_names_are_refused(rule: str) -> None:
    with pytest.raises(RuleError):
        parse_rule(rule)


def test_always_saves_exactly_these_arguments() -> None:
    rule = 'mcp__github__create_issue({"repo":"wyckoff","title":"Bug"})'
    assert suggest_rule(CREATE, CREATE.subject(ARGS, Path("/w"))) == rule
    assert ApprovalPolicy().evaluate(CREATE, ARGS, CTX).rule == rule
    assert verdict(CREATE, ARGS, allow=(rule,)) == "allow"
    assert verdict(CREATE, {**ARGS, "title": "Other"}, allow=(rule,)) == "ask"
    arrays = ApprovalPolicy().evaluate(CREATE, {"labels": ["a", "b"]}, CTX).rule
    assert arrays is not None and verdict(CREATE, {"labels": ["a", "b"]}, allow=(arrays,)) == "allow"


def test_an_mcp_tool_with_a_command_argument_is_not_a_shell_command() -> None:
    args = {"command": "rm -rf /"}
    assert verdict(CREATE, args, allow=('mcp__github__create_issue({"command":"rm -rf /"})',)) == "allow"
    assert verdict(CREATE, args, allow=("mcp__github__create_issue(rm)",)) == "ask"
