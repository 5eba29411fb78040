"""A command's table (`/cost`, `/skills`, `/hooks`) that never cuts a cell.

Rendered at the width it is given (so it re-lays itself out when the terminal is
resized):

- **a grid** when every column can have at least its longest word: text wraps inside
  its column, numbers are never split;
- **stacked** otherwise: one record per block, its first cell as a bold heading, then
  `heading value` pairs, as many pairs side by side as fit, the values right-aligned.
  A value wider than the whole line folds onto the next line; nothing is ever
  replaced by `…`.

Every cell is shown literally (`tui/literal.py`): a model name or a description with
brackets is not markup. For `/cost` the last row (the total) is bold.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from wyckoff_cli.core import events as ev
from wyckoff_cli.tui.literal import literal

PAIR_GAP = 3  # cells between two heading-value pairs on one line


class CommandTable:
    def __init__(self, output: ev.CommandOutput) -> None:
        self.title = output.title
        self.columns = list(output.columns)
        self.rows = [list(row) for row in output.rows]
        self.bold_last = output.command == "cost"  # its last row is the total

    def _row_style(self, number: int) -> str:
        return "bold" if self.bold_last and number == len(self.rows) - 1 else ""

    def grid(self) -> Table:
        table = Table(
            title=literal(self.title) if self.title else None, title_justify="left", show_edge=False
        )
        for number, column in enumerate(self.columns):
            table.add_column(
                literal(column),
                justify="left" if number == 0 else "right",
                overflow="fold",
                no_wrap=number == 0,
            )
        for number, row in enumerate(self.rows):
            table.add_row(*(literal(cell) for cell in row), style=self._row_style(number) or None)
        return table

    def stacked(self, width: int) -> RenderableType:
        parts: list[RenderableType] = []
        if self.title:
            parts.append(literal(self.title, style="italic"))
        heading_width = max((len(c) for c in self.columns[1:]), default=0)
        for number, row in enumerate(self.rows):
            style = self._row_style(number)
            if parts:
                parts.append(Text(""))
            parts.append(literal(row[0] if row else "", style="bold"))
            pairs = [(c, v) for c, v in zip(self.columns[1:], row[1:], strict=False) if v]
            if not pairs:
                continue
            value_width = max(len(v) for _, v in pairs)
            pair_width = heading_width + 1 + value_width
            per_line = max(1, min(len(pairs), (width + PAIR_GAP) // (pair_width + PAIR_GAP)))
            grid = Table.grid(padding=(0, 0))
            for index in range(per_line):
                if index:
                    grid.add_column(width=PAIR_GAP)
                grid.add_column(style="dim", no_wrap=True, width=min(heading_width + 1, width))
                grid.add_column(justify="right", overflow="fold", min_width=1)
            for start in range(0, len(pairs), per_line):
                cells: list[RenderableType] = []
                for index, (heading, value) in enumerate(pairs[start : start + per_line]):
                    if index:
                        cells.append("")
                    cells += [literal(heading + " "), literal(value, style=style)]
                grid.add_row(*cells)
            parts.append(grid)
        return Group(*parts)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        grid = self.grid()
        needed = Measurement.get(console, options.update_width(max(width, 10_000)), grid).minimum
        yield grid if needed <= width else self.stacked(width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, options.max_width)
