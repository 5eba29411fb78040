"""Custom slash commands: Markdown files that become a turn (Claude Code's format).

Looked for, first match of a name winning, in the project's `.wyckoff/commands/` and
`.claude/commands/`, then the user config folder's `commands/`. A sub-folder makes a
namespace: `git/commit.md` is `/git:commit`; an installed plugin's commands are
`/plugin-name:command` (storage/plugins.py; the user's own once installed). Front matter (all optional):
`description`, `argument-hint`, `allowed-tools` (permission rules granted for that
turn only; Claude Code's tool names are translated: `Bash(git add:*)` is
`run_shell(git add:*)`), `model` (the model of that turn), `agent` (recorded; run as
a sub-agent once sub-agents exist), `required-tools` (tools the turn must call: the
loop guard checks them).

The body may use `$ARGUMENTS` (everything after the name), `$1` … `$9` (the words,
quotes respected), `@path` (the file is attached as a typed `@path` is: the model
must read it) and `` !`command` ``: the command runs before the message is sent and
its output replaces it. Such a command goes through the session's permission policy
like a model's `run_shell` call — asked about (an `approval_request` the host answers)
unless a rule or the mode allows it, refused in plan mode — and an approval holds for
the rest of the session.

A project's command file (not the user's own `commands/` folder) is the repository's,
not the user's: until the user trusted that file as it is now (storage/project_grants.py,
`wyckoff permissions trust`), its `allowed-tools` grant nothing and its snippets are
asked about like any `run_shell` call (refused headless unless a rule or the mode
allows them). A file written or changed during a session, by the model or anyone,
is untrusted until trusted again.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wyckoff_cli.context.frontmatter import FrontMatterError, parse_document
from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime.hook_config import CLAUDE_TOOL_NAMES
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.claude_home import claude_user_dir
from wyckoff_cli.storage.plugins import active_plugins
from wyckoff_cli.storage.project_grants import (
    COMMAND_KIND,
    TRUST_HINT,
    ProjectGrant,
    allow_grant,
    command_digest,
    command_state,
)
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, invalid_rules

if TYPE_CHECKING:
    from wyckoff_cli.runtime.loop import AgentRuntime
    from wyckoff_cli.session.builder import Session
    from wyckoff_cli.tools.registry import ToolRegistry

_NAME_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_SHELL = re.compile(r"(?<![\w`])!`([^`\n]+)`")
_POSITIONAL = re.compile(r"\$([1-9])(?!\d)")
_EXIT_OK = re.compile(r"\n?\[exit code 0\]\s*$")
_RULE = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*(\(.*\))?\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class CustomCommand:
    name: str  # "git:commit"
    body: str
    path: Path
    source: str  # "project", "project (.claude)", "user"
    description: str = ""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()  # in Wyckoff's rule syntax
    required_tools: tuple[str, ...] = ()
    model: str | None = None
    agent: str | None = None
    digest: str = ""  # SHA-256 of the file as read
    trusted: bool = True  # the user's own file, or a project file the user trusted as it is

    @property
    def project(self) -> bool:
        return self.source != "user" and not self.source.startswith("plugin ")

    @property
    def grants(self) -> bool:
        """Whether the file grants anything (rules, or snippets run before the turn)."""
        return bool(self.allowed_tools) or bool(shell_snippets(self.body))

    @property
    def untrusted_grants(self) -> bool:
        return self.grants and not self.trusted


@dataclass
class CommandCatalog:
    commands: list[CustomCommand] = field(default_factory=list)  # sorted by name
    problems: list[str] = field(default_factory=list)

    def get(self, name: str) -> CustomCommand | None:
        return next((c for c in self.commands if c.name == name), None)


def command_folders(root: Path) -> list[tuple[Path, str]]:
    return [
        (root / ".wyckoff" / "commands", "project"),
        (root / ".claude" / "commands", "project (.claude)"),
        (paths.config_dir() / "commands", "user"),
        *([(claude / "commands", "user (~/.claude)")] if (claude := claude_user_dir()) else []),
    ]


def discover_commands(root: Path, *, trust_settings: bool = False) -> CommandCatalog:
    """`trust_settings`: the project's `enabledPlugins` count for this run (active_plugins)."""
    catalog = CommandCatalog()
    seen: set[str] = set()
    for folder, source in command_folders(root):
        if not folder.is_dir():
            continue
        for file in sorted(folder.rglob("*.md")):
            parts = file.relative_to(folder).with_suffix("").parts
            if not all(_NAME_PART.match(p) for p in parts):
                catalog.problems.append(f"{file}: not a usable command name (letters, digits, '-', '_', '.')")
                continue
            name = ":".join(parts)
            if name in seen:
                continue
            try:
                command = load_command(file, name, source, catalog.problems)
            except (OSError, UnicodeDecodeError, FrontMatterError) as exc:
                catalog.problems.append(f"{file}: {exc}")
                continue
            seen.add(name)
            catalog.commands.append(command)
    for plugin in active_plugins(root, trust_settings=trust_settings):  # namespaced: /plugin-name:command
        for path in plugin.command_paths:
            files = [path] if path.is_file() else sorted(path.rglob("*.md"))
            for file in files:
                parts = (file.stem,) if path.is_file() else file.relative_to(path).with_suffix("").parts
                name = ":".join((plugin.name, *parts))
                if name in seen or not all(_NAME_PART.match(p) for p in parts):
                    continue
                try:
                    command = load_command(file, name, f"plugin {plugin.name}", catalog.problems)
                except (OSError, UnicodeDecodeError, FrontMatterError) as exc:
                    catalog.problems.append(f"{file}: {exc}")
                    continue
                seen.add(name)
                catalog.commands.append(command)
    catalog.commands.sort(key=lambda c: c.name)
    return catalog


def load_command(file: Path, name: str, source: str, problems: list[str]) -> CustomCommand:
    data = file.read_bytes()  # read once: the text used is the text whose trust is checked
    document = parse_document(data.decode("utf-8"), str(file))
    digest = command_digest(data)
    rules: list[str] = []
    for written in document.items("allowed-tools"):
        rule = translate_rule(written)
        problem = invalid_rules([rule])
        if problem:
            problems.append(f"{file}: allowed-tools {written!r} is not a rule here: {problem[0]}")
        else:
            rules.append(rule)
    description = " ".join(document.text("description").split())
    if not description:
        first = next((line.strip() for line in document.body.splitlines() if line.strip()), "")
        description = first.lstrip("# ")[:80]
    return CustomCommand(
        name=name,
        body=document.body,
        path=file,
        source=source,
        description=description,
        argument_hint=document.text("argument-hint"),
        allowed_tools=tuple(rules),
        required_tools=tuple(document.items("required-tools")),
        model=document.text("model") or None,
        agent=document.text("agent") or None,
        digest=digest,
        trusted=source == "user" or source.startswith("plugin ") or command_state(file, digest) == "trusted",
    )


def project_grants(root: Path) -> list[ProjectGrant]:
    """What this project's files grant, with their trust: the allow rules of
    `.wyckoff/config.toml`, then each project command file with `allowed-tools` or
    snippets (a file shadowed by an earlier one of the same name is listed too: it
    would run once the other is gone)."""
    found: list[ProjectGrant] = []
    allow = allow_grant(root)
    if allow is not None:
        found.append(allow)
    for folder, source in command_folders(root):
        if source == "user" or not folder.is_dir():
            continue
        for file in sorted(folder.rglob("*.md")):
            name = ":".join(file.relative_to(folder).with_suffix("").parts)
            try:
                command = load_command(file, name, source, [])
            except (OSError, UnicodeDecodeError, FrontMatterError):
                continue
            if command.grants:
                state = command_state(file, command.digest)
                granted = (*command.allowed_tools, *(f"!`{s}`" for s in shell_snippets(command.body)))
                found.append(ProjectGrant(file, COMMAND_KIND, command.digest, state, granted))
    return found


def translate_rule(written: str) -> str:
    """Claude Code's `Bash(git add:*)` → `run_shell(git add:*)`; Wyckoff's own rules
    and MCP tool names are kept."""
    match = _RULE.match(written)
    if match is None:
        return written.strip()
    tool, pattern = match.group(1), match.group(2) or ""
    return CLAUDE_TOOL_NAMES.get(tool, tool) + pattern


# ---------------------------------------------------------------------- expansion


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """A command that becomes a turn: the text sent, what the transcript shows for it,
    the tools the turn must call, and for a custom command the rules allowed for this
    turn only, the model of the turn, the agent named, and the command's name (its
    `` !`…` `` snippets run before the text is sent)."""

    text: str
    shown: str
    required_tools: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    model: str | None = None
    agent: str | None = None
    command: str | None = None
    untrusted: str = ""  # the project file whose grants were withheld (not trusted)


def request_for(command: CustomCommand, argument: str) -> TurnRequest:
    """The turn of `/NAME argument`. An untrusted project file's `allowed-tools` are
    withheld (it may not widen the permissions); its snippets then ask."""
    shown = f"/{command.name} {argument}".rstrip()
    return TurnRequest(
        substitute_arguments(command.body, argument),
        shown,
        command.required_tools,
        () if command.untrusted_grants else command.allowed_tools,
        command.model,
        command.agent,
        command.name,
        str(command.path) if command.untrusted_grants else "",
    )


def untrusted_notice(request: TurnRequest) -> str:
    """The notice for a command whose project file is not trusted ("" when it is)."""
    if not request.untrusted:
        return ""
    return (
        f"/{request.command}: {request.untrusted} is a project file you have not trusted: "
        f"its allowed-tools grant nothing and its !`…` snippets ask first; {TRUST_HINT}"
    )


def substitute_arguments(body: str, argument: str) -> str:
    """`$ARGUMENTS` and `$1`…`$9`; a body using neither gets the arguments appended
    (as Claude Code does), so they are never lost."""
    try:
        words = shlex.split(argument)
    except ValueError:
        words = argument.split()
    uses = "$ARGUMENTS" in body or _POSITIONAL.search(body) is not None
    text = body.replace("$ARGUMENTS", argument)
    text = _POSITIONAL.sub(
        lambda m: words[int(m.group(1)) - 1] if int(m.group(1)) <= len(words) else "", text
    )
    if argument and not uses:
        text = f"{text.rstrip()}\n\nARGUMENTS: {argument}"
    return text


def shell_snippets(text: str) -> list[str]:
    return [m.group(1).strip() for m in _SHELL.finditer(text)]


@dataclass
class ShellExpansion:
    """Runs a command's `` !`…` `` snippets through the policy, and gives the text
    with their output inlined. Iterate `events()` (approval requests included, for the
    host to answer); then read `text`, or `failed` when a snippet could not run."""

    text: str
    name: str
    policy: ApprovalPolicy
    registry: ToolRegistry
    workspace: Path
    env: dict[str, str] | None
    approved: set[str]  # commands approved earlier this session
    failed: str | None = None

    @classmethod
    def of(
        cls, text: str, request: TurnRequest, session: Session, root: Path, approved: set[str]
    ) -> ShellExpansion:
        """The expansion of `text` (`request`'s) in `session` (its policy, tools, environment)."""
        return cls(
            text,
            request.command or "command",
            session.policy,
            session.registry,
            root,
            session.runtime.tool_env,
            approved,
        )

    async def events(self) -> AsyncIterator[ev.RuntimeEvent]:
        outputs: dict[str, str] = {}
        for number, command in enumerate(dict.fromkeys(shell_snippets(self.text)), 1):
            async for event in self._run(command, f"cmd-{self.name}-{number}", outputs):
                yield event
            if self.failed is not None:
                return
        self.text = _SHELL.sub(lambda m: outputs.get(m.group(1).strip(), m.group(0)), self.text)

    async def _run(
        self, command: str, call_id: str, outputs: dict[str, str]
    ) -> AsyncIterator[ev.RuntimeEvent]:
        from wyckoff_cli.session.user_shell import UserShell

        shell = UserShell(self.policy, self.registry, self.workspace, self.env, approved=self.approved)
        async for event in shell.run(command, call_id, f"/{self.name} runs this before sending its prompt"):
            yield event
        if shell.failed is not None:
            self.failed = f"/{self.name}: {shell.failed}, so the prompt was not sent"
        elif shell.result is not None and shell.result.failed:
            self.failed = f"/{self.name}: `{command}` failed: {shell.result.output}"
        elif shell.result is not None:
            outputs[command] = _EXIT_OK.sub(
                "", shell.result.output
            ).strip()  # a failing command keeps its exit code line


@contextmanager
def turn_rules(policy: ApprovalPolicy, rules: tuple[str, ...]) -> Iterator[None]:
    """Allow `rules` for one turn only (a command's `allowed-tools`)."""
    added = [r for r in rules if r not in policy.allow]
    policy.allow.extend(added)
    try:
        yield
    finally:
        for rule in added:
            if rule in policy.allow:
                policy.allow.remove(rule)


def runtime_for_model(runtime: AgentRuntime, provider: Any) -> AgentRuntime:
    """The session's runtime with another provider, for one turn (a command's
    `model`): tools, policy, hooks, context and background tasks are shared."""
    import copy

    other = copy.copy(runtime)
    other.provider = provider
    return other
