"""The system prompt, assembled once per session and kept byte-stable.

It is made of, in this order: the built-in coding-assistant prompt
(`prompts/system.md`), usage notes for the tools this session has
(`prompts/tools.md`, one `## name` section per tool, in the registry's order), the
names and descriptions of the skills (`skills.py`, sorted by name), the
environment (OS, shell, workspace root, git or not, today's date — never the time),
and the project instructions (AGENTS.md / WYCKOFF.md, see `instructions.py`).

Nothing in it may change from one model round to the next: anything that varies per
turn (recalled memories, background-task notes) goes into a user message instead, so
the provider's prompt cache keeps hitting. `SystemPromptBuilder.build()` is a pure
function of its inputs; the session rebuilds the prompt only when the user changes
something (model, mode, instructions) or after a compaction re-read the instructions.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path

from wyckoff_cli.context.instructions import ProjectInstructions

PROMPTS_PACKAGE = "wyckoff_cli.context"


@cache
def load_prompt(name: str) -> str:
    """A shipped prompt file (`prompts/NAME.md`), read once."""
    return (
        resources.files(PROMPTS_PACKAGE).joinpath("prompts", f"{name}.md").read_text(encoding="utf-8").strip()
    )


def tool_guidance(tool_names: Iterable[str]) -> str:
    """The `## name` sections of `prompts/tools.md` for the given tools, in the given
    order; tools without a section are skipped."""
    sections: dict[str, str] = {}
    for chunk in load_prompt("tools").split("\n## "):
        name, _, body = chunk.removeprefix("## ").partition("\n")
        sections[name.strip()] = body.strip()
    parts = [f"## {name}\n{sections[name]}" for name in tool_names if name in sections]
    return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class Environment:
    """Facts about where the session runs. `today` is the session's start date."""

    os_name: str
    shell: str
    workspace: Path
    is_git_repo: bool
    today: date

    @classmethod
    def detect(cls, workspace: Path, *, today: date | None = None) -> Environment:
        return cls(
            os_name=_os_name(),
            shell=_shell(),
            workspace=workspace,
            is_git_repo=_in_git_repo(workspace),
            today=today or date.today(),
        )

    def render(self) -> str:
        return "\n".join(
            [
                f"- Operating system: {self.os_name}",
                f"- Shell: {self.shell}",
                f"- Workspace root: {self.workspace}",
                f"- Git repository: {'yes' if self.is_git_repo else 'no'}",
                f"- Today's date: {self.today.isoformat()}",
            ]
        )


@dataclass(frozen=True, slots=True)
class SystemPromptBuilder:
    """Everything the system prompt is made of; `build()` joins it."""

    environment: Environment
    tool_names: tuple[str, ...] = ()
    instructions: ProjectInstructions = field(default_factory=lambda: ProjectInstructions((), ""))
    base: str | None = None  # replaces prompts/system.md (tests, custom agents)
    skills: str = ""  # the list of skills (context/skills.py `prompt_section`)

    def build(self) -> str:
        sections = [self.base if self.base is not None else load_prompt("system")]
        guidance = tool_guidance(self.tool_names)
        if guidance:
            sections.append(f"# Using the tools\n\n{guidance}")
        if self.skills:
            sections.append(self.skills)
        sections.append(f"# Environment\n\n{self.environment.render()}")
        if self.instructions.text:
            sections.append(
                "# Project instructions\n\n"
                "The user's instructions for this project follow, from the files named in the "
                "headings. Follow them; where they conflict with the guidance above, they win.\n\n"
                f"{self.instructions.text}"
            )
        return "\n\n".join(sections) + "\n"

    def with_instructions(self, instructions: ProjectInstructions) -> SystemPromptBuilder:
        return replace(self, instructions=instructions)


def _os_name() -> str:
    system = platform.system() or "unknown"
    if system == "Darwin":
        release = platform.mac_ver()[0]
        return f"macOS {release}".strip()
    if system == "Linux":
        return f"Linux ({platform.machine()})"
    return f"{system} {platform.release()}".strip()


def _shell() -> str:
    if os.name == "nt":
        return os.environ.get("COMSPEC", "cmd.exe")
    return os.environ.get("SHELL") or "/bin/sh"


def _in_git_repo(path: Path) -> bool:
    return any((folder / ".git").exists() for folder in (path, *path.parents))
