"""The streaming answer grows GROW_STEP lines at a time (issue 36): a layout pass every
few lines of a live stream, not every line. Nothing the user should see is skipped:
every frame shows the answer's lines so far, in order, the spare lines are blank and
below the text, and the finished answer (and a restored one) is laid out exactly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat, send, settle
from tests.tui.test_frame_clock import long_answer, screen_text
from tests.tui.test_transcript_widget import TranscriptApp, _new_view, _settle
from tests.waiting import until
from wyckoff_cli.tui.frame_clock import clock_of
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView


def test_a_live_stream_grows_in_steps_of_more_than_one_line() -> None:
    assert MarkdownStreamView.GROW_STEP > 1


class Watched(MarkdownStreamView):
    """Notes, after every flush, the lines rendered so far and the height laid out."""

    seen: list[tuple[list[str], int]]

    def _flush(self, repaint: bool = True) -> None:
        super()._flush(repaint)
        if self._width:
            self.__dict__.setdefault("seen", []).append(
                ([line.rstrip() for line in self._lines_so_far()], self._layout_height(self.line_count))
            )

    def _lines_so_far(self) -> list[str]:
        """The lines as laid out (blank between blocks), without rendering anything."""
        lines = [""] * self.line_count
        for block, start in zip(self._blocks, self._line_starts(), strict=True):
            for offset, strip in enumerate(block.strips.get(self._width, [])):
                lines[start + offset] = strip.text
        return lines


@pytest.mark.parametrize(("size", "step"), [((80, 24), 4), ((120, 40), 8), ((100, 60), 12)])
async def test_every_frame_of_a_live_stream_shows_the_lines_so_far_in_order(
    size: tuple[int, int], step: int
) -> None:
    """On every screen: the step is GROW_STEP or a fifth of the screen, the larger."""
    answer = long_answer(6 if size[1] < 60 else 10)
    app = TranscriptApp()
    async with app.run_test(size=size) as pilot:
        view = await _new_view(app, pilot, Watched())
        assert view.grow_step == step
        for start in range(0, len(answer), 7):
            view.append(answer[start : start + 7])
            await pilot.pause()  # one delta per event-loop turn, as a local stream gives
        await until(pilot, lambda: getattr(view, "seen", None) and not view._dirty)
        view.finish()
        await _settle(pilot, view)
        final = view.rendered_lines()
        assert view.size.height == view.line_count == len(final)  # finished: exact
        assert final[-1].strip().endswith("The last line of the answer.")
        live = view.seen[:-1]  # the flushes before finish()
        assert len(live) > 3
        for lines, height in live:
            step = view.grow_step
            assert height % step == 0 and len(lines) <= height < len(lines) + step
            # Every finished line is the final one, in order; only the growing last line
            # (a word or a closing mark still to come) may differ.
            assert lines[:-1] == final[: len(lines) - 1]


async def test_a_restored_answer_is_laid_out_exactly_and_never_with_spare_lines() -> None:
    answer = long_answer(2)
    app = TranscriptApp()
    async with app.run_test(size=(80, 40)) as pilot:
        view = await _new_view(app, pilot, MarkdownStreamView(answer))  # given before mount
        await until(pilot, lambda: view.flushes and view.size.height)
        assert not view.is_finished
        assert view.size.height == view.line_count


async def test_the_app_shows_the_final_text_exactly_after_the_stream(tmp_path: Path) -> None:
    answer = long_answer(3)
    app, _ = make_app(tmp_path, [{"text": answer, "chunk_size": 4}], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "go")
        await settle(pilot, screen)
        view = screen.query(MarkdownStreamView).last()
        await until(pilot, lambda: view.is_settled and clock_of(app).idle)
        await pilot.pause()
        assert view.markdown == answer
        assert view.size.height == view.line_count
        shown = screen_text(app)
        last = max(i for i, line in enumerate(shown) if "The last line of the answer." in line)
        # The answer's last lines, in order, directly above one another: nothing skipped
        # (compared without spaces: the screenshot drops blank runs and the gutter).
        final = [squeezed for line in view.rendered_lines() if (squeezed := _squeeze(line))][-6:]
        above = [squeezed for line in shown[: last + 1] if (squeezed := _squeeze(line))][-6:]
        assert len(final) == 6 and all(
            line in on_screen for line, on_screen in zip(final, above, strict=True)
        ), "\n".join(shown)


def _squeeze(line: str) -> str:
    return re.sub(r"\s+", "", line)
