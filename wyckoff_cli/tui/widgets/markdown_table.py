"""Markdown tables that never lose a cell: wrapped to the width, or stacked as records.

Rich's own table element lets Rich shrink the columns, and when the longest words do
not fit it cuts them with an ellipsis (`notificatio…`), even at 120 columns. Here the
widths are computed first (`column_widths`):

1. every column gets its natural width when the whole table fits;
2. otherwise every column gets at least its longest word, up to `WHOLE_WORD` cells or
   an equal share of the width (so one long identifier cannot squeeze the prose beside
   it), and the room left over goes to the columns in proportion to the text they
   still have to wrap; a word longer than its column folds onto the next line, never
   cut;
3. when even the longest words do not fit, the longest ones share what there is
   equally;
4. when that share would fall under `MIN_COLUMN` cells, a grid would be unreadable:
   the table is shown *stacked*, one record per row — each cell on its own line with
   its column's heading beside it, records separated by a rule — see `stacked_table`.

A transcript entry is lines cached per width, painted with the line API; a scrolling
region per table would need its own focus and would hide the columns scrolled off,
so stacking is how a table too wide for the screen stays readable. docs/TUI.md.
"""

from __future__ import annotations

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markdown import TableElement
from rich.padding import Padding
from rich.table import Column, Table
from rich.text import Text

__all__ = ["MIN_COLUMN", "WHOLE_WORD", "column_widths", "stacked_table"]

MIN_COLUMN = 8
"""Narrowest share a column with long words may get before the table is stacked."""
WHOLE_WORD = 16
"""Words up to this long are kept whole when the longest words of all columns fit."""
_EDGE = 2
"""Cells each column costs beyond its text: Rich's SIMPLE box with `show_edge`,
`pad_edge=False`, `collapse_padding` and padding (0, 1) gives the table one edge cell
on each side, one divider between columns and one padding cell right of every
column but the last: 2 + (n - 1) + (n - 1) = 2n."""


def _natural(text: str) -> int:
    return max((cell_len(line) for line in text.split("\n")), default=0)


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def column_widths(columns: list[list[str]], width: int) -> list[int] | None:
    """Text widths for a table's columns (each a list of cell texts, heading first)
    within `width` cells, or None when the table should be stacked instead."""
    if not columns:
        return []
    room = width - _EDGE * len(columns)
    natural = [max(1, max(map(_natural, cells), default=0)) for cells in columns]
    if sum(natural) <= room:
        return natural
    words = [
        max(1, min(n, max(map(_longest_word, cells), default=0)))
        for n, cells in zip(natural, columns, strict=True)
    ]
    cap = _equal_cap(words, room)  # what the longest words may have so that all fit
    if cap < MIN_COLUMN:
        return None
    # Up front, no column's longest word gets more than an equal share of the width or
    # WHOLE_WORD cells, whichever is more (one long identifier would leave the prose
    # beside it a sliver); the share-out gives it more if it has the text for it.
    fair = min(cap, max(WHOLE_WORD, room // len(columns)))
    floor = [min(word, fair) for word in words]
    return _share_out(floor, natural, room - sum(floor))


def _equal_cap(words: list[int], room: int) -> int:
    """The largest cap with sum(min(word, cap)) <= room (0 when not even 1 fits)."""
    low, high = 0, max(words)
    while low < high:
        middle = (low + high + 1) // 2
        if sum(min(word, middle) for word in words) <= room:
            low = middle
        else:
            high = middle - 1
    return low


def _share_out(floor: list[int], natural: list[int], extra: int) -> list[int]:
    """Add `extra` cells to `floor` in proportion to what each column still lacks of
    its natural width (largest remainders first), never past the natural width."""
    wants = [n - f for f, n in zip(floor, natural, strict=True)]
    total = sum(wants)
    if extra <= 0 or total <= 0:
        return list(floor)
    extra = min(extra, total)
    shares = [extra * want / total for want in wants]
    widths = [f + int(share) for f, share in zip(floor, shares, strict=True)]
    left = extra - sum(int(share) for share in shares)
    by_remainder = sorted(range(len(floor)), key=lambda i: shares[i] - int(shares[i]), reverse=True)
    for index in by_remainder[:left]:
        widths[index] += 1
    return widths


def stacked_table(headings: list[Text], rows: list[list[Text]], width: int) -> RenderableType:
    """Each row as a record: `heading  cell` lines, records separated by a rule."""
    longest = max((cell_len(h.plain) for h in headings), default=0)
    label = max(1, min(longest, max(MIN_COLUMN, width // 3), (width - 4) // 2))
    records: list[RenderableType] = []
    rule = Text("─" * max(1, width - 2), style="markdown.table.border")
    for index, row in enumerate(rows or [[Text("")] * len(headings)]):  # no rows: the headings
        if index:
            records.append(rule)
        grid = Table.grid(
            Column(width=label, overflow="fold"),
            Column(overflow="fold", ratio=1),
            padding=(0, 0, 0, 2),
            pad_edge=False,
            expand=True,
        )
        for heading, cell in zip(headings, row, strict=True):
            grid.add_row(heading, cell)
        records.append(grid)
    return Padding(Group(*records), (0, 1))


class WrappingTable(TableElement):
    """The `table_open` element: a grid whose cells wrap, or records (module docstring)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        headings: list[Text] = []
        if self.header is not None and self.header.row is not None:
            for cell in self.header.row.cells:
                heading = cell.content.copy()
                heading.stylize("markdown.table.header")
                headings.append(heading)
        rows = [[cell.content for cell in row.cells] for row in self.body.rows] if self.body else []
        count = max([len(headings), *map(len, rows)])
        headings += [Text("")] * (count - len(headings))
        rows = [row + [Text("")] * (count - len(row)) for row in rows]
        columns = [[headings[i].plain, *(row[i].plain for row in rows)] for i in range(count)]
        widths = column_widths(columns, options.max_width)
        if widths is None:
            yield stacked_table(headings, rows, options.max_width)
            return
        table = Table(
            box=box.SIMPLE,
            pad_edge=False,
            style="markdown.table.border",
            show_edge=True,
            collapse_padding=True,
        )
        for heading, text_width in zip(headings, widths, strict=True):
            table.add_column(heading, width=text_width, overflow="fold")
        for row in rows:
            table.add_row(*row)
        yield table
