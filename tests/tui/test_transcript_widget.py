"""The transcript's line-API widgets in a tiny Textual app, driven by Pilot."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from rich.console import Console
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.geometry import Offset
from textual.pilot import Pilot
from textual.selection import Selection
from textual.strip import Strip

from tests.waiting import until
from wyckoff_cli.tui.markdown_blocks import split_blocks
from wyckoff_cli.tui.widgets import markdown_stream
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.transcript import RenderableView, Transcript

ANSWER = """\
## Plan

First we **read** the file, then we `parse` it and write a long enough paragraph to wrap \
at narrow widths, so that resizing the terminal changes how many lines it takes.

- one
- two

  still two

```python
def f(x):

    return x + 1
```

| a | b |
|---|---|
| 1 | 2 |

Done.
"""


class TranscriptApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript()

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)


async def _new_view(
    app: TranscriptApp, pilot: Pilot[None], view: MarkdownStreamView | None = None
) -> MarkdownStreamView:
    view = view or MarkdownStreamView()
    await app.transcript.mount(view)
    await pilot.pause()
    return view


async def _settle(pilot: Pilot[None], view: MarkdownStreamView) -> None:
    await until(pilot, lambda: view.is_settled, what="the view to settle")
    await pilot.pause()


async def _flushed(pilot: Pilot[None], view: MarkdownStreamView) -> None:
    """Wait until the view has rendered everything appended so far (one flush)."""
    await until(pilot, lambda: not view._dirty, what="the view to flush what was appended")


def _finished(view: MarkdownStreamView) -> bool:
    return view.is_finished  # a call, so mypy does not keep a narrowed property across awaits


def _following(transcript: Transcript) -> bool:
    return transcript.following


def _stream(view: MarkdownStreamView, text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def test_streamed_deltas_appear_and_the_answer_finishes() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 30)) as pilot:
        view = await _new_view(app, pilot)
        for piece in _stream(view, "Hello **wor"):
            view.append(piece)
        await until(pilot, lambda: view.rendered_lines() == ["Hello **wor"])
        assert view.rendered_lines() == ["Hello **wor"]  # the growing block, re-rendered
        view.append("ld** and more\n\nSecond")
        await until(pilot, lambda: view.rendered_lines() == ["Hello world and more", "", "Second"])
        assert view.rendered_lines() == ["Hello world and more", "", "Second"]
        assert not _finished(view)
        view.finish()
        await _settle(pilot, view)
        assert view.is_finished and view.markdown == "Hello **world** and more\n\nSecond"
        assert view.plain_text() == view.markdown
        assert view.size.height == 3
        with pytest.raises(RuntimeError):
            view.append("late")


async def test_finished_blocks_are_rendered_once(monkeypatch: pytest.MonkeyPatch) -> None:
    renders: Counter[str] = Counter()
    real = markdown_stream.render_markdown

    def spy(
        source: str, width: int, console: Console, code_theme: str = "monokai", hyperlinks: bool = True
    ) -> list[Strip]:
        renders[source] += 1
        return real(source, width, console, code_theme, hyperlinks)

    monkeypatch.setattr(markdown_stream, "render_markdown", spy)
    app = TranscriptApp()
    async with app.run_test(size=(80, 40)) as pilot:
        view = await _new_view(app, pilot)
        for index, piece in enumerate(_stream(view, ANSWER * 3, 3)):
            view.append(piece)
            if index % 7 == 0:
                await _flushed(pilot, view)  # let flushes happen mid-block
        view.finish()
        await _settle(pilot, view)
        blocks = split_blocks(ANSWER * 3)
        assert [block.source for block in view._blocks] == blocks
        finished_renders = sum(renders[source] for source in set(blocks))
        assert finished_renders == len(blocks)  # each finished block once (or reused from its last tail)
        assert sum(renders.values()) - finished_renders <= view.flushes  # at most one tail render a flush
        assert view.flushes > 5


async def test_a_finished_block_is_not_rendered_again_while_text_streams_after_it() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 30)) as pilot:
        view = await _new_view(app, pilot)
        view.append("# Title\n\nfirst paragraph\n\n")
        await _flushed(pilot, view)
        before = view.block_renders
        for piece in _stream(view, "a growing paragraph that keeps growing " * 5):
            view.append(piece)
            await _flushed(pilot, view)
        grown = view.block_renders - before
        assert 0 < grown <= view.flushes  # only the growing block, at most once per flush


async def test_resize_rewraps_to_the_new_width() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(100, 40)) as pilot:
        view = await _new_view(app, pilot, MarkdownStreamView(ANSWER))
        view.finish()
        await _settle(pilot, view)
        wide = view.line_count
        assert max(len(line) for line in view.rendered_lines()) > 60
        await pilot.resize_terminal(50, 40)
        await _settle(pilot, view)
        assert view._width == view.size.width < 50
        assert view.line_count > wide
        assert max(len(line) for line in view.rendered_lines()) <= view.size.width
        assert view.size.height == view.line_count
        await pilot.resize_terminal(100, 40)
        renders = view.block_renders
        await _settle(pilot, view)
        assert view.line_count == wide
        assert view.block_renders == renders  # the strips for that width were kept


async def test_resize_renders_what_is_visible_and_the_rest_in_the_background() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(100, 20)) as pilot:
        view = await _new_view(app, pilot, MarkdownStreamView(ANSWER * 40))
        view.finish()
        await _settle(pilot, view)
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        # the layout pass had a budget, the rest comes in slices; all of it in the end
        await _settle(pilot, view)
        assert all(view._width in block.strips for block in view._blocks)
        assert view.size.height == view.line_count
        assert app.transcript.scroll_y == app.transcript.max_scroll_y


async def test_discard_removes_the_partial_answer() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 20)) as pilot:
        view = await _new_view(app, pilot)
        view.append("partial answer that will fail")
        await _flushed(pilot, view)
        view.discard()
        await pilot.pause()
        assert not view.is_attached
        assert list(app.transcript.children) == []

        reused = await _new_view(app, pilot)
        reused.append("first try")
        await _flushed(pilot, reused)
        reused.discard(remove=False)
        await pilot.pause()
        assert reused.is_mounted and reused.line_count == 0 and reused.markdown == ""
        reused.append("second try")
        reused.finish()
        await _settle(pilot, reused)
        assert reused.rendered_lines() == ["second try"]


async def test_the_transcript_follows_the_end_until_the_user_scrolls_up() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(60, 12)) as pilot:
        transcript = app.transcript
        view = await _new_view(app, pilot)
        for n in range(30):
            view.append(f"line {n}\n\n")
            await _flushed(pilot, view)
        await until(
            pilot, lambda: transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y
        )
        assert _following(transcript)
        assert transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y

        transcript.focus()
        await pilot.press("pageup")
        await until(pilot, lambda: not _following(transcript))
        assert not _following(transcript)
        held = transcript.scroll_y
        for n in range(30, 40):
            view.append(f"line {n}\n\n")
            await _flushed(pilot, view)
        await pilot.pause()
        assert transcript.scroll_y == held < transcript.max_scroll_y

        transcript.scroll_end(animate=False)
        await pilot.pause()
        assert _following(transcript)
        view.append("the end")
        view.finish()
        await _settle(pilot, view)
        assert transcript.scroll_y == transcript.max_scroll_y
        transcript.scroll_home(animate=False)
        await pilot.pause()
        transcript.follow()
        await pilot.pause()
        assert _following(transcript) and transcript.scroll_y == transcript.max_scroll_y


async def test_mouse_wheel_scrolls_and_releases_the_follow() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(60, 12)) as pilot:
        view = await _new_view(app, pilot, MarkdownStreamView("\n\n".join(f"para {n}" for n in range(40))))
        view.finish()
        await _settle(pilot, view)
        bottom = app.transcript.scroll_y
        for _ in range(3):
            app.transcript.post_message(
                events.MouseScrollUp(app.transcript, 5, 5, 0, -1, 0, False, False, False)
            )
        await until(pilot, lambda: app.transcript.scroll_y < bottom)
        assert app.transcript.scroll_y < bottom
        assert not app.transcript.following


async def test_only_visible_lines_are_painted() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 20)) as pilot:
        view = await _new_view(app, pilot, MarkdownStreamView(ANSWER * 30))
        view.finish()
        await _settle(pilot, view)
        assert view.line_count > 300
        view.lines_painted = 0
        view.refresh()
        await pilot.pause()
        assert 0 < view.lines_painted <= 20  # the screen's worth, not the whole answer


async def test_selection_extracts_the_text_on_screen() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 20)) as pilot:
        view = await _new_view(app, pilot, MarkdownStreamView("alpha beta\n\ngamma delta"))
        view.finish()
        await _settle(pilot, view)
        assert view.get_selection(Selection(Offset(6, 0), Offset(5, 2))) == ("beta\n\ngamma", "\n")
        view.text_select_all()
        await pilot.pause()
        assert app.screen.get_selected_text() == "alpha beta\n\ngamma delta"
        # the selection is painted, and lines carry offsets for mouse selection
        strip = view.render_line(0)
        assert any(segment.style is not None and segment.style.meta.get("offset") for segment in strip)


async def test_mouse_drag_selects_text() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(80, 20)) as pilot:
        view = await _new_view(app, pilot, MarkdownStreamView("alpha beta gamma"))
        view.finish()
        await _settle(pilot, view)
        region = view.content_region
        await pilot.mouse_down(view, offset=(region.x - view.region.x + 6, 0))
        await pilot.hover(view, offset=(region.x - view.region.x + 9, 0))
        await pilot.mouse_up(view, offset=(region.x - view.region.x + 9, 0))
        await pilot.pause()
        assert app.screen.get_selected_text() == "beta"


async def test_renderable_entries_and_export() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(40, 20)) as pilot:
        user = RenderableView(Text("a user message that is long enough to wrap twice here"))
        await app.transcript.mount(user)
        answer = await _new_view(app, pilot, MarkdownStreamView("**Answer**"))
        answer.finish()
        await _settle(pilot, answer)
        assert user.line_count == 2 and user.size.height == 2
        assert user.plain_text().startswith("a user message")
        user.update("short")
        await pilot.pause()
        assert user.rendered_lines() == ["short"] and user.size.height == 1
        assert app.transcript.export_text() == "short\n\n**Answer**"


async def test_text_given_before_mount_is_rendered_on_mount() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(60, 20)) as pilot:
        view = MarkdownStreamView("restored **answer**")
        view.finish()
        await app.transcript.mount(view)
        await _settle(pilot, view)
        assert view.rendered_lines() == ["restored answer"]
        assert view.render_line(0).text.startswith("restored answer")


async def test_an_open_code_block_shows_its_last_line_before_it_ends() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(60, 20)) as pilot:
        view = await _new_view(app, pilot)
        view.append("```python\nx = 1\ny = ")
        await until(pilot, lambda: [line.strip() for line in view.rendered_lines()] == ["x = 1", "y ="])
        assert [line.strip() for line in view.rendered_lines()] == ["x = 1", "y ="]
        view.append("2\n```\n")
        view.finish()
        await _settle(pilot, view)
        assert [line.strip() for line in view.rendered_lines()] == ["x = 1", "y = 2"]
        # the provisional render of the growing block was not reused as the final one
        assert view._provisional is None


async def test_flushes_are_coalesced_to_the_frame_rate() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(60, 20)) as pilot:
        view = await _new_view(app, pilot)
        started = asyncio.get_running_loop().time()
        for piece in _stream(view, "word " * 400, 2):
            view.append(piece)
            await asyncio.sleep(0.001)
        elapsed = asyncio.get_running_loop().time() - started
        view.finish()
        await _settle(pilot, view)
        assert view.flushes <= elapsed * view.FRAME_RATE + 3


async def test_after_a_resize_entries_off_screen_are_rewrapped_in_the_background() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(100, 30)) as pilot:
        views = [MarkdownStreamView(ANSWER * 8) for _ in range(20)]
        for view in views:
            view.finish()
        await app.transcript.mount_all(views)
        await until(pilot, lambda: all(view.is_settled for view in views))
        await pilot.resize_terminal(60, 30)
        for _ in range(3):
            await pilot.pause()
        width = views[-1]._width
        assert width < 60
        # on screen: rendered when painted; far above the screen: estimated for now
        assert all(width in block.strips for block in views[-1]._blocks[-3:])
        assert not views[0].is_settled
        await until(pilot, lambda: all(view.is_settled for view in views))
        assert all(view.is_settled and view._width == width for view in views)
        assert app.transcript.scroll_y == app.transcript.max_scroll_y


async def test_a_burst_of_more_than_a_screenful_spaces_the_next_flush_and_the_end_is_drawn_at_once() -> None:
    app = TranscriptApp()
    async with app.run_test(size=(40, 10)) as pilot:
        view = await _new_view(app, pilot)
        view.BURST_INTERVAL = 600.0  # a pause no machine outlasts: the test cannot race it
        view.append("A slow start.\n\n")
        await _flushed(pilot, view)
        assert view._interval == pytest.approx(1.0 / view.FRAME_RATE)  # a normal pace
        view.append("Still at a reading pace.")
        await _flushed(pilot, view)
        assert view._interval == pytest.approx(1.0 / view.FRAME_RATE)
        flushes = view.flushes
        view.append("".join(f"Paragraph {n} of a burst that fills the screen.\n\n" for n in range(40)))
        await until(pilot, lambda: view.flushes > flushes, what="the burst to be flushed")
        assert view._interval == 600.0  # frames in between could not be read
        after_burst, frames = view.flushes, clock_frames(app)
        view.append("More text arrives during the pause.")
        await until(pilot, lambda: clock_frames(app) >= frames + 2, what="two more frames")
        assert view.flushes == after_burst and view._dirty  # held back by the pause
        view.append(" The end.")
        view.finish()
        assert view.rendered_lines()[-1].endswith("The end.")  # finish draws at once
        await _settle(pilot, view)
        lines = view.rendered_lines()
        assert lines[-1].endswith("The end.") and "More text arrives" in " ".join(lines)


def clock_frames(app: App[None]) -> int:
    from wyckoff_cli.tui.frame_clock import clock_of

    return clock_of(app).frames
