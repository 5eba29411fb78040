"""What the chat controller does for custom commands, skills and hooks.

Kept beside the controller so it stays small: the command list `/help` and completion
read, the expansion of a command into a `TurnRequest`, the answer to the hooks'
trust question, and the `/skills` and `/hooks` tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime.hook_config import HookFile as HookFile  # re-exported: the trust screen
from wyckoff_cli.session.commands import BY_NAME, COMMANDS, SlashCommand
from wyckoff_cli.session.custom_commands import CommandCatalog, TurnRequest, request_for, untrusted_notice

if TYPE_CHECKING:
    from wyckoff_cli.context.skills import SkillCatalog
    from wyckoff_cli.session.builder import Session, SessionBuilder

INIT_PROMPT = (
    "Write an AGENTS.md file at the root of this repository for coding assistants working here. "
    "First look around: list the files, read the README and build files, find how to install, run the "
    "tests and lint. Then write a concise AGENTS.md (under 150 lines) covering: what the project is, the "
    "layout, how to set up, build, test and lint (exact commands), code style and conventions you "
    "observed, and anything surprising. If an AGENTS.md exists, improve it instead of replacing it."
)


def slash_commands(custom: CommandCatalog, prefer: Sequence[str]) -> list[SlashCommand]:
    """Built-ins, then custom commands with their source. A custom command with a
    built-in's name is listed too, saying which one runs."""
    listed = list(COMMANDS)
    for command in custom.commands:
        description = command.description
        if command.name in BY_NAME:
            if command.name in prefer:
                description += " (runs instead of the built-in: commands.prefer)"
            else:
                description += (
                    f" (the built-in /{command.name} runs; list it in commands.prefer to change that)"
                )
        listed.append(SlashCommand(command.name, description, command.argument_hint, command.source))
    return listed


def expand(name: str, argument: str, custom: CommandCatalog, prefer: Sequence[str]) -> TurnRequest | None:
    command = custom.get(name)
    if command is not None and (name not in BY_NAME or name in prefer):
        return request_for(command, argument)
    if name == "init":
        return TurnRequest(INIT_PROMPT, "/init", ("write_file",))
    return None


def request_notices(request: TurnRequest) -> list[ev.RuntimeEvent]:
    notices: list[ev.RuntimeEvent] = []
    if request.untrusted:
        notices.append(ev.Notice("warning", untrusted_notice(request)))
    if request.agent:
        notices.append(
            ev.Notice(
                "info",
                f"/{request.command} names the agent {request.agent!r}; sub-agents are not available "
                "yet, so it runs in this conversation",
            )
        )
    return notices


def answer_trust(builder: SessionBuilder, files: list[HookFile], trusted: bool) -> ev.RuntimeEvent:
    from wyckoff_cli.runtime.hook_config import trust_files

    names = ", ".join(str(f.path) for f in files)
    if not trusted:
        return ev.Notice("warning", f"The hooks of {names} will not run (trust them with /hooks trust)")
    trust_files(files)
    builder.reload_hooks()
    return ev.Notice("info", f"Trusted the hooks of {names}")


def trust_project_grants(root: Path, session: Session | None) -> ev.RuntimeEvent:
    """`/permissions trust`: trust what the project's files grant (allow rules, command
    files) as they are now; the allow rules apply to the running session at once."""
    from wyckoff_cli.session.custom_commands import project_grants
    from wyckoff_cli.storage.project_grants import ALLOW_KIND, trust_grants

    waiting = [g for g in project_grants(root) if not g.trusted]
    if not waiting:
        return ev.Notice("info", "Nothing of this project waits for trust")
    trust_grants(waiting)
    if session is not None:
        for grant in waiting:
            if grant.kind == ALLOW_KIND:
                session.policy.allow.extend(r for r in grant.grants if r not in session.policy.allow)
    lines = [f"{g.path}: {', '.join(g.grants)}" for g in waiting]
    return ev.Notice("info", "Trusted what these project files grant:\n" + "\n".join(lines))


def help_rows(builder: SessionBuilder) -> list[tuple[str, str]]:
    """What `/help` lists after the commands: the agents `task` takes (not the built-ins)
    and the skills `$NAME` loads, by the names they answer to (a plugin's `PLUGIN:NAME`)."""
    rows = [(f"agent {a.name}", _short(a.description)) for a in builder.agents() if a.source != "built-in"]
    return rows + [(f"${s.name}", _short(s.description)) for s in builder.skills.skills]


def _short(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def skills_output(skills: SkillCatalog) -> ev.RuntimeEvent:
    if not skills.skills and not skills.problems:
        return ev.Notice("info", "No skills (SKILL.md folders in .wyckoff/skills, .claude/skills, …)")
    rows = [[s.name, s.source, f"{s.tokens:,}", s.description[:80]] for s in skills.skills]
    text = "\n".join(f"Not loaded: {p}" for p in skills.problems)
    return ev.CommandOutput(
        "skills", title="Skills", text=text, columns=["skill", "source", "tokens", "description"], rows=rows
    )


def hooks_output(builder: SessionBuilder, argument: str) -> ev.RuntimeEvent:
    hooks = builder.user_hooks.hooks
    if argument.strip() == "trust":
        waiting = hooks.needing_trust()
        if not waiting:
            return ev.Notice("info", "Every hook file is trusted")
        return answer_trust(builder, waiting, True)
    if not hooks.files and not hooks.problems:
        return ev.Notice(
            "info", "No hooks configured ([[hooks.EVENT]] in config.toml, .claude/settings.json)"
        )
    rows = [
        [spec.event, spec.matcher or "*", spec.command, spec.source, hooks.state_of(file)]
        for file in hooks.files
        for spec in file.specs
    ]
    text = "\n".join(hooks.problems)
    return ev.CommandOutput(
        "hooks",
        title="Hooks",
        text=text,
        columns=["event", "matcher", "command", "source", "trust"],
        rows=rows,
    )
