"""The typed `[hooks]` and `[commands]` tables of the configuration (docs/CONFIG.md,
docs/EXTENDING.md), in Claude Code's shape; `storage/config.py` validates them with
the rest (file and line on an error)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


def _doc(text: str, **kwargs: Any) -> Any:
    return field(metadata={"doc": text}, **kwargs)


@dataclass
class HookCommand:
    """One hook: `{ type = "command", command = "…", timeout = 30 }` (Claude Code's shape)."""

    command: str = _doc("The shell command run with the event as JSON on standard input.")
    type: Literal["command"] = _doc('The kind of hook; only `"command"` is supported.', default="command")
    timeout: float = _doc("Seconds before the hook is killed (a non-blocking error).", default=60.0)


@dataclass
class HookMatcher:
    """`[[hooks.EVENT]]`: the hooks run for the events `matcher` selects."""

    matcher: str = _doc(
        "Tool name or regular expression (`run_shell`, `Edit|Write`, `mcp__github__.*`); "
        "empty or `*` matches everything. For SessionStart the source, for PreCompact the trigger.",
        default="",
    )
    hooks: list[HookCommand] = _doc("The commands to run.", default_factory=list)


@dataclass
class HooksConfig:
    """`[hooks]`: user hooks by event, as in Claude Code's `settings.json` (docs/EXTENDING.md)."""

    PreToolUse: list[HookMatcher] = _doc(
        "Before a tool call; may allow, deny, ask or change it.", default_factory=list
    )
    PostToolUse: list[HookMatcher] = _doc(
        "After a tool call succeeded; may add to its result.", default_factory=list
    )
    UserPromptSubmit: list[HookMatcher] = _doc(
        "Before a message is sent; may add context or block it.", default_factory=list
    )
    Stop: list[HookMatcher] = _doc(
        "When the model is about to end its turn; may make it go on.", default_factory=list
    )
    SubagentStop: list[HookMatcher] = _doc("When a sub-agent is about to end its turn.", default_factory=list)
    SessionStart: list[HookMatcher] = _doc(
        "When a session starts or is resumed; may add context.", default_factory=list
    )
    SessionEnd: list[HookMatcher] = _doc("When a session ends.", default_factory=list)
    PreCompact: list[HookMatcher] = _doc("Before the conversation is compacted.", default_factory=list)
    Notification: list[HookMatcher] = _doc("When Wyckoff needs the user (an approval).", default_factory=list)
    PermissionRequest: list[HookMatcher] = _doc(
        "When Wyckoff would ask for an approval; may answer it (allow or deny).", default_factory=list
    )
    allowed_urls: list[str] = _doc(
        "URL patterns (`*` wildcards, e.g. `http://127.0.0.1:*/*`) that `http` hooks may POST to; "
        "read from your own config.toml only. Empty: no http hook runs.",
        default_factory=list,
    )


@dataclass
class CommandsConfig:
    """`[commands]`: custom slash commands (docs/EXTENDING.md)."""

    prefer: list[str] = _doc(
        "Names of custom commands that win over the built-in command of the same name.",
        default_factory=list,
    )


@dataclass
class CompatConfig:
    """`[compat]`: reading a Claude Code setup (docs/EXTENDING.md, "Coming from Claude Code")."""

    claude_home: bool = _doc(
        "Read `~/.claude/` as the user level: `CLAUDE.md` beside your AGENTS.md, the hooks of "
        "`settings.json`, and `commands/`, `agents/`, `skills/` after Wyckoff's own.",
        default=True,
    )


__all__ = ["CommandsConfig", "CompatConfig", "HookCommand", "HookMatcher", "HooksConfig"]
