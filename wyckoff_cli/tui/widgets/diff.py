"""A unified diff as coloured text: additions green, removals red, hunks cyan."""

from __future__ import annotations

from rich.text import Text

from wyckoff_cli.tui.literal import visible


def render_diff(diff: str) -> Text:
    text = Text()
    for number, line in enumerate(visible(diff).rstrip("\n").splitlines()):
        if number:
            text.append("\n")
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("@@"):
            style = "cyan"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        else:
            style = "dim"
        text.append(line, style=style)
    return text
