"""The entries the event router asks a screen for (`AnswerView`, a thinking pane, a tool
call, notices, the user's message), made the same way by every screen that shows a
session live: the chat and an attached background session, and the router's frame
clock (`_schedule_flush`). A screen supplies `_mount`
(where, and whether, an entry goes: its `entry_batch`, which mounts new entries once per
frame, tui/entry_batch.py) and `request_approval` (a sub-agent's dialog)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from textual.widget import Widget

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import ImagePart
from wyckoff_cli.tui.entry_batch import EntryBatch
from wyckoff_cli.tui.frame_clock import clock_of
from wyckoff_cli.tui.router import AnswerView, EventRouter
from wyckoff_cli.tui.widgets.counting_notice import CountingNotice
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.task_call import TaskCallView
from wyckoff_cli.tui.widgets.thinking import ThinkingPane
from wyckoff_cli.tui.widgets.tool_call import ToolCallView


class TranscriptEntries:
    entry_batch: EntryBatch  # made by the screen: its transcript mounts what it holds
    router: EventRouter  # made by the screen, with `_schedule_flush` as its clock
    _last_user: UserMessage | None = None  # the latest user message, for its images once sent

    def _schedule_flush(self, soon: bool = False) -> None:
        """Buffered deltas wait at most one frame of the app's one clock (`soon`: none),
        and no timer runs while nothing streams."""
        clock_of(cast(Widget, self).app).request(self.router.flush, soon=soon)

    def _mount(self, widget: Widget) -> None:
        raise NotImplementedError

    def mount_pending(self) -> None:
        """Mount the entries held for the next frame now (a dialog opens, a held entry
        is about to be removed, the turn ended)."""
        self.entry_batch.flush()

    def request_approval(self, request: ev.ApprovalRequested, agent: str | None = None) -> None:
        raise NotImplementedError

    def new_answer(self) -> AnswerView:
        view = MarkdownStreamView()
        self._mount(view)
        return view

    def new_thinking(self) -> ThinkingPane:
        pane = ThinkingPane()
        self._mount(pane)
        return pane

    def new_tool_call(self, call_id: str, name: str, args: dict[str, Any]) -> ToolCallView:
        view = (
            TaskCallView(call_id, name, args, self.request_approval)  # a sub-agent (issue 14)
            if name == "task"
            else ToolCallView(call_id, name, args)
        )
        self._mount(view)
        if isinstance(view, TaskCallView):
            self.mount_pending()  # the child's entries mount into it as soon as they come
        return view

    def add_notice(self, kind: str, message: str) -> None:
        self._mount(NoticeLine(kind, message))

    def add_counting_notice(self, kind: str, render: Callable[[float], str]) -> CountingNotice:
        notice = CountingNotice(kind, render)
        self._mount(notice)
        return notice

    def add_user(self, text: str) -> None:
        self._last_user = UserMessage(text)
        self._mount(self._last_user)

    def show_user_images(self, images: Sequence[ImagePart]) -> None:
        if self._last_user is not None:
            self._last_user.show_images(images)
