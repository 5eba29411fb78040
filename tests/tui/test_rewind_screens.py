"""The /rewind picker, the restore preview dialog and the /diff screen, with Pilot,
driven by the real checkpoint engine on a real repository."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rich.console import Group
from rich.text import Text
from textual.app import App
from textual.screen import ModalScreen
from textual.widgets import Static

from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.runtime.checkpoints.rewind import RewindChoice, RewindPoint
from wyckoff_cli.tui.screens import rewind as screens
from wyckoff_cli.tui.screens.rewind import (
    DiffScreen,
    DoubleEscape,
    RestorePreviewScreen,
    RewindPickerScreen,
    RewindSelection,
)


class Host(App[None]):
    def __init__(self, screen: ModalScreen[Any]) -> None:
        super().__init__()
        self.modal = screen
        self.results: list[Any] = []

    def on_mount(self) -> None:
        self.push_screen(self.modal, self.results.append)


@pytest.fixture(autouse=True)
def no_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(screens, "GRACE_SECONDS", 0.0)


async def test_picker_lists_newest_first_and_returns_message_and_choice(checkpoint_session: Any) -> None:
    commands, history, _ = checkpoint_session
    points = commands.rewind_points(history)
    app = Host(RewindPickerScreen(points))
    async with app.run_test() as pilot:
        labels = [str(o.prompt) for o in app.screen.query_one("#messages").options]  # type: ignore[attr-defined]
        assert labels[0].startswith("second: write b") and "b.txt" in labels[0]
        assert labels[1].startswith("first: write a") and "2 files changed" in labels[1]
        await pilot.press("down", "enter")  # the first message
        assert app.screen.has_class("-choosing")
        await pilot.press("escape")  # back to the messages
        assert not app.screen.has_class("-choosing")
        await pilot.press("enter")  # the newest
        await pilot.press("down", "down", "enter")  # code only
        await pilot.pause()
    assert app.results == [RewindSelection(points[1], RewindChoice.CODE)]


@pytest.mark.parametrize(("key", "choice"), [("1", RewindChoice.BOTH), ("2", RewindChoice.CONVERSATION)])
async def test_picker_choices_by_number(checkpoint_session: Any, key: str, choice: RewindChoice) -> None:
    commands, history, _ = checkpoint_session
    points = commands.rewind_points(history)
    app = Host(RewindPickerScreen(points))
    async with app.run_test() as pilot:
        await pilot.press("enter", key)
        await pilot.pause()
    assert app.results == [RewindSelection(points[0], choice)]


async def test_escape_closes_the_picker(checkpoint_session: Any) -> None:
    app = Host(RewindPickerScreen([]))
    async with app.run_test() as pilot:
        assert "No messages" in str(app.screen.query_one("#messages", Static).render())
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [None]


async def test_the_whole_rewind_flow_restores_the_code_after_the_preview(checkpoint_session: Any) -> None:
    commands, history, root = checkpoint_session
    point = commands.rewind_points(history)[1]  # before "first"
    (root / "a.txt").write_text("a.txt\nand my own line\n")  # a change by hand after the agent
    preview = commands.preview_rewind(point, RewindChoice.CODE, history)
    app = Host(RestorePreviewScreen("Rewind", preview.text()))
    async with app.run_test() as pilot:
        modal = app.screen
        assert isinstance(modal, RestorePreviewScreen) and isinstance(modal.rendered, Group)
        head, _, diff = modal.rendered.renderables
        assert isinstance(head, Text) and isinstance(diff, Text)
        assert "deleted     a.txt  ! changed by you after the agent" in head.plain
        marked = [s for s in head.spans if s.style == "bold yellow"]
        assert marked and "a.txt" in head.plain[marked[0].start : marked[0].end]
        assert "-and my own line" in diff.plain
        await pilot.press("y")
        await pilot.pause()
    assert app.results == [True]
    await asyncio.to_thread(commands.apply_rewind, preview, Conversation(history))
    assert not (root / "a.txt").exists() and not (root / "b.txt").exists()
    assert (root / "keep.txt").read_text() == "keep\n"


@pytest.mark.parametrize("keys", [("n",), ("escape",), ("down", "enter")])
async def test_the_preview_can_be_cancelled(checkpoint_session: Any, keys: tuple[str, ...]) -> None:
    commands, _, root = checkpoint_session
    plan = commands.preview_undo()
    app = Host(RestorePreviewScreen("Undo", plan.preview_text()))
    async with app.run_test() as pilot:
        await pilot.press(*keys)
        await pilot.pause()
    assert app.results == [False]
    assert (root / "b.txt").exists()


async def test_keys_right_after_the_preview_opens_are_ignored(
    checkpoint_session: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(screens, "GRACE_SECONDS", 60.0)
    commands, _, _ = checkpoint_session
    app = Host(RestorePreviewScreen("Undo", commands.preview_undo().preview_text()))
    async with app.run_test() as pilot:
        await pilot.press("y", "enter")
        await pilot.pause()
        assert app.results == []  # typing ahead never confirms a restore
        await pilot.press("escape")
        await pilot.pause()
    assert app.results == [False]


async def test_diff_screen_shows_the_session_diff_coloured(checkpoint_session: Any) -> None:
    commands, _, _ = checkpoint_session
    diff = commands.session_diff()
    app = Host(DiffScreen(diff))
    async with app.run_test() as pilot:
        modal = app.screen
        assert isinstance(modal, DiffScreen)
        assert "green" in {span.style for span in modal.rendered.spans} and "+a.txt" in modal.rendered.plain
        await pilot.press("q")
        await pilot.pause()
    assert app.results == [None]


def test_double_escape_needs_two_quick_presses() -> None:
    now = [0.0]
    double = DoubleEscape(window=0.5, clock=lambda: now[0])
    assert double.press() is False
    now[0] = 0.3
    assert double.press() is True
    now[0] = 0.4
    assert double.press() is False  # a third press starts over
    now[0] = 1.5
    assert double.press() is False  # too slow
    now[0] = 1.6
    assert double.press() is True


def test_rewind_point_labels(checkpoint_session: Any) -> None:
    point = RewindPoint("id", "x " * 100, None, ())
    assert point.label.endswith("(no file changes after it)") and len(point.label) < 120
    many = RewindPoint("id", "msg", None, tuple(f"f{i}" for i in range(5)))
    assert "5 files changed: f0, f1, f2 and 2 more" in many.label


async def test_a_long_preview_scrolls_while_the_choices_stay_visible(checkpoint_session: Any) -> None:
    text = "Restore to checkpoint x: 1 file restored\n" + "".join(
        f"  restored    f{i}.py\n" for i in range(200)
    )
    app = Host(RestorePreviewScreen("Undo", text))
    async with app.run_test(size=(100, 30)) as pilot:
        modal = app.screen
        preview = modal.query_one("#preview")
        choices = modal.query_one("OptionList")
        assert choices.region.bottom <= 30 and choices.region.height > 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert preview.scroll_y > 0  # type: ignore[attr-defined]
        await pilot.press("n")
        await pilot.pause()
    assert app.results == [False]
