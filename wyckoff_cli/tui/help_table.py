"""What `/help` shows: the slash commands, then the keys."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from rich.table import Table

from wyckoff_cli.tui.literal import literal


class CommandHelp(Protocol):
    @property
    def usage(self) -> str: ...
    @property
    def description(self) -> str: ...


KEYS = (
    ("Enter", "send"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Ctrl+G", "edit the input (in a dialog: the call being edited) in $VISUAL / $EDITOR"),
    ("Up / Down", "input history (Up on an empty prompt edits a queued message)"),
    ("Esc", "interrupt the turn"),
    ("Ctrl+C", "clear the input, or interrupt; twice quits"),
    ("Ctrl+D", "quit on an empty input"),
    ("!command", "run a command in the workspace shell; its output goes with your next message"),
    ("Ctrl+V", "attach the clipboard's image (or paste an image's path); Backspace on empty drops it"),
    ("Shift+Tab", "cycle permission modes"),
    ("Ctrl+B", "the agents view: background sessions and their sub-agents (also /agents)"),
    ("Ctrl+O", "show / hide all thinking"),
    ("PageUp / PageDown", "scroll the transcript"),
    ("Ctrl+Home / Ctrl+End", "top / bottom of the transcript (also /top, /bottom)"),
    ("Ctrl+F", "find in the transcript (also /find TEXT); Enter next, Shift+Enter previous"),
    ("Tab", "next widget (Enter expands a tool call or thinking; typing or Esc goes back to the prompt)"),
)


def help_table(commands: Iterable[CommandHelp], more: Iterable[tuple[str, str]] = ()) -> Table:
    """The commands (a custom command's description is shown literally), `more` rows (the
    agents and skills: session/extensions.py help_rows), the keys and `@path`."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    for command in commands:
        table.add_row(literal(command.usage), literal(command.description))
    rows = list(more)
    if rows:
        table.add_row("", "")
    for name, what in rows:
        table.add_row(literal(name), literal(what))
    table.add_row("", "")
    for key, what in KEYS:
        table.add_row(key, what)
    table.add_row("@path", "mention a file: the model must read it")
    return table
