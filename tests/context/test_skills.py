"""Skills: discovery, the capped list in the system prompt, the `skill` tool, `$NAME`;
loading a skill never changes the system prompt (the cached prefix holds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wyckoff_cli.context.frontmatter import FrontMatterError, parse_document
from wyckoff_cli.context.skills import discover_skills, mentioned_skills, prompt_section
from wyckoff_cli.core.messages import TextPart
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.sessions import SessionStore


def skill(folder: Path, name: str, description: str, body: str = "Do it well.", **files: str) -> Path:
    target = folder / name
    target.mkdir(parents=True, exist_ok=True)
    (target / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n")
    for file, text in files.items():
        (target / file).write_text(text)
    return target


def test_front_matter_forms() -> None:
    document = parse_document(
        "---\n"
        'description: "Commit: with a message"  # a comment\n'
        "allowed-tools: Bash(git add:*), Bash(git commit:*)\n"
        "list: [a, 'b, c']\n"
        "block:\n  - one\n  - two\n"
        "text: |\n  line 1\n  line 2\n"
        "flag: true\n"
        "---\nBody $ARGUMENTS\n"
    )
    assert document.text("description") == "Commit: with a message"
    assert document.items("allowed-tools") == ["Bash(git add:*)", "Bash(git commit:*)"]
    assert document.meta["list"] == ["a", "b, c"]
    assert document.meta["block"] == ["one", "two"]
    assert document.meta["text"] == "line 1\nline 2"
    assert document.flag("flag") and document.body == "Body $ARGUMENTS\n"
    assert parse_document("no front matter").body == "no front matter"
    with pytest.raises(FrontMatterError, match="never closed"):
        parse_document("---\nname: x\n", "f.md")


def test_discovery_order_sources_and_problems(workspace: Path) -> None:
    skill(workspace / ".claude" / "skills", "pdf", "Fill PDF forms", "claude one")
    skill(workspace / ".wyckoff" / "skills", "pdf", "Fill PDF forms (ours)", "ours")
    skill(workspace / ".agents" / "skills", "changelog", "Write changelog entries")
    skill(paths.config_dir() / "skills", "review", "Review a diff")
    broken = workspace / ".claude" / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    catalog = discover_skills(workspace)
    assert catalog.names == ["changelog", "pdf", "review"]  # sorted by name
    pdf = catalog.get("pdf")
    assert pdf is not None and pdf.source == "project" and pdf.body.strip() == "ours"
    assert catalog.get("review").source == "user"  # type: ignore[union-attr]
    assert any("no description" in p for p in catalog.problems)


def test_the_prompt_list_is_capped_and_stable(workspace: Path) -> None:
    for number in range(200):
        skill(workspace / ".wyckoff" / "skills", f"s{number:03}", "x" * 200)
    catalog = discover_skills(workspace)
    section = prompt_section(catalog, 100_000)
    assert section == prompt_section(discover_skills(workspace), 100_000)
    assert len(section) / 4 <= 100_000 * 0.02 + 100
    assert "- s000:" in section and "more (the skill tool loads any of them by name)" in section
    assert prompt_section(discover_skills(workspace / "nothing"), 100_000) == ""


def test_mentions_only_known_names(workspace: Path) -> None:
    skill(workspace / ".wyckoff" / "skills", "pdf", "PDFs")
    catalog = discover_skills(workspace)
    assert [s.name for s in mentioned_skills("use $pdf, not $HOME or $pdfx", catalog)] == ["pdf"]


def controller(root: Path, rounds: list[object]) -> tuple[ChatController, ScriptedProvider]:
    provider = ScriptedProvider(rounds, model="scripted:test")
    builder = SessionBuilder(open_workspace(root), provider_factory=lambda _m: provider, store=SessionStore())
    return ChatController(
        builder, model="scripted:test", mode="default", context_window=lambda _m: 200_000
    ), provider


async def test_skill_tool_and_mentions_through_a_session_keep_the_prompt(workspace: Path) -> None:

    folder = skill(
        workspace / ".claude" / "skills",
        "pdf",
        "Fill in PDF forms",
        "Run fill.py on the form.",
        **{"fill.py": "x"},
    )
    rounds = [
        {"tool_calls": [{"id": "k1", "name": "skill", "args": {"name": "pdf"}}]},
        {"text": "loaded"},
        {"text": "again"},
    ]
    chat, provider = controller(workspace, rounds)
    prompt = chat.system_prompt
    assert "# Skills" in prompt and "- pdf: Fill in PDF forms" in prompt
    assert "Run fill.py" not in prompt  # only names and descriptions
    assert "skill" in chat.session.registry.names()
    async for _ in chat.handle(rq.Turn("fill the form")):
        pass
    tool_message = next(m for m in chat.conversation if m.role == "tool")
    assert "Run fill.py on the form." in tool_message.text and str(folder / "fill.py") in tool_message.text
    async for _ in chat.handle(rq.Turn("now with $pdf please")):
        pass
    sent = provider.requests[-1].messages[-1]
    assert sent.text.startswith("now with $pdf please")
    assert isinstance(sent.parts[-1], TextPart) and "Run fill.py on the form." in sent.parts[-1].text
    assert {r.system_prompt for r in provider.requests} == {prompt}  # the cached prefix holds
    output = await anext(chat.handle(rq.Skills()))
    assert output.rows[0][:2] == ["pdf", "project (.claude)"]  # type: ignore[union-attr]
    await chat.aclose()


async def test_unknown_skill_is_a_tool_error_naming_the_skills(workspace: Path) -> None:
    from wyckoff_cli.context.skills import skill_tool
    from wyckoff_cli.core.errors import ToolError
    from wyckoff_cli.tools.base import ToolContext

    skill(workspace / ".wyckoff" / "skills", "pdf", "PDFs")
    tool = skill_tool(discover_skills(workspace))
    assert not tool.requires_approval and tool.kind == "read"
    with pytest.raises(ToolError, match="Skills: pdf"):
        await tool.run({"name": "nope"}, ToolContext(workspace=workspace))


def test_a_display_name_falls_back_to_the_folder_name(workspace: Path) -> None:
    folder = workspace / ".claude" / "skills" / "agent-development"  # as anthropics' plugin-dev publishes it
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: Agent Development\ndescription: Build agents\n---\nbody\n")
    unusable = workspace / ".claude" / "skills" / "Has Space"
    unusable.mkdir()
    (unusable / "SKILL.md").write_text("---\nname: Also Spaced\ndescription: d\n---\nbody\n")
    catalog = discover_skills(workspace)
    assert catalog.names == ["agent-development"]
    assert catalog.problems == [
        f"{unusable / 'SKILL.md'}: the name 'Also Spaced' is not usable (letters, digits, '-', '_', '.')"
    ]


@pytest.mark.parametrize(
    ("front", "description"),
    [
        (  # the run-on examples anthropics' plugins publish in agents, in a skill
            "name: Rule Writing\ndescription: Use when writing rules. Examples:\n\n<example>\n"
            'Context: A user asks\nuser: "write a rule"\n</example>\nversion: 0.1.0',
            'Use when writing rules. Examples: <example> Context: A user asks user: "write a rule" </example>',
        ),
        ("name: Rule Writing\ndescription: >-\n  Folded over\n  two lines.\nversion: 0.2.0", "Folded over two lines."),
        ("name: Rule Writing\ndescription:\n  Under its key,\n  as Prettier writes it.", "Under its key, as Prettier writes it."),
        ("name: Rule Writing\ndescription: A plain value\n  continued.\nlicense: MIT", "A plain value continued."),
    ],
)  # fmt: skip
def test_published_multi_line_descriptions_and_display_names(
    workspace: Path, front: str, description: str
) -> None:
    folder = workspace / ".claude" / "skills" / "writing-rules"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\n{front}\n---\nWrite rules.\n")
    catalog = discover_skills(workspace)
    assert catalog.problems == [] and catalog.names == ["writing-rules"]
    assert catalog.skills[0].description == description
