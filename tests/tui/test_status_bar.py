"""The status bar: cost is never dropped, unpriced models say so, and a busy turn shows
a spinner with the elapsed time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat, send, settle
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.status import StatusModel
from wyckoff_cli.tui.widgets.status_bar import SPINNER, StatusBar, render_status


def busy_model(priced: bool) -> StatusModel:
    model = StatusModel(
        model="openai:some-very-long-model-name-for-the-test",
        mode="auto-edit",
        price=(lambda _m, u: (0.5, 0.1)) if priced else (lambda _m, u: None),
    )
    model.observe(ev.UsageReported(model.model, 1_234_567, 98_765, 1_000_000, 50_000))
    return model


def test_unpriced_models_say_cost_unknown_and_the_cost_stays_when_narrow() -> None:
    unpriced = busy_model(priced=False)
    wide = render_status(unpriced, 300).plain
    assert "cost unknown (set prices with `wyckoff model cost`)" in wide and "+?" not in wide
    for width in (120, 100, 80, 60):
        narrow = render_status(unpriced, width).plain
        assert "cost unknown" in narrow, (width, narrow)
    priced = busy_model(priced=True)
    assert "$0.5000 saved $0.1000" in render_status(priced, 60).plain


async def test_cost_table_says_unpriced_in_the_total_too(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [{"text": "hi", "usage": {"input_tokens": 10, "output_tokens": 5}}], [])
    app.controller.status.price = lambda _m, _u: None
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "hello")
        await settle(pilot, screen)
        events = [e async for e in app.controller.handle(rq.Cost())]
        output = events[0]
        assert isinstance(output, ev.CommandOutput)
        cost = output.columns.index("cost")
        assert output.rows[-1][cost] == "unpriced" and output.rows[0][cost] == "unpriced"


async def test_a_spinner_and_elapsed_time_while_waiting_for_the_first_token(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [[{"sleep": 1.5}, {"text": "late"}]], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "hello")
        bar = screen.query_one(StatusBar)
        await until(pilot, lambda: "thinking 1s" in bar.shown_text, observe=lambda: bar.shown_text)
        shown = bar.shown_text
        assert any(frame in shown for frame in SPINNER) and "thinking 1s" in shown, shown
        assert bar.render_line(0).text.strip() == shown.strip()  # the glyph is on screen
        await settle(pilot, screen)
        assert bar.busy_since is None and not any(frame in bar.shown_text for frame in SPINNER)


def test_a_first_call_whose_cache_writes_cost_more_shows_the_write_cost_not_a_negative_saving() -> None:
    model = StatusModel(
        model="anthropic:claude-sonnet-4-5", mode="default", price=lambda _m, u: (0.0123, -0.004)
    )
    model.observe(ev.UsageReported(model.model, 20_000, 100, 0, 19_000))
    text = model.cost_text()
    assert text == "$0.0123 cache writes +$0.0040"
    assert "$-" not in render_status(model, 300).plain


def test_cost_table_shows_the_cache_write_cost_not_a_negative_saving() -> None:
    from wyckoff_cli.session.info_requests import cost_output

    model = StatusModel(
        model="anthropic:claude-sonnet-4-5", mode="default", price=lambda _m, u: (0.0123, -0.004)
    )
    model.observe(ev.UsageReported(model.model, 20_000, 100, 0, 19_000))
    table = cost_output(model)
    assert isinstance(table, ev.CommandOutput) and table.columns[-1] == "cache saved"
    assert [row[-1] for row in table.rows] == ["writes +$0.0040", "writes +$0.0040"]  # the model, the total
    assert not any("$-" in cell for row in table.rows for cell in row)


async def test_the_spinner_repaints_the_bar_without_a_layout_pass(tmp_path: Path) -> None:
    # The bar is one line high and full width whatever it shows: a spinner frame that laid
    # out the screen cost a layout pass and a transcript repaint ten times a second.
    app, _ = make_app(tmp_path, [[{"sleep": 1.5}, {"text": "late"}]], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        bar = screen.query_one(StatusBar)
        await pilot.pause()
        layouts: list[bool] = []
        original = bar.refresh

        def spy(*regions: Any, **kwargs: Any) -> Any:
            layouts.append(bool(kwargs.get("layout")))
            return original(*regions, **kwargs)

        bar.refresh = spy  # type: ignore[method-assign]
        size = bar.size
        frames: set[str] = set()

        def spun() -> bool:
            frames.update(frame for frame in SPINNER if frame in bar.render_line(0).text)
            return len(frames) >= 3

        await send(pilot, "hello")
        await until(pilot, spun, observe=lambda: bar.shown_text)
        assert len(frames) >= 3 and len(layouts) >= 3
        assert not any(layouts), layouts
        assert bar.size == size and size.height == 1  # the frames never changed its size


async def test_within_a_second_the_spinner_turns_without_recomputing_the_bar(tmp_path: Path) -> None:
    # Ten frames a second while busy: the figures, the status line's payload and the
    # text layout are redone when the seconds change (or a figure does), not per glyph.
    app, _ = make_app(tmp_path, [[{"sleep": 2.5}, {"text": "late"}]], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        bar = screen.query_one(StatusBar)
        await pilot.pause()
        recomputed: list[str] = []
        original = bar.model.segments

        def counted() -> Any:
            recomputed.append(bar.shown_text)
            return original()

        bar.model.segments = counted  # type: ignore[method-assign]
        glyphs: list[str] = []

        def turned() -> bool:
            glyph = bar._glyph[1] if bar._glyph is not None else None
            if glyph is not None and (not glyphs or glyphs[-1] != glyph):
                glyphs.append(glyph)
            return len(glyphs) >= 12

        await send(pilot, "hello")
        await until(pilot, turned, observe=lambda: bar.shown_text)
        assert all(glyph in SPINNER for glyph in glyphs)
        assert any(glyph in bar.render_line(0).text for glyph in SPINNER)  # the glyph is on screen
        seconds = {text.split()[-1] for text in recomputed if text.split()[-1].endswith("s")}
        # 12 glyphs took at least a second: recomputed a few times (send, the seconds,
        # events), never once per glyph
        assert len(recomputed) < len(glyphs) - 4, (len(recomputed), len(glyphs), seconds)


async def test_a_spinner_frame_sends_the_terminal_its_cell_not_the_whole_bar(tmp_path: Path) -> None:
    from tests.tui.test_painted_equals_full_repaint import Terminal, differences

    app, _ = make_app(tmp_path, [[{"sleep": 2.5}, {"text": "late"}]], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        bar = screen.query_one(StatusBar)
        await pilot.pause()
        terminal = Terminal(app, SIZE)
        glyphs: list[str] = []

        def spun() -> bool:
            if bar._glyph is not None and (not glyphs or glyphs[-1] != bar._glyph[1]):
                glyphs.append(bar._glyph[1])
            return len(glyphs) >= 8

        await send(pilot, "hello")
        await until(pilot, spun, observe=lambda: bar.shown_text)
        row = bar.region.y

        def painted_row() -> str:
            return "".join(cell[0] for cell in terminal.cells()[row])

        glyph = lambda: bar._glyph[1] if bar._glyph is not None else "none"  # noqa: E731
        await until(pilot, lambda: glyph() in painted_row(), observe=painted_row)  # the frame is painted
        painted = terminal.cells()
        assert any(cell[0] in SPINNER for cell in painted[row])  # the glyph is on the terminal
        assert differences(painted, terminal.full_repaint()) == []
        # the spinner's frames alone were a few cells each, not the bar's row (~320 then)
        small = [size for size in terminal.sizes if size < bar.region.width]
        assert len(small) >= 5, terminal.sizes
