"""The status bar and `/cost` at common widths (issue 28).

At 80×24 with MCP connected the permission mode disappeared from the status bar, and
at 120 columns the tokens and the cache went; `/cost` cut its numbers at 80 columns
(`19,3…`). Now the bar shortens its segments in `SHORTEN_ORDER` (never the state, the
mode or the cost), and `/cost` is a grid when every column keeps its longest word, else
stacked: no digit is ever cut. Snapshots at 80×24 and 120×40 show both.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.pilot import Pilot

from tests.tui.support import make_app
from wyckoff_cli.core import events as ev
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.status import SHORTEN_ORDER, StatusModel
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.widgets.command_table import CommandTable
from wyckoff_cli.tui.widgets.status_bar import StatusBar, render_status

MODEL = "anthropic:claude-sonnet-4-5"
OTHER = "openai:gpt-5-mini"


def price(_model: str, usage: ev.UsageReported) -> tuple[float, float]:
    return usage.input_tokens * 3e-6 + usage.output_tokens * 15e-6, usage.cache_read_tokens * 2.7e-6


def working_status(mcp: str = "MCP 2/2") -> StatusModel:
    """A session an hour in: two models, cache hits, MCP servers connected."""
    status = StatusModel(model=MODEL, mode="auto-edit", context_window=200_000, price=price)
    status.mcp = mcp
    status.observe(ev.UsageReported(MODEL, 19_345_678, 123_456, 9_876_543, 1_234_567))
    status.observe(ev.UsageReported(OTHER, 1_345, 12_456, 0, 0))
    return status


def shown_segments(text: str, status: StatusModel) -> dict[str, str]:
    """Which segments a rendered bar shows, in which form."""
    parts = text.split(" │ ")
    found: dict[str, str] = {}
    for name, forms in status.segment_forms():
        for form in forms:
            if form in parts:
                found[name] = form
                break
    return found


# Terminal widths and the text width the bar has there (one cell of padding each side).
@pytest.mark.parametrize("columns", [200, 160, 120, 100, 80, 60, 50])
def test_the_state_mode_and_cost_always_stay(columns: int) -> None:
    status = working_status()
    status.state = "running run_shell"
    shown = shown_segments(render_status(status, columns - 2).plain, status)
    assert {"state", "mode", "cost"} <= set(shown), (columns, shown)


def test_at_120_columns_tokens_and_the_cache_rate_stay_and_at_80_the_mode_with_mcp() -> None:
    status = working_status()
    wide = render_status(status, 118).plain
    shown = shown_segments(wide, status)
    assert {"tokens", "cache", "mcp", "context", "model", "mode"} <= set(shown), wide
    assert shown["cache"] == "cache 51%"  # shortened first: the rate without the token counts
    narrow = render_status(status, 78).plain
    shown = shown_segments(narrow, status)
    assert shown["mode"] == "auto-edit" and shown["model"] == "claude-sonnet-4-5", narrow
    assert len(narrow) <= 78


def test_segments_shorten_in_the_documented_order() -> None:
    """Narrowing the bar one cell at a time, each segment's form only ever gets
    shorter or goes, and the segments go in `SHORTEN_ORDER`'s order."""
    status = working_status()
    status.background_running = 2
    status.per_agent["explore"] = status.per_model[OTHER]
    names = [name for name, _ in status.segment_forms()]
    level = {name: 0 for name in names}
    gone: list[str] = []
    for width in range(400, 20, -1):
        shown = shown_segments(render_status(status, width).plain, status)
        for name in names:
            forms = dict(status.segment_forms())[name]
            now = forms.index(shown[name]) if name in shown else len(forms)
            assert now >= level[name], (width, name)
            if now == len(forms) and level[name] < len(forms):
                gone.append(name)
            level[name] = now
    dropped_order = [name for name, form in SHORTEN_ORDER if form is None]
    assert gone == [name for name in dropped_order if name in gone]
    assert {"state", "mode", "cost"}.isdisjoint(gone)


# ---------------------------------------------------------------------- /cost


def cost_output(status: StatusModel) -> ev.CommandOutput:
    from wyckoff_cli.session.status import totals_row

    rows = [totals_row(model, totals) for model, totals in status.per_model.items()]
    columns = [
        "model",
        "calls",
        "input",
        "output",
        "cache read",
        "cache write",
        "searches",
        "cost",
        "cache saved",
    ]
    return ev.CommandOutput("cost", title="This session", columns=columns, rows=rows)


def rendered(renderable: Any, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None)
    console.print(renderable)
    return console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("width", [60, 80, 120])
def test_no_digit_of_cost_is_cut(width: int) -> None:
    output = cost_output(working_status())
    text = rendered(CommandTable(output), width)
    assert "…" not in text
    for row in output.rows:
        for cell in row:
            assert cell in text, (width, cell, text)
    assert all(len(line) <= width for line in text.splitlines())


def test_cost_is_a_grid_when_it_fits_and_stacked_when_not() -> None:
    output = cost_output(working_status())
    assert "┃" in rendered(CommandTable(output), 160)  # the grid's heading rule
    stacked = rendered(CommandTable(output), 80)
    assert "┃" not in stacked and "cache write" in stacked


async def test_cost_re_lays_itself_out_when_the_terminal_narrows(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        screen.status.observe(ev.UsageReported(MODEL, 19_345_678, 123_456, 9_876_543, 1_234_567))
        outputs = [e async for e in app.controller.handle(rq.Cost())]
        screen.show_output(outputs[0])  # type: ignore[arg-type]
        await pilot.pause()
        table = screen.query(".command-output").last()
        assert "┃" in "\n".join(s.text for s in table.render_lines(table.region.reset_offset))
        await pilot.resize_terminal(80, 40)
        for _ in range(50):
            await pilot.pause()
            lines = "\n".join(s.text for s in table.render_lines(table.region.reset_offset))
            if "┃" not in lines:
                break
        assert "┃" not in lines and "19,345,678" in lines and "…" not in lines


# ---------------------------------------------------------------------- snapshots


def status_and_cost_app() -> Any:
    app, _ = make_app(Path("/home/dev/project"), [], [])
    return app


async def show_status_and_cost(pilot: Pilot[None]) -> None:
    screen = pilot.app.screen
    assert isinstance(screen, ChatScreen)
    status = screen.status
    status.model, status.mode, status.mcp, status.price = MODEL, "auto-edit", "MCP 2/2", price
    status.observe(ev.UsageReported(MODEL, 19_345_678, 123_456, 9_876_543, 1_234_567))
    status.observe(ev.UsageReported(OTHER, 1_345, 12_456, 0, 0))
    screen.show_output(cost_output(status))
    screen.query_one(StatusBar).refresh_status()
    for _ in range(5):
        await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_status_bar_and_cost_snapshot(snap_compare: Any, monkeypatch: Any, size: tuple[int, int]) -> None:
    monkeypatch.setattr(StatusBar, "spin", False)
    assert snap_compare(status_and_cost_app(), terminal_size=size, run_before=show_status_and_cost)
