"""Which starting MCP servers a message waits for (issue 36): the ones it needs."""

from __future__ import annotations

import pytest

from wyckoff_cli.session.turn_start import needed_servers, not_waiting_text

STARTING = ["github", "docs-search", "slow"]


@pytest.mark.parametrize(
    ("text", "required", "needed"),
    [
        ("fix the failing test", (), []),
        ("open an issue on github", (), ["github"]),
        ("Ask GitHub for the PR list", (), ["github"]),  # any case
        ("(github) please", (), ["github"]),
        ("look at @github:repo://acme/widgets", (), ["github"]),  # a resource mention
        ("call mcp__github__search_issues", (), ["github"]),  # a tool name
        ("use MCP__GITHUB__search", (), ["github"]),
        ("githubby is not a server", (), []),  # a longer word
        ("my-github-fork is a repo", (), []),  # part of a hyphenated name
        ("search with docs-search", (), ["docs-search"]),
        ("docs and search", (), []),
        ("the slow path and github", (), ["github", "slow"]),  # every named server
        ("no names here", ("mcp__slow__run",), ["slow"]),  # a command's required tool
        ("no names here", ("read_file",), []),
    ],
)
def test_a_message_needs_the_servers_it_names(
    text: str, required: tuple[str, ...], needed: list[str]
) -> None:
    assert needed_servers(STARTING, text, required) == needed


def test_nothing_starting_nothing_needed() -> None:
    assert needed_servers([], "github slow", ("mcp__github__x",)) == []


def test_the_notice_names_the_servers_not_waited_for() -> None:
    assert not_waiting_text(["slow"]).startswith(
        "MCP server slow still starting: this message is sent without its tools"
    )
    assert not_waiting_text(["a", "b"]).startswith(
        "MCP servers a, b still starting: this message is sent without their tools"
    )
