"""Markdown tables keep every cell: wrapped within the width, or stacked as records.

Rich's own table element cut the longest words with an ellipsis (`notificatio…`,
`allow-pass…`) at 80 columns; these tests failed on it."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from tests.waiting import until
from wyckoff_cli.tui.widgets import markdown_stream
from wyckoff_cli.tui.widgets.markdown_render import render_markdown
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.markdown_table import MIN_COLUMN, WHOLE_WORD, column_widths
from wyckoff_cli.tui.widgets.transcript import Transcript

HEADINGS = ["Name", "Description", "Default", "Type", "Since", "Notes", "Example"]
ROWS = [
    [
        "hyperlinks",
        "Whether links are emitted as OSC 8 escape sequences to the terminal",
        "auto",
        "string",
        "0.4.0",
        "Inside tmux this needs allow-passthrough",
        '`hyperlinks = "on"`',
    ],
    [
        "notifications",
        "How the app tells you a turn finished while the terminal is not focused",
        "auto",
        "string",
        "0.4.0",
        "bell is the fallback everywhere",
        '`notifications = "bell"`',
    ],
    [
        "a_really_long_configuration_identifier_that_cannot_fit",
        "Short",
        "none",
        "int",
        "0.5.0",
        "Its name is longer than any column can be at 80 columns",
        "`x = 1`",
    ],
]
WIDE = 12  # columns of the table that cannot be a readable grid at 80 columns


def _table(headings: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headings) + " |", "|" + "---|" * len(headings)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _chars(texts: list[str]) -> Counter[str]:
    """Every visible character, counted (so nothing cut or duplicated goes unnoticed)."""
    return Counter(ch for text in texts for ch in text.replace("`", "") if not ch.isspace())


def _shown(lines: list[str]) -> Counter[str]:
    return Counter(ch for line in lines for ch in line if not ch.isspace() and ch != "─")


def _render(source: str, width: int) -> list[str]:
    console = Console(width=width, color_system=None)
    strips = render_markdown(source, width, console)
    assert all(strip.cell_length == width for strip in strips)
    return [strip.text for strip in strips]


@pytest.mark.parametrize("width", [80, 120])
def test_a_wide_table_keeps_every_character_of_every_cell(width: int) -> None:
    lines = _render(_table(HEADINGS, ROWS), width)
    assert not any("…" in line for line in lines)
    assert _shown(lines) == _chars(HEADINGS + [cell for row in ROWS for cell in row])
    assert lines[0].split() == HEADINGS  # still a grid: the headings on one line


def test_at_120_columns_words_are_whole_and_no_row_repeats_its_headings() -> None:
    lines = _render(_table(HEADINGS, ROWS[:2]), 120)
    words = {word for line in lines for word in line.split()}
    for cell in [cell for row in ROWS[:2] for cell in row]:
        assert set(cell.replace("`", "").split()) <= words, cell


def test_too_many_columns_for_a_grid_are_stacked_as_records() -> None:
    headings = [f"Column{index}" for index in range(WIDE)]
    rows = [[f"value-{row}-{index}-padded" for index in range(WIDE)] for row in range(2)]
    lines = _render(_table(headings, rows), 80)
    assert _shown(lines) == _chars(headings * 2 + [cell for row in rows for cell in row])
    # Each cell on its own line, beside its heading; the records apart by a rule.
    assert [line.split() for line in lines[:2]] == [
        ["Column0", "value-0-0-padded"],
        ["Column1", "value-0-1-padded"],
    ]
    assert sum(1 for line in lines if line.strip() and set(line.strip()) == {"─"}) == 1
    # The same table has room for a grid at 240 columns.
    assert _render(_table(headings, rows), 240)[0].split() == headings


def test_a_narrow_table_is_left_as_rich_draws_it() -> None:
    lines = _render("| name | value |\n|---|---|\n| 1 | 2 |", 80)
    assert [line.rstrip() for line in lines] == [" name  value", " ───────────", " 1     2"]


def test_alignment_and_inline_styles_survive() -> None:
    console = Console(width=40, color_system="truecolor", force_terminal=True)
    strips = render_markdown("| left | right |\n|:---|---:|\n| **bold** | 7 |", 40, console)
    texts = [strip.text.rstrip() for strip in strips]
    assert texts[2].endswith("    7")  # right-aligned under "right"
    assert any(segment.text == "bold" and segment.style and segment.style.bold for segment in strips[2])


def test_column_widths_give_each_column_its_longest_word_then_share_the_rest() -> None:
    columns = [["id", "1"], ["description", "a long description that must wrap somewhere"], ["ok", "yes"]]
    # Fits: natural widths.
    assert column_widths(columns, 200) == [2, 43, 3]
    # 40 cells: 6 for the edges and dividers, each column at least its longest word,
    # the rest to the column with text left to wrap.
    assert column_widths(columns, 40) == [2, 29, 3]


def test_one_long_word_does_not_squeeze_the_prose_beside_it() -> None:
    columns = [["name", "a_really_long_configuration_identifier"], ["what", "word " * 40]]
    # 60 cells of text: the identifier's 38 would leave the prose 22; up front it gets an
    # equal share (30), then a share of the rest by the text each column has to wrap.
    widths = column_widths(columns, 64)
    assert widths is not None and sum(widths) == 60
    assert widths == [31, 29]
    # Narrower, the identifier still gets WHOLE_WORD up front (more than an equal share).
    narrow = column_widths(columns, 40)
    assert narrow is not None and narrow[0] >= WHOLE_WORD


def test_column_widths_cap_the_longest_words_equally_then_give_up() -> None:
    columns = [["a" * 30], ["b" * 30], ["c" * 4]]
    assert column_widths(columns, 50) == [20, 20, 4]  # 44 cells of text, the long words fold
    assert column_widths(columns, 2 * 3 + 2 * MIN_COLUMN + 4) == [MIN_COLUMN, MIN_COLUMN, 4]
    assert column_widths(columns, 2 * 3 + 2 * MIN_COLUMN + 3) is None  # stacked
    assert column_widths([], 80) == []


class _TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript()


async def _settle(pilot: Pilot[None], view: MarkdownStreamView) -> None:
    await until(pilot, lambda: view.is_settled, what="the view to settle")


@pytest.mark.parametrize("width", [80, 120])
async def test_a_streamed_table_shows_every_cell_and_is_rendered_once(
    width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    renders: Counter[str] = Counter()
    real = markdown_stream.render_markdown

    def spy(*args: Any) -> Any:
        renders[args[0]] += 1
        return real(*args)

    monkeypatch.setattr(markdown_stream, "render_markdown", spy)
    table = _table(HEADINGS, ROWS)
    answer = f"Here are the settings:\n\n{table}\n\nThat is all.\n"
    app = _TableApp()
    async with app.run_test(size=(width + 2, 40)) as pilot:  # the transcript's scrollbar gutter
        view = MarkdownStreamView()
        await app.query_one(Transcript).mount(view)
        for start in range(0, len(answer), 5):
            view.append(answer[start : start + 5])
            if start % 50 == 0:
                await until(pilot, lambda: not view._dirty)  # flushed what came so far
        view.finish()
        await _settle(pilot, view)
        assert view.size.width == width
        lines = view.rendered_lines()
    shown = _shown(lines) - _chars(["Here are the settings:", "That is all."])
    assert shown == _chars(HEADINGS + [cell for row in ROWS for cell in row])
    assert renders[table] == 1  # finished once, at the one width: never again


_WORD = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,:;=+-/()!?",
    min_size=1,
    max_size=30,
)
_CELL = st.lists(_WORD, min_size=0, max_size=12).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(
    columns=st.integers(min_value=1, max_value=14),
    data=st.data(),
    width=st.integers(min_value=10, max_value=160),
)
def test_no_table_at_any_width_loses_a_character(columns: int, data: st.DataObject, width: int) -> None:
    headings = data.draw(st.lists(_WORD, min_size=columns, max_size=columns))
    rows = data.draw(st.lists(st.lists(_CELL, min_size=columns, max_size=columns), min_size=0, max_size=4))
    lines = _render(_table(headings, rows), width)
    assert not any("…" in line for line in lines)
    expected = headings + [cell for row in rows for cell in row]
    shown = _shown(lines)
    if shown != _chars(expected):  # stacked: each heading once per record (at least once)
        assert shown == _chars(headings * max(1, len(rows)) + [cell for row in rows for cell in row])


def test_a_stacked_table_without_rows_still_shows_its_headings() -> None:
    headings = [f"Heading{index}" for index in range(WIDE)]
    lines = _render(_table(headings, []), 60)
    assert _shown(lines) == _chars(headings)
