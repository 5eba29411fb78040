"""Model-facing names of MCP tools."""

from __future__ import annotations

import re

import pytest

from wyckoff_cli.tools.mcp.manager import _server_slugs
from wyckoff_cli.tools.mcp.names import always_rule, assign_names, tool_name, wider_rules

VALID = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


def test_plain_names() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"


def test_sanitised() -> None:
    for server, tool in [
        ("my.server", "get/thing"),
        ("a b", "x:y"),
        ("ünï", "çödé"),
        ("__", "__"),
        ("x", "a__b"),
    ]:
        name = tool_name(server, tool)
        assert VALID.fullmatch(name), name
        assert name.count("__") == 2, name  # the separators stay unambiguous


def test_long_names_are_cut_with_a_hash() -> None:
    a = tool_name("server", "t" * 100 + "a")
    b = tool_name("server", "t" * 100 + "b")
    assert len(a) == len(b) == 64 and a != b
    assert VALID.fullmatch(a)


def test_collisions_resolve_deterministically() -> None:
    first = assign_names("s", ["get.thing", "get_thing", "get-thing"])
    assert first == {
        "get-thing": "mcp__s__get-thing",
        "get.thing": "mcp__s__get_thing",
        "get_thing": "mcp__s__get_thing_2",
    }
    assert assign_names("s", ["get_thing", "get-thing", "get.thing"]) == first
    assert assign_names("s", ["x"], taken=["mcp__s__x"]) == {"x": "mcp__s__x_2"}


def test_server_names_that_sanitise_alike_get_distinct_prefixes() -> None:
    assert _server_slugs(["a.b", "a_b", "a b"]) == {"a.b": "a_b", "a_b": "a_b_2", "a b": "a_b_3"}


@pytest.mark.parametrize(
    ("chosen", "name", "saved"),
    [
        ("mcp__demo__add", "mcp__demo__add", "mcp__demo__add"),  # always for the tool
        ("mcp__demo__*", "mcp__demo__add", "mcp__demo__*"),  # always for the server
        ("mcp__*", "mcp__demo__add", "OFFERED"),  # every server: never offered
        ("*", "mcp__demo__add", "OFFERED"),
        ("mcp__other__*", "mcp__demo__add", "OFFERED"),  # another server
        ("mcp__demo__rm", "mcp__demo__add", "OFFERED"),  # another tool
        ("mcp__demo__add(*)", "mcp__demo__add", "OFFERED"),  # a spelling not offered
        ("run_shell", "run_shell", "OFFERED"),  # not an MCP tool: no wider choice
        ("mcp__demo__*", "run_shell", "OFFERED"),
        (None, "mcp__demo__add", "OFFERED"),  # plain "always"
    ],
)
def test_always_saves_only_a_wider_rule_offered_for_the_call(
    chosen: str | None, name: str, saved: str
) -> None:
    assert always_rule(chosen, "OFFERED", name) == saved


def test_wider_rules_of_an_mcp_tool() -> None:
    assert wider_rules("mcp__demo__add") == ("mcp__demo__add", "mcp__demo__*")
    assert wider_rules("mcp__demo") is None and wider_rules("read_file") is None
