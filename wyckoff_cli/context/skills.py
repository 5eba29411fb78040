"""Skills: `SKILL.md` folders the model loads when a task calls for them.

A skill is a folder holding `SKILL.md` — front matter with `name` and `description`,
a Markdown body — and optionally files beside it (scripts, templates, references).
The folders are looked for, first match of a name winning, in the project's
`.wyckoff/skills/`, `.agents/skills/`, `.claude/skills/` and the user config folder's
`skills/` (Claude Code's layout, so existing skills work unchanged).

Progressive disclosure: only the names and descriptions go into the system prompt
(`prompt_section`, sorted by name, capped at ~2% of the context window, so it is
byte-stable and the cached prefix holds); the model loads a skill's body with the
read-only `skill` tool and the files beside it with `read_file`. `$NAME` in the
user's message loads the skill into that message (`mention_blocks`), never into the
system prompt.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.context.frontmatter import FrontMatterError, read_document
from wyckoff_cli.context.tokens import estimate_text
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.claude_home import claude_user_dir
from wyckoff_cli.storage.plugins import active_plugins
from wyckoff_cli.tools.base import Tool, ToolContext

log = logging.getLogger(__name__)

PROMPT_SHARE = 0.02  # of the context window, for the list in the system prompt
DESCRIPTION_CHARS = 300
MAX_FILES_LISTED = 50
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_MENTION = re.compile(r"(?<![\w$\\])\$([A-Za-z0-9][A-Za-z0-9_.:\-]*[A-Za-z0-9]|[A-Za-z0-9])")
PLUGIN_SOURCE = "plugin "  # a plugin's skills' source label, before the plugin's name


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    path: Path  # the SKILL.md
    source: str  # "project", "project (.claude)", "project (.agents)", "user"
    body: str

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def tokens(self) -> int:
        return estimate_text(self.body)

    def files(self) -> list[Path]:
        """The files beside SKILL.md (recursively, at most `MAX_FILES_LISTED`)."""
        found: list[Path] = []
        for item in sorted(self.folder.rglob("*")):
            if item.is_file() and item != self.path and not any(p.startswith(".") for p in item.parts[-3:]):
                found.append(item)
                if len(found) >= MAX_FILES_LISTED:
                    break
        return found

    def render(self) -> str:
        """What the `skill` tool and `$NAME` give the model."""
        lines = [f'<skill name="{self.name}" folder="{self.folder}">', self.body.strip(), "</skill>"]
        files = self.files()
        if files:
            lines.append("Files beside this skill (read them with read_file when the skill says so):")
            lines.extend(f"- {f}" for f in files)
        return "\n".join(lines)


@dataclass
class SkillCatalog:
    skills: list[Skill] = field(default_factory=list)  # sorted by name
    problems: list[str] = field(default_factory=list)  # files that could not be read

    def get(self, name: str) -> Skill | None:
        """The skill `name`; a plugin's skill (`PLUGIN:SKILL`) also by its bare name when
        only one plugin has a skill of that name and no other skill has it."""
        exact = next((s for s in self.skills if s.name == name), None)
        if exact is not None or ":" in name:
            return exact
        namespaced = [s for s in self.skills if s.name.partition(":")[2] == name]
        return namespaced[0] if len(namespaced) == 1 else None

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.skills]


def skill_folders(root: Path, *, trust_settings: bool = False) -> list[tuple[Path, str]]:
    """Where skills are looked for, in order of precedence, with their source label."""
    return [
        (root / ".wyckoff" / "skills", "project"),
        (root / ".agents" / "skills", "project (.agents)"),
        (root / ".claude" / "skills", "project (.claude)"),
        (paths.config_dir() / "skills", "user"),
        *([(claude / "skills", "user (~/.claude)")] if (claude := claude_user_dir()) else []),
        *[
            (path, f"{PLUGIN_SOURCE}{p.name}")
            for p in active_plugins(root, trust_settings=trust_settings)
            for path in p.skill_paths
        ],
    ]


def discover_skills(root: Path, *, trust_settings: bool = False) -> SkillCatalog:
    """The skills of `root`, first name wins; `trust_settings`: storage/plugins.py active_plugins."""
    catalog = SkillCatalog()
    seen: set[str] = set()
    for folder, source in skill_folders(root, trust_settings=trust_settings):
        if not folder.is_dir():
            continue
        own = folder / "SKILL.md"  # a plugin may name a skill's own folder
        for skill_file in [own] if own.is_file() else sorted(folder.glob("*/SKILL.md")):
            try:
                document = read_document(skill_file)
            except (OSError, UnicodeDecodeError, FrontMatterError) as exc:
                catalog.problems.append(f"{skill_file}: {exc}")
                continue
            name = document.text("name") or skill_file.parent.name
            if not _NAME.match(name) and _NAME.match(skill_file.parent.name):
                name = (
                    skill_file.parent.name
                )  # a display name ("Agent Development", as published): the folder's
            description = " ".join(document.text("description").split())
            if not _NAME.match(name):
                catalog.problems.append(
                    f"{skill_file}: the name {name!r} is not usable (letters, digits, '-', '_', '.')"
                )
                continue
            if not description:
                catalog.problems.append(f"{skill_file}: no description in the front matter; skipped")
                continue
            if source.startswith(PLUGIN_SOURCE):  # Claude Code's name for a plugin's skill
                name = f"{source.removeprefix(PLUGIN_SOURCE)}:{name}"
            if name in seen:
                continue  # an earlier folder's skill of that name wins
            seen.add(name)
            catalog.skills.append(Skill(name, description, skill_file, source, document.body))
    catalog.skills.sort(key=lambda s: s.name)
    return catalog


def prompt_section(catalog: SkillCatalog, context_window: int) -> str:
    """The system prompt's list of skills ('' without skills): a pure function of the
    catalog and the window, so it is the same on every round."""
    if not catalog.skills:
        return ""
    budget = max(200, int(context_window * PROMPT_SHARE))
    head = (
        "# Skills\n\n"
        "Skills are instructions for particular kinds of task, loaded on demand. When the task "
        "matches a skill's description, first call the `skill` tool with its name and follow what "
        "it says. The user may also load one by writing $NAME.\n"
    )
    lines: list[str] = []
    used = estimate_text(head)
    for number, skill in enumerate(catalog.skills):
        description = skill.description
        if len(description) > DESCRIPTION_CHARS:
            description = description[: DESCRIPTION_CHARS - 1].rstrip() + "…"
        line = f"- {skill.name}: {description}"
        cost = estimate_text(line) + 1
        if used + cost > budget:
            rest = len(catalog.skills) - number
            lines.append(f"- … and {rest} more (the skill tool loads any of them by name)")
            break
        lines.append(line)
        used += cost
    return head + "\n" + "\n".join(lines)


def mentioned_skills(text: str, catalog: SkillCatalog) -> list[Skill]:
    """The skills named as `$NAME` in `text`, in order of first mention (unknown
    names, like `$HOME`, are left alone)."""
    found: list[Skill] = []
    for match in _MENTION.finditer(text):
        skill = catalog.get(match.group(1))
        if skill is not None and skill not in found:
            found.append(skill)
    return found


def mention_blocks(text: str, catalog: SkillCatalog) -> str:
    """The loaded skills to add to a user message that mentions them ('' if none)."""
    skills = mentioned_skills(text, catalog)
    if not skills:
        return ""
    intro = "The user loaded these skills for this message; follow them."
    return "\n\n" + "\n\n".join([intro, *(s.render() for s in skills)])


SKILL_DESCRIPTION = (
    "Load a skill's instructions by name (the skills are listed in the system prompt). "
    "Call it before starting a task a skill covers; then follow the instructions. Files the "
    "skill mentions are listed with their paths: read them with read_file."
)


def skill_tool(catalog: SkillCatalog) -> Tool:
    """The read-only `skill` tool over `catalog` (no approval: it only reads)."""

    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        name = str(args.get("name", "")).strip().removeprefix("$")
        skill = catalog.get(name)
        if skill is None:
            known = ", ".join(catalog.names) or "none"
            raise ToolError(f"No skill named {name!r}. Skills: {known}.")
        try:
            fresh = read_document(skill.path).body
        except (OSError, UnicodeDecodeError, FrontMatterError):
            fresh = skill.body
        return Skill(skill.name, skill.description, skill.path, skill.source, fresh).render()

    return Tool(
        name="skill",
        description=SKILL_DESCRIPTION,
        parameters={
            "type": "object",
            "properties": {"name": {"type": "string", "description": "The skill's name."}},
            "required": ["name"],
            "additionalProperties": False,
        },
        run=run,
        concurrency_safe=True,
        requires_approval=False,
        kind="read",
        summary_arg="name",
    )
