"""One coalescing clock for the whole screen (issue 17): deltas are coalesced before
they reach the answer widget, nothing is armed once the screen is still, spinners run
on the clock, the status bar repaints only when a figure changes, and the last line of
a streamed answer is on screen after the final frame."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
from textual.app import App

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat, send, settle, shell_tool
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.tui.frame_clock import FrameClock, clock_of
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.status_bar import StatusBar
from wyckoff_cli.tui.widgets.tool_call import ToolCallView


def long_answer(steps: int = 12) -> str:
    parts = [
        f"## Step {n}\n\nChange **parse_{n}** to accept `limit`.\n\n- one\n- two\n\n"
        f"```python\ndef parse_{n}(text):\n    return text.split()\n```\n\n"
        for n in range(1, steps + 1)
    ]
    return "".join(parts) + "> The last line of the answer."


def screen_text(app: App[Any]) -> list[str]:
    """The lines of the screen as painted (from Textual's SVG screenshot)."""
    svg = app.export_screenshot()
    lines: dict[str, list[str]] = {}
    for y, chunk in re.findall(r'<text[^>]*\by="([\d.]+)"[^>]*>(.*?)</text>', svg):
        lines.setdefault(y, []).append(html.unescape(re.sub("<[^>]+>", "", chunk)).replace("\xa0", " "))
    return ["".join(parts) for _, parts in sorted(lines.items(), key=lambda item: float(item[0]))]


class Recorder(MarkdownStreamView):
    appended: list[str]

    def append(self, delta: str) -> None:
        self.__dict__.setdefault("appended", []).append(delta)
        super().append(delta)


async def test_the_last_line_of_a_streamed_answer_is_on_screen_after_the_final_frame(tmp_path: Path) -> None:
    answer = long_answer()
    app, _ = make_app(tmp_path, [{"text": answer, "chunk_size": 4}], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "go")
        await settle(pilot, screen)
        view = screen.query(MarkdownStreamView).last()
        await until(pilot, lambda: view.is_settled and clock_of(app).idle)
        await pilot.pause()
        assert view.markdown == answer
        shown = screen_text(app)
        assert any("The last line of the answer." in line for line in shown), "\n".join(shown)
        assert not any(line.strip() == "Step 1" for line in shown)  # the view followed the stream down


async def test_deltas_between_frames_reach_the_answer_widget_as_one_append(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        views: list[Recorder] = []

        def new_answer() -> Recorder:
            view = Recorder()
            screen._mount(view)
            views.append(view)
            return view

        screen.new_answer = new_answer  # type: ignore[method-assign]
        screen.router.handle(ev.ModelStart(1, "scripted:test"))
        text = "The answer is **42**, as the tests show. " * 5
        for start in range(0, len(text), 3):
            screen.router.handle(ev.TextDelta(text[start : start + 3]))  # all in one frame
        assert views and getattr(views[0], "appended", []) == []  # buffered until the frame
        await until(pilot, lambda: getattr(views[0], "appended", None))
        assert views[0].appended == [text]
        screen.router.handle(ev.TextDelta(" More."))
        screen.router.handle(ev.TurnDone(text + " More.", "completed", 1, {}))  # flushes, then finishes
        assert views[0].appended == [text, " More."] and views[0].is_finished


async def test_no_timer_is_armed_once_the_screen_is_still(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds: list[Any] = [
        {"tool_calls": [{"name": "run_shell", "args": {"command": "make"}}]},
        {"text": long_answer(3), "chunk_size": 5},
    ]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        clock = clock_of(app)
        await until(pilot, lambda: clock.idle)
        assert clock.idle  # before anything streams
        await send(pilot, "build it")
        await until(pilot, lambda: screen._approvals)
        screen._approvals[0].dismiss(None)  # deny: the call ends, the answer streams
        await settle(pilot, screen)
        await until(pilot, lambda: clock.idle)
        assert clock.idle and clock.frames > 0
        assert all(not view._spinning for view in screen.query(ToolCallView))


async def test_a_running_tool_spins_on_the_clock_and_stops_with_it(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        view = screen.new_tool_call("c1", "run_shell", {"command": "sleep 1"})
        await pilot.pause()
        view.start({"command": "sleep 1"}, False)
        clock = clock_of(app)
        assert view._spinning and not clock.idle
        frames = clock.frames
        await until(pilot, lambda: view._frame >= 2)
        assert view._frame >= 2 and clock.frames > frames
        view.succeed("done", 300, None)
        assert not view._spinning
        await until(pilot, lambda: clock.idle)
        assert clock.idle


async def test_the_status_bar_repaints_only_when_a_figure_changes(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        bar = screen.query_one(StatusBar)
        await pilot.pause()
        updates: list[object] = []
        original = bar.update

        def spy(*args: Any, **kwargs: Any) -> Any:
            updates.append(args)
            return original(*args, **kwargs)

        bar.update = spy  # type: ignore[method-assign]
        for _ in range(5):
            screen.status_changed()
        assert updates == []
        screen.status.observe(ev.UsageReported("scripted:test", 1_000, 20, 0, 0))
        screen.status_changed()
        screen.status_changed()
        assert len(updates) == 1


class _FakeApp:
    def __init__(self) -> None:
        self.timers: list[tuple[float, Any]] = []

    def set_timer(self, delay: float, callback: Any, *, name: str = "") -> object:
        self.timers.append((delay, callback))
        return object()

    def fire(self) -> None:
        _, callback = self.timers.pop(0)
        callback()


def test_the_clock_runs_each_callback_once_a_frame_and_callbacks_asked_for_during_it() -> None:
    app = _FakeApp()
    clock = FrameClock(app, schedule=app.set_timer)
    calls: list[str] = []

    def second() -> None:
        calls.append("second")

    def first() -> None:
        calls.append("first")
        clock.request(second)  # asked for during the frame: runs in it

    assert clock.idle
    for _ in range(3):
        clock.request(first)
    assert len(app.timers) == 1  # one timer, however often asked
    app.fire()
    assert calls == ["first", "second"]
    assert clock.idle and app.timers == []  # nothing pending: nothing armed


def test_animations_keep_the_clock_going_until_stopped() -> None:
    app = _FakeApp()
    clock = FrameClock(app, schedule=app.set_timer)
    seen: list[float] = []
    clock.animate(seen.append)
    app.fire()
    app.fire()
    assert len(seen) == 2 and len(app.timers) == 1
    clock.stop(seen.append)
    app.fire()
    assert len(seen) == 2 and app.timers == [] and clock.idle


async def test_blocks_a_fast_stream_scrolls_past_are_rendered_after_the_answer(tmp_path: Path) -> None:
    from tests.tui.test_transcript_widget import TranscriptApp, _new_view, _settle

    answer = long_answer(30)
    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _new_view(app, pilot)
        view.append(answer[: len(answer) // 2])  # many blocks in one frame
        await until(pilot, lambda: view.flushes)
        width = view._width
        unrendered = [block for block in view._blocks if width not in block.strips]
        assert unrendered and width in view._blocks[-1].strips  # the bottom was rendered first
        view.append(answer[len(answer) // 2 :])
        view.finish()
        await _settle(pilot, view)  # the rest is rendered in the background
        assert all(width in block.strips for block in view._blocks)
        whole = MarkdownStreamView(answer)
        whole.finish()
        await app.transcript.mount(whole)
        await _settle(pilot, whole)
        assert view.rendered_lines() == whole.rendered_lines()


async def test_with_a_grow_step_the_streaming_height_grows_in_steps_and_is_exact_when_finished() -> None:
    from tests.tui.test_transcript_widget import TranscriptApp, _new_view, _settle

    class Stepped(MarkdownStreamView):
        GROW_STEP = 4

    app = TranscriptApp()
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _new_view(app, pilot, Stepped())
        view.append("one line\n\n- a\n- b\n- c")
        await until(pilot, lambda: view.flushes and view.size.height)
        assert view.line_count == 5 and view.size.height == 8
        view.finish()
        await _settle(pilot, view)
        assert view.size.height == view.line_count == 5
        assert view.rendered_lines()[-1].strip().endswith("c")


async def test_frames_run_on_the_event_loop_and_an_error_in_one_ends_the_app_with_it() -> None:
    from tests.tui.test_transcript_widget import TranscriptApp

    app = TranscriptApp()
    ran: list[str] = []

    def broken() -> None:
        ran.append("broken")
        raise RuntimeError("a frame callback failed")

    with pytest.raises(RuntimeError, match="a frame callback failed"):
        async with app.run_test() as pilot:
            clock = clock_of(app)
            clock.request(lambda: ran.append("first"))
            await until(pilot, lambda: ran == ["first"] and clock.idle, what="a frame")
            assert clock.frames == 1
            clock.request(broken)
            await until(pilot, lambda: not app.is_running, what="the app to end with the error")
    assert ran == ["first", "broken"]
