"""Slash commands: declared once, here, each with the request it becomes.

One table serves `/help`, the input's completion, the app, ACP and headless
`wyckoff run "/x"`: `parse(text)` turns `/name argument` into a request
(session/requests.py) that the host hands to `ChatController.handle`. Each command
names the hosts that offer it (`hosts`): ACP advertises exactly the ones whose host
is "acp", headless runs exactly the "headless" ones. Custom commands
(session/custom_commands.py) are listed after these by the controller, and parse as
`PromptCommand`.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass

from wyckoff_cli.runtime.checkpoints.rewind import RewindChoice
from wyckoff_cli.session import requests as rq
from wyckoff_cli.tools.permissions.policy import PERMISSION_MODES

APP, ACP, HEADLESS = "app", "acp", "headless"
HOSTS = (APP, ACP, HEADLESS)
EVERYWHERE = frozenset(HOSTS)
APP_ONLY = frozenset({APP})
INTERACTIVE = frozenset({APP, ACP})  # a chat that goes on: changing it is worth it


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    description: str
    argument: str = ""  # e.g. "[ID]" — shown in help and completion
    source: str = ""  # a custom command's origin: "project", "project (.claude)", "user"
    hosts: frozenset[str] = EVERYWHERE
    request: Callable[[str], rq.Request] | None = None  # the argument → the request (None: custom)

    @property
    def usage(self) -> str:
        where = f" ({self.source})" if self.source else ""
        return f"/{self.name}{where} {self.argument}".rstrip()


def _optional(text: str) -> str | None:
    return text or None


def _permissions(argument: str) -> rq.Request:
    verb, _, rule = argument.partition(" ")
    if not argument:
        return rq.Permissions()
    if verb == "remove" and rule.strip():
        return rq.Permissions(remove=rule.strip())
    if argument == "trust":
        return rq.Permissions(trust=True)
    return rq.Invalid("permissions", "/permissions takes no argument, `remove RULE` or `trust`")


CHOICE_WORDS = {choice.value: choice for choice in RewindChoice}


def parse_rewind(argument: str) -> rq.Request:
    """`/rewind` (the app's picker; elsewhere the last message), `/rewind N` (the N-th
    most recent message typed, 1 the last) and a choice: `both`, `conversation`, `code`."""
    turn: int | None = None
    choice = RewindChoice.BOTH
    for word in argument.lower().split():
        if word.isdigit() and int(word) >= 1 and turn is None:
            turn = int(word)
        elif word in CHOICE_WORDS:
            choice = CHOICE_WORDS[word]
        else:
            return rq.Invalid(
                "rewind", f"/rewind [N] [{' | '.join(CHOICE_WORDS)}]: N counts back from the last message (1)"
            )
    return rq.Rewind(turn, choice)


def _no_argument(name: str, make: Callable[[], rq.Request]) -> Callable[[str], rq.Request]:
    def parse(argument: str) -> rq.Request:
        return make() if not argument else rq.Invalid(name, f"/{name} takes no argument")

    return parse


def parse_review(argument: str) -> rq.Request:
    """`/review` (uncommitted changes), `/review --base REF`, `/review --commit SHA`."""
    words = argument.split()
    if not words or words == ["--uncommitted"]:
        return rq.Review()
    if len(words) == 2 and words[0] in ("--base", "--commit") and not words[1].startswith("-"):
        return rq.Review(words[0][2:], words[1])
    return rq.Invalid("review", "/review [--uncommitted | --base REF | --commit SHA]")


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "show keys and commands", hosts=APP_ONLY, request=lambda _: rq.Help()),
    SlashCommand(
        "model",
        "show or switch the model",
        "[ID]",
        hosts=INTERACTIVE,
        request=lambda a: rq.SetModel(_optional(a)),
    ),
    SlashCommand(
        "mode",
        f"show or set the permission mode ({', '.join(PERMISSION_MODES)})",
        "[MODE]",
        hosts=INTERACTIVE,
        request=lambda a: rq.SetMode(_optional(a)),
    ),
    SlashCommand(
        "compact",
        "summarise the older conversation now, optionally focused",
        "[focus]",
        request=lambda a: rq.Compact(_optional(a)),
    ),
    SlashCommand("clear", "start a new session", hosts=APP_ONLY, request=_no_argument("clear", rq.Clear)),
    SlashCommand(
        "resume",
        "pick an earlier session of this project",
        "[ID]",
        hosts=APP_ONLY,
        request=lambda a: rq.Resume(a),
    ),
    SlashCommand(
        "cost",
        "tokens and cost of this session by model, and what the cache saved",
        request=_no_argument("cost", rq.Cost),
    ),
    SlashCommand("memory", "list what Wyckoff remembers", "[search]", request=lambda a: rq.Memory(a)),
    SlashCommand(
        "permissions",
        "list the allow and deny rules; trust the project's",
        "[remove RULE | trust]",
        request=_permissions,
    ),
    SlashCommand(
        "mcp",
        "MCP servers and their tools; restart one, trust the project's",
        "[restart NAME | trust [NAME]]",
        hosts=INTERACTIVE,
        request=lambda a: rq.Mcp(a),
    ),
    SlashCommand(
        "lsp",
        "language servers: languages, state, files open, last error",
        request=_no_argument("lsp", rq.Lsp),
    ),
    SlashCommand(
        "init",
        "ask the model to write AGENTS.md for this project",
        request=lambda a: rq.PromptCommand("init", a),
    ),
    SlashCommand("export", "export this session as Markdown", "[FILE]", request=lambda a: rq.Export(a)),
    SlashCommand(
        "skills", "list the skills and what each costs when loaded", request=_no_argument("skills", rq.Skills)
    ),
    SlashCommand(
        "hooks", "list the user hooks with their source and trust", "[trust]", request=lambda a: rq.Hooks(a)
    ),
    SlashCommand(
        "plugins",
        "the installed plugins and what each brings; enable or disable one",
        "[enable NAME | disable NAME]",
        request=lambda a: rq.Plugins(a),
    ),
    SlashCommand(
        "rewind",
        "go back to an earlier message: code, conversation or both (Esc Esc)",
        "[N] [both|conversation|code]",
        request=parse_rewind,
    ),
    SlashCommand(
        "undo",
        "restore the files as they were before the last round that changed them",
        request=_no_argument("undo", rq.Undo),
    ),
    SlashCommand("redo", "bring back what the last /undo removed", request=_no_argument("redo", rq.Redo)),
    SlashCommand(
        "diff", "every change this session made to the work tree", request=_no_argument("diff", rq.Diff)
    ),
    SlashCommand(
        "review",
        "review a change read-only: findings checked against the code",
        "[--uncommitted | --base REF | --commit SHA]",
        request=parse_review,
    ),
    SlashCommand(
        "worktree",
        "the git worktrees: list, a diff, or merge one into this tree",
        "[diff NAME | merge NAME [--squash]]",
        request=lambda a: rq.Worktree(a),
    ),
    SlashCommand(
        "top", "jump to the top of the transcript (Ctrl+Home)", hosts=APP_ONLY, request=lambda _: rq.Top()
    ),
    SlashCommand(
        "bottom",
        "jump to the end of the transcript and follow it (Ctrl+End)",
        hosts=APP_ONLY,
        request=lambda _: rq.Bottom(),
    ),
    SlashCommand(
        "find", "find text in the transcript (Ctrl+F)", "TEXT", hosts=APP_ONLY, request=lambda a: rq.Find(a)
    ),
    SlashCommand(
        "bg",
        "start a background session from this session's settings (`wyckoff ps` lists it)",
        "PROMPT",
        hosts=APP_ONLY,
        request=lambda a: (
            rq.Background(a) if a else rq.Invalid("bg", "/bg needs a PROMPT: what the session should do")
        ),
    ),
    SlashCommand(
        "agents",
        "the live list of this project's sessions and sub-agents (Ctrl+B)",
        hosts=APP_ONLY,
        request=_no_argument("agents", rq.Agents),
    ),
    SlashCommand("quit", "leave Wyckoff", hosts=APP_ONLY, request=lambda _: rq.Quit()),
)

BY_NAME = {command.name: command for command in COMMANDS}


def offered_by(host: str) -> list[SlashCommand]:
    """The built-in commands `host` offers (ACP advertises these)."""
    return [command for command in COMMANDS if host in command.hosts]


def split(text: str) -> tuple[str, str] | None:
    """`/model openai:gpt-5` → ("model", "openai:gpt-5"); None if not `/name ...`."""
    if not text.startswith("/") or len(text) < 2 or text[1].isspace():
        return None
    name, _, rest = text[1:].partition(" ")
    return name.strip(), rest.strip()


def parse(text: str, prompt_commands: Container[str] = ()) -> rq.Request | None:
    """Slash-command text as a request; None when `text` names no command.
    `prompt_commands`: the names that run as a `PromptCommand` instead of a built-in
    (custom commands, and a built-in's name listed in `commands.prefer`)."""
    parts = split(text)
    if parts is None:
        return None
    name, argument = parts
    if name in prompt_commands:
        return rq.PromptCommand(name, argument)
    command = BY_NAME.get(name.lower())
    if command is None or command.request is None:
        return None
    return command.request(argument)


def complete(prefix: str) -> list[SlashCommand]:
    """Commands whose name starts with `prefix` (without the slash)."""
    prefix = prefix.lower()
    return [c for c in COMMANDS if c.name.startswith(prefix)]
