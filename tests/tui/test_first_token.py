"""The answer's first text reaches the screen without waiting (issue 36): it asks the
frame clock for a frame at once, not the next one a spinner armed (up to a frame away);
the answer view lays out and paints that text in its first layout pass, not a frame
after it; and the chat screen imports the Markdown renderer while the request is on its
way, after the controller's warm-up, rather than on the first delta."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Size

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat
from tests.tui.test_transcript_widget import TranscriptApp
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.session import warm
from wyckoff_cli.tui.frame_clock import FrameClock
from wyckoff_cli.tui.widgets.markdown_stream import RENDERER, MarkdownStreamView


class _Timer:
    def __init__(self, delay: float, callback: Any) -> None:
        self.delay, self.callback, self.stopped = delay, callback, False

    def stop(self) -> None:
        self.stopped = True


class _FakeApp:
    def __init__(self) -> None:
        self.timers: list[_Timer] = []

    def set_timer(self, delay: float, callback: Any, *, name: str = "") -> _Timer:
        self.timers.append(_Timer(delay, callback))
        return self.timers[-1]

    def fire(self) -> None:
        timer = next(t for t in self.timers if not t.stopped)
        self.timers.remove(timer)
        timer.callback()


def test_a_soon_request_replaces_the_frame_a_spinner_armed_for_later() -> None:
    app = _FakeApp()
    clock = FrameClock(app, schedule=app.set_timer)
    spun: list[float] = []
    clock.animate(spun.append)
    app.fire()  # a spinner's frame: the next one is armed a frame later
    (armed,) = app.timers
    assert armed.delay > 0.03
    flushed: list[str] = []
    clock.request(lambda: flushed.append("plain"))
    assert app.timers == [armed]  # an ordinary request waits for that frame
    clock.request(lambda: flushed.append("first text"), soon=True)
    assert armed.stopped
    now = app.timers[-1]
    assert now.delay <= 0.001  # drawn at once
    app.fire()
    assert flushed == ["plain", "first text"] and len(spun) == 2  # the spinner's frame came with it
    assert not app.timers[-1].stopped and app.timers[-1].delay > 0.03  # then the usual pace


async def test_the_first_text_of_an_answer_asks_for_a_frame_at_once(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await pilot.pause()
        asked: list[bool] = []
        screen.router.schedule_flush = asked.append
        screen.router.handle(ev.ModelStart(1, "scripted:test"))
        screen.router.handle(ev.TextDelta("The "))
        screen.router.handle(ev.TextDelta("answer"))  # buffered for that same frame
        assert asked == [True]
        screen.router.flush()
        screen.router.handle(ev.TextDelta(" goes on."))
        assert asked == [True, False]  # the rest of the answer keeps the frame pace


class _Heights(MarkdownStreamView):
    heights: list[tuple[int, int]]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        height = super().get_content_height(container, viewport, width)
        self.__dict__.setdefault("heights", []).append((width, height))
        return height


async def test_text_that_comes_before_the_views_first_layout_is_laid_out_by_it() -> None:
    """As in the app: the router mounts the answer view and hands it the first delta
    before Textual has laid the view out; that layout pass renders and sizes it (before,
    it laid the view out empty and a flush a frame later showed the text)."""
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = _Heights()
        await app.transcript.mount(view)
        assert view._width == 0  # mounted, not laid out yet
        view.append("The answer is **42**.")
        await until(pilot, lambda: getattr(view, "heights", None))
        width, height = view.heights[0]
        assert width > 0 and height >= 1  # the first layout gave it its text's height
        assert view.flushes == 1 and not view._dirty
        await until(pilot, lambda: view.size.height >= 1)
        assert "The answer is 42." in view.rendered_lines()[0]
        await pilot.pause()
        assert view.flushes == 1  # the flush asked for when the width came found nothing to do


async def test_the_chat_screen_imports_the_renderer_after_the_controllers_warm_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    waited: list[list[str]] = []
    real = warm.ready

    async def recording(modules: Any) -> None:
        waited.append(list(modules))
        await real(modules)

    monkeypatch.setattr(warm, "ready", recording)
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: [RENDERER] in waited)
        assert waited.index([RENDERER]) == len(waited) - 1  # after the SDK's and the session's
        assert any(warm.SESSION_MODULES[0] in modules for modules in waited[:-1])
