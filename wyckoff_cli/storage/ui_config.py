"""`[ui]`: how the app draws on the terminal (docs/CONFIG.md, docs/TUI.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass
class UIConfig:
    """`[ui]`: the terminal app's display."""

    hyperlinks: Literal["auto", "on", "off"] = field(
        default="auto",
        metadata={
            "doc": "Links in answers as clickable OSC 8 hyperlinks (`on`), or as `text (url)` (`off`); "
            "`auto` uses hyperlinks in terminals known to show them, and not inside tmux or screen."
        },
    )
