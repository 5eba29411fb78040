"""`[ui]`: how the app draws on the terminal and notifies (docs/CONFIG.md, docs/TUI.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass
class UIConfig:
    """`[ui]`: the terminal app's display and notifications."""

    hyperlinks: Literal["auto", "on", "off"] = field(
        default="auto",
        metadata={
            "doc": "Links in answers as clickable OSC 8 hyperlinks (`on`), or as `text (url)` (`off`); "
            "`auto` uses hyperlinks in terminals known to show them, and not inside tmux or screen."
        },
    )
    status_line: str = field(
        default="",
        metadata={
            "doc": "A command whose first line of output is shown in the status bar; it gets Claude Code's "
            'status-line JSON on standard input (docs/TUI.md, "Status line"). Not from a project\'s config.',
        },
    )
    notifications: Literal["auto", "bell", "off"] = field(
        default="auto",
        metadata={
            "doc": "Tell you when an approval waits or a turn ends while the terminal is not focused: "
            "`auto` (a desktop notification where the terminal supports one, else the bell), `bell` or `off`."
        },
    )
