"""A `task` call: a sub-agent at work, as one tool widget.

The header names the agent and the task's description; while the child runs, a live
line says what it is doing (its router's state: thinking, running grep, waiting for
approval) and its current tool's argument. Expanded (Enter or a click), the child's
own transcript shows below it, built by a nested `EventRouter` with the same widgets
as the main transcript (answers, thinking, tool calls, notices). The child's approval
requests go to the screen's dialog, naming the agent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.containers import Vertical
from textual.widget import Widget

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import ImagePart
from wyckoff_cli.session.status import StatusModel
from wyckoff_cli.tui.literal import visible
from wyckoff_cli.tui.router import AnswerView, EventRouter
from wyckoff_cli.tui.widgets.counting_notice import CountingNotice
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.thinking import ThinkingPane
from wyckoff_cli.tui.widgets.tool_call import ToolCallView, summarize_args

AskFn = Callable[[ev.ApprovalRequested, str], None]  # (request, agent name): open the dialog


class ChildTranscript(Vertical):
    """Where a task's child transcript is mounted (shown when the task is expanded)."""

    DEFAULT_CSS = """
    ChildTranscript { height: auto; margin: 0 0 1 2; padding: 0 0 0 1; border-left: solid $primary-darken-2; }
    ChildTranscript.-hidden { display: none; }
    """


class TaskCallView(ToolCallView):
    """One `task` call; also the `TranscriptView` of its child's router."""

    def __init__(self, call_id: str, name: str, args: dict[str, Any], ask: AskFn, **kwargs: object) -> None:
        super().__init__(call_id, name, args, **kwargs)
        self.ask = ask
        self._last_user: UserMessage | None = None
        self.agent = str(args.get("agent", "agent"))
        self.description = str(args.get("description", ""))
        self.agent_id = ""
        self.child_status = StatusModel(model=self.agent)
        self.child_router = EventRouter(self, self.child_status)
        self.box = ChildTranscript(classes="-hidden")
        self.live = ""
        self.child_tool = ""

    def on_mount(self) -> None:
        super().on_mount()
        if isinstance(self.parent, Widget) and self.box.parent is None:
            self.parent.mount(self.box, after=self)

    # ---------------------------------------------------------------- the child's events

    def child_event(self, wrapped: ev.SubagentEvent) -> None:
        self.agent_id = wrapped.agent_id
        inner = wrapped.event
        if isinstance(inner, ev.ToolStarted):
            self.child_tool = f"{inner.name} {summarize_args(inner.name, inner.args, 60)}".strip()
        elif isinstance(inner, ev.ToolSucceeded | ev.ToolFailed | ev.ModelStart):
            self.child_tool = ""
        self.child_router.handle(inner)
        self.child_router.flush()
        self.refresh_view()

    def action_toggle_open(self) -> None:
        super().action_toggle_open()
        self.box.set_class(not self.expanded, "-hidden")

    # ---------------------------------------------------------------- rendering

    def render_call(self) -> RenderableType:
        parts: list[RenderableType] = [self._header()]
        if self.status in ("running", "waiting"):
            parts.append(Text(f"  {visible(self.live_line())}", style="dim italic"))
        elif self.status in ("ok", "error"):
            parts.append(self._body())
        return Group(*parts)

    def live_line(self) -> str:
        """What the child is doing now."""
        state = self.child_status.state
        if state.startswith("running") and self.child_tool:
            return f"{self.agent}: {self.child_tool}"
        return f"{self.agent}: {state}"

    def _header(self) -> Text:
        icon, style = self.status_icon()
        header = Text.assemble(
            (f"{icon} ", style), ("task", "bold"), (f" · {visible(self.agent)}", "bold magenta")
        )
        if self.description:
            header.append(f"  {visible(self.description)}")
        self.append_progress(header)
        return header

    def _body(self) -> RenderableType:
        footer = (self.display_data or {}).get("footer")
        answer = self.result.rsplit("\n\n", 1)[0] if footer else self.result
        lines = visible(answer).rstrip("\n").splitlines()
        shown = lines if self.expanded else lines[:4]
        parts: list[RenderableType] = [Text("\n".join(shown), style="red" if self.status == "error" else "")]
        if len(lines) > len(shown):
            parts.append(Text(f"… {len(lines) - len(shown)} more lines", style="dim italic"))
        if footer:
            parts.append(Text(visible(str(footer)), style="dim"))
        if not self.expanded:
            parts.append(Text("Enter shows the agent's transcript", style="dim italic"))
        return Group(*parts)

    # ---------------------------------------------------------------- TranscriptView (the child's)

    def _add(self, widget: Widget) -> None:
        self.box.mount(widget)

    def new_answer(self) -> AnswerView:
        view = MarkdownStreamView()
        self._add(view)
        return view

    def new_thinking(self) -> ThinkingPane:
        pane = ThinkingPane()
        self._add(pane)
        return pane

    def new_tool_call(self, call_id: str, name: str, args: dict[str, object]) -> ToolCallView:
        view = ToolCallView(call_id, name, dict(args))
        self._add(view)
        return view

    def add_notice(self, kind: str, message: str) -> None:
        self._add(NoticeLine(kind, message))

    def add_counting_notice(self, kind: str, render: Callable[[float], str]) -> CountingNotice:
        notice = CountingNotice(kind, render)  # a sub-agent's retry counts too
        self._add(notice)
        return notice

    def add_user(self, text: str) -> None:
        self._last_user = UserMessage(text)
        self._add(self._last_user)

    def show_user_images(self, images: Sequence[ImagePart]) -> None:
        if self._last_user is not None:
            self._last_user.show_images(images)

    def mount_pending(self) -> None:
        return None  # the child's entries are mounted as they come

    def status_changed(self) -> None:
        self.refresh_view()

    def request_approval(self, request: ev.ApprovalRequested, agent: str | None = None) -> None:
        self.ask(request, agent or self.agent)

    def withdraw_approvals(self) -> None:
        return None  # the parent's turn withdraws every dialog

    def show_output(self, output: ev.CommandOutput) -> None:
        return None

    def session_changed(self, event: ev.SessionChanged) -> None:
        return None

    def confirm(self, request: ev.ConfirmRequested) -> None:
        request.respond(False)  # a sub-agent sends no session requests; never leave one waiting

    def rewound(self, event: ev.Rewound) -> None:
        return None
