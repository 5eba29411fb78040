"""Slash commands: declared once, with a description, here.

`/help` and the input's completion both read the controller's `slash_commands`:
these built-ins, then the custom commands (session/custom_commands.py) with the
folder they came from.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str
    description: str
    argument: str = ""  # e.g. "[ID]" — shown in help and completion
    source: str = ""  # a custom command's origin: "project", "project (.claude)", "user"

    @property
    def usage(self) -> str:
        where = f" ({self.source})" if self.source else ""
        return f"/{self.name}{where} {self.argument}".rstrip()


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("help", "show keys and commands"),
    SlashCommand("model", "show or switch the model", "[ID]"),
    SlashCommand("mode", "show or set the permission mode (default, plan, auto-edit, yolo)", "[MODE]"),
    SlashCommand("compact", "summarise the older conversation now, optionally focused", "[focus]"),
    SlashCommand("clear", "start a new session"),
    SlashCommand("resume", "pick an earlier session of this project"),
    SlashCommand("cost", "tokens and cost of this session by model, and what the cache saved"),
    SlashCommand("memory", "list what Wyckoff remembers", "[search]"),
    SlashCommand(
        "permissions", "list the allow and deny rules; trust the project's", "[remove RULE | trust]"
    ),
    SlashCommand(
        "mcp",
        "MCP servers and their tools; restart one, trust the project's",
        "[restart NAME | trust [NAME]]",
    ),
    SlashCommand("lsp", "language servers: languages, state, files open, last error"),
    SlashCommand("init", "ask the model to write AGENTS.md for this project"),
    SlashCommand("export", "export this session as Markdown", "[FILE]"),
    SlashCommand("skills", "list the skills and what each costs when loaded"),
    SlashCommand("hooks", "list the user hooks with their source and trust", "[trust]"),
    SlashCommand("rewind", "go back to an earlier message: code, conversation or both (Esc Esc)"),
    SlashCommand("undo", "restore the files as they were before the last round that changed them"),
    SlashCommand("redo", "bring back what the last /undo removed"),
    SlashCommand("diff", "every change this session made to the work tree"),
    SlashCommand("top", "jump to the top of the transcript (Ctrl+Home)"),
    SlashCommand("bottom", "jump to the end of the transcript and follow it (Ctrl+End)"),
    SlashCommand("find", "find text in the transcript (Ctrl+F)", "TEXT"),
    SlashCommand("quit", "leave Wyckoff"),
)

BY_NAME = {command.name: command for command in COMMANDS}


def parse_command(text: str) -> tuple[SlashCommand, str] | None:
    """`/model openai:gpt-5` → (the model command, "openai:gpt-5"); None if not a command."""
    if not text.startswith("/"):
        return None
    name, _, rest = text[1:].partition(" ")
    command = BY_NAME.get(name.strip().lower())
    return (command, rest.strip()) if command else None


def complete(prefix: str) -> list[SlashCommand]:
    """Commands whose name starts with `prefix` (without the slash)."""
    prefix = prefix.lower()
    return [c for c in COMMANDS if c.name.startswith(prefix)]
