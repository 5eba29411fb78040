"""Published Claude Code agent files load unchanged: the shapes anthropics' marketplace
ships (tests/runtime/published_agents.py), the YAML forms of Claude Code's agent format,
and the files Claude Code also rejects, each with its line."""

from __future__ import annotations

import pytest

from tests.runtime.published_agents import (
    AGENT_SDK_SHAPE,
    CODE_SIMPLIFIER_SHAPE,
    FEATURE_DEV_SHAPE,
    HOOKIFY_SHAPE,
    PLUGIN_DEV_SHAPE,
    PR_TOOLKIT_ONE_LINE,
)
from wyckoff_cli.runtime.agent_files import FrontMatterError, parse_agent


def test_plugin_dev_run_on_examples_are_the_description() -> None:
    agent = parse_agent(PLUGIN_DEV_SHAPE, "agent-creator.md")
    assert agent.name == "config-checker"
    assert agent.description.startswith('Use this agent when the user asks to "check my config"')
    assert "Examples: <example> Context: User changed a settings file" in agent.description
    assert agent.description.endswith('assistant: "I\'ll use the config-checker agent." </example>')
    assert "model:" not in agent.description and "color" not in agent.description
    assert (agent.tools, agent.model) == (("write_file", "read_file"), "inherit")
    assert agent.prompt.startswith("You check configuration files") and "**Steps**" in agent.prompt


def test_code_simplifier_opens_an_example_and_runs_on() -> None:
    agent = parse_agent(CODE_SIMPLIFIER_SHAPE, "code-simplifier.md")
    assert agent.name == "tidy-upper" and agent.model == "inherit"  # opus: the parent's model
    assert "<function call omitted for brevity>" in agent.description
    assert agent.description.endswith('"Now let me use the tidy-upper agent" </example>')
    assert agent.tools is None


@pytest.mark.parametrize(
    ("text", "name", "tools", "words"),
    [
        (PR_TOOLKIT_ONE_LINE, "test-gap-finder", None, 'Context: A PR adds a parser.\\nuser: "Are my tests'),
        (HOOKIFY_SHAPE, "transcript-reader", ("read_file", "grep"), "<example>Context: User ran the command"),
        (
            FEATURE_DEV_SHAPE,
            "path-tracer",
            (
                "glob",
                "grep",
                "list_dir",
                "read_file",
                "NotebookRead",
                "web_fetch",
                "todo_write",
                "web_search",
                "task_stop",
                "task_output",
            ),
            "Traces how a feature runs",
        ),  # fmt: skip
        (AGENT_SDK_SHAPE, "sdk-checker", None, "Invoke it after the app is created or changed."),
    ],
)
def test_the_other_published_shapes(text: str, name: str, tools: tuple[str, ...] | None, words: str) -> None:
    agent = parse_agent(text, f"{name}.md")
    assert (agent.name, agent.tools) == (name, tools)
    assert words in agent.description and agent.model == "inherit"


def front(lines: str) -> str:
    return f"---\nname: x\n{lines}\n---\nYou help.\n"


@pytest.mark.parametrize(
    ("lines", "description"),
    [
        ("description: |\n  First line.\n  Second: line.\n\n  After a blank.", "First line. Second: line. After a blank."),
        ("description: >\n  Folded\n  text.", "Folded text."),
        ("description: >-\n    Four spaces\n    in.\n", "Four spaces in."),
        ("description: |+\n  Kept.\n", "Kept."),
        ("description: |2\n   one more space\n  two", "one more space two"),
        ("description:\n  Expert review, as Prettier\n  breaks it.", "Expert review, as Prettier breaks it."),
        ("description: A plain value\n  continued on\n  indented lines.", "A plain value continued on indented lines."),
        ('description: "Quoted: over\n  two lines"', "Quoted: over two lines"),
        ('description: "Escapes: \\"q\\", \\u00e9, tab\\tend"', 'Escapes: "q", é, tab end'),
        ("description: 'It''s single: quoted'", "It's single: quoted"),
        ("description: Holds: a colon and a#hash", "Holds: a colon and a#hash"),
        ("description: Ends with a comment # gone", "Ends with a comment"),
        ("description: Use it. Examples:\n<example>\nuser: hi\n</example>\ncolor: red", "Use it. Examples: <example> user: hi </example>"),
    ],
)  # fmt: skip
def test_yaml_forms_of_the_description(lines: str, description: str) -> None:
    assert parse_agent(front(lines), "a.md").description == description


@pytest.mark.parametrize(
    ("lines", "tools"),
    [
        ("tools: Read, Grep, Glob", ("read_file", "grep", "glob")),
        ("tools: [\"Read\", 'Grep']", ("read_file", "grep")),
        ("tools: [\n  Read,\n  Bash(git diff:*)\n  ]", ("read_file", "run_shell(git diff:*)")),
        ('tools:\n  - Read\n  - "WebFetch"', ("read_file", "web_fetch")),
        ("tools:\n- Read\n- Edit", ("read_file", "edit_file")),
    ],
)
def test_tools_as_a_string_or_a_list(lines: str, tools: tuple[str, ...]) -> None:
    assert parse_agent(front(f"description: d\n{lines}"), "a.md").tools == tools


def test_claude_code_keys_are_read_or_ignored() -> None:
    agent = parse_agent(
        front(
            "description: d\nmodel: haiku\ncolor: pink\nmaxTurns: 12\npermissionMode: acceptEdits\n"
            "disallowedTools: Write\neffort: high\nmemory: project\nbackground: false\n"
            "hooks:\n  PreToolUse:\n    - matcher: Bash\nmcpServers:\n  - github\nskills: [a, b]"
        ),
        "a.md",
    )
    assert (agent.model, agent.max_rounds, agent.permission_mode) == ("inherit", 12, "auto-edit")


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        # Claude Code rejects these too (its YAML parse fails and the agent does not load).
        ("description: y\nContext: not a key of agent files", 4, "unknown key `Context`"),
        ("description: y\n<example>", 4, "expected `key: value`"),
        ('description: "never closed\ncolor: red', 3, "double-quoted string is not closed"),
        ("description: 'never closed", 3, "single-quoted string is not closed"),
        ('description: "done" and more', 3, "after the closing quote"),
        ('description: "bad \\q escape"', 3, "unknown escape"),
        ('description: "bad \\u12 escape"', 3, "bad escape"),
        ("description: y\n- stray", 4, "must follow a `key:`"),
        ("description: y\nname: z", 4, "given twice"),
        ("description: y\nmaxTurns: 3\nmax_rounds: 4", 4, "`maxTurns` and `max_rounds` are both given"),
        ("description: y\nmaxTurns: many", 4, "`max_rounds` must be"),
        ("description: |\n", 3, "`description` is missing or empty"),
        ("description: d\ntools: [Read", 4, "not closed by `]`"),
    ],
)  # fmt: skip
def test_files_claude_code_also_rejects(lines: str, line: int, words: str) -> None:
    with pytest.raises(FrontMatterError) as caught:
        parse_agent(front(lines), "a.md")
    assert caught.value.line == line and words in caught.value.message, caught.value.message
