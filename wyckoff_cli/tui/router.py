"""The one place where runtime events become screen updates.

`EventRouter.handle(event)` is a single `match` over the event union ending in
`assert_never`, so a new event type fails type-checking until it is handled here;
each arm is one line, naming the method that handles it.
The figures of the status bar come from the chat controller (which sees every event
first); the router sets the display state and asks the bar to repaint.
Deltas are coalesced before they reach a widget: text, thinking and tool output are
buffered and handed over by `flush()` at the next frame of the app's clock (the first
buffered delta asks the screen for one flush) and at every non-delta event; the answer
widget then renders once in that same frame. A delta costs a list append.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, assert_never, runtime_checkable

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import ImagePart, Message
from wyckoff_cli.session.status import StatusModel
from wyckoff_cli.tui.sources import server_tool_text
from wyckoff_cli.tui.widgets.counting_notice import retry_wait_text
from wyckoff_cli.tui.widgets.thinking import ThinkingPane
from wyckoff_cli.tui.widgets.tool_call import ToolCallView


class AnswerView(Protocol):
    def append(self, text: str) -> None: ...
    def finish(self) -> None: ...
    def discard(self) -> None: ...


class RoundFold(Protocol):
    """Folds old rounds of a long live session (tui/transcript_fold.py)."""

    def committed(self, message: dict[str, Any]) -> None: ...
    def round_started(self) -> None: ...


class CountingView(Protocol):
    def stop(self) -> None: ...


class TranscriptView(Protocol):
    """What the router needs from the chat screen's transcript."""

    def new_answer(self) -> AnswerView: ...
    def new_thinking(self) -> ThinkingPane: ...
    def new_tool_call(self, call_id: str, name: str, args: dict[str, object]) -> ToolCallView: ...
    def add_notice(self, kind: str, message: str) -> None: ...
    def add_counting_notice(self, kind: str, render: Callable[[float], str]) -> CountingView: ...
    def add_user(self, text: str) -> None: ...
    def show_user_images(self, images: Sequence[ImagePart]) -> None: ...  # the last user message's
    def mount_pending(self) -> None: ...  # entries held for the next frame, mounted now
    def status_changed(self) -> None: ...
    def request_approval(self, request: ev.ApprovalRequested, agent: str | None = None) -> None: ...
    def withdraw_approvals(self) -> None: ...
    def show_output(self, output: ev.CommandOutput) -> None: ...
    def session_changed(self, event: ev.SessionChanged) -> None: ...
    def confirm(self, request: ev.ConfirmRequested) -> None: ...
    def rewound(self, event: ev.Rewound) -> None: ...


@runtime_checkable
class ChildHost(Protocol):
    """A widget that shows a sub-agent's events itself (the task widget)."""

    def child_event(self, wrapped: ev.SubagentEvent) -> None: ...


class EventRouter:
    def __init__(
        self,
        view: TranscriptView,
        status: StatusModel,
        schedule_flush: Callable[[bool], None] | None = None,
    ) -> None:
        self.view = view
        self.status = status
        self.schedule_flush = schedule_flush  # asks for one `flush()` at the next frame (True: at once)
        self._flush_pending = False
        self.answer: AnswerView | None = None
        self._answer_parts: list[str] = []  # the answer's text so far (`answer_text`)
        self._text_buffer: list[str] = []  # text not yet handed to the answer widget
        self.thinking: ThinkingPane | None = None
        self.tools: dict[str, ToolCallView] = {}
        self._thinking_buffer = ""
        self._output_buffers: dict[str, str] = {}
        self.last_done: ev.TurnDone | None = None
        # told when a turn ends: (done, the failure before it, seconds since its first model call)
        self.on_turn_end: Callable[[ev.TurnDone, ev.TurnFailed | None, float | None], None] | None = None
        self._turn_started: float | None = None
        self._failure: ev.TurnFailed | None = None
        self._waiting: CountingView | None = None  # the retry notice counting the wait
        self.fold: RoundFold | None = None  # folds old rounds of a long live session

    # ------------------------------------------------------------------ coalescing

    @property
    def answer_text(self) -> str:
        """The text of the answer streaming now (empty between answers)."""
        if len(self._answer_parts) > 1:
            self._answer_parts = ["".join(self._answer_parts)]
        return self._answer_parts[0] if self._answer_parts else ""

    def flush(self) -> None:
        self._flush_pending = False
        if self._text_buffer:
            text = "".join(self._text_buffer)
            self._text_buffer.clear()
            self._answer_parts.append(text)
            if self.answer is not None:
                self.answer.append(text)
        if self._thinking_buffer:
            if self.thinking is None:
                self.thinking = self.view.new_thinking()
            self.thinking.append(self._thinking_buffer)
            self._thinking_buffer = ""
        if self._output_buffers:
            buffers, self._output_buffers = self._output_buffers, {}
            for call_id, text in buffers.items():
                view = self.tools.get(call_id)
                if view is not None:
                    view.add_output(text)

    def _want_flush(self, soon: bool = False) -> None:
        if self.schedule_flush is not None and (soon or not self._flush_pending):
            self._flush_pending = True
            self.schedule_flush(soon)

    def _close_answer(self) -> None:
        self.flush()
        if self.answer is not None:
            self.answer.finish()
            self.answer = None
        self._answer_parts = []

    def _drop_partial(self) -> None:
        """A failed attempt's answer and thinking leave the screen (fallback, retry)."""
        self.view.mount_pending()  # they may be held for the next frame still
        self._text_buffer.clear()
        if self.answer is not None:
            self.answer.discard()
            self.answer = None
        self._answer_parts = []
        if self.thinking is not None:
            self.thinking.remove()
            self.thinking = None

    def _set_state(self, state: str) -> None:
        if self.status.state != state:
            self.status.state = state
            self.view.status_changed()

    # ------------------------------------------------------------------ dispatch

    def handle(self, event: ev.RuntimeEvent) -> None:
        if not isinstance(event, ev.TextDelta | ev.ThinkingDelta | ev.ToolOutput):
            self.flush()
        if self._waiting is not None and isinstance(event, _WAIT_ENDS):
            self._waiting.stop()
            self._waiting = None
        match event:
            case ev.TextDelta():
                self._text(event)
            case ev.ThinkingDelta():
                self._thinking_delta(event)
            case ev.ToolOutput():
                self._tool_output(event)
            case ev.ModelStart():
                self._model_start(event)
            case ev.ThinkingDone():
                self._thinking_done(event)
            case ev.ToolCallsReceived():
                self._tool_calls(event)
            case ev.ApprovalRequested():
                self._approval_requested(event)
            case ev.ApprovalDecided():
                self._approval_decided(event)
            case ev.ToolStarted():
                self._tool_started(event)
            case ev.ToolSucceeded():
                self._tool_succeeded(event)
            case ev.ToolFailed():
                self._tool_failed(event)
            case ev.BackgroundTaskUpdate():
                self._background_task(event)
            case ev.Compacted():
                self._compacted(event)
            case ev.RetryInjected():
                self._retry_injected(event)
            case ev.UsageReported() | ev.ModelChanged() | ev.ModeChanged():
                self.view.status_changed()
            case ev.Preparing():
                self._set_state(event.what)
            case ev.FallbackSwitched():
                self._fallback(event)
            case ev.Retrying():
                self._retrying(event)
            case ev.ServerToolUsed():
                self.view.add_notice("info", server_tool_text(event.summary, event.sources))
            case ev.Notice():
                self.view.add_notice(event.level, event.message)
            case ev.BudgetWarning():
                pass  # the notice that follows it says the same
            case ev.HookRan():
                self._hook_ran(event)
            case ev.MessageCommitted():
                self._committed(event)  # the session recorder persists it
            case ev.TurnFailed():
                self._turn_failed(event)
            case ev.CommandOutput():
                self.view.show_output(event)
            case ev.SessionChanged():
                self._session_changed(event)
            case ev.ConfirmRequested():
                self.view.confirm(event)
            case ev.Rewound():
                self._rewound(event)
            case ev.TurnDone():
                self._turn_done(event)
            case ev.SubagentEvent():
                self._subagent(event)
            case _:
                assert_never(event)

    # ------------------------------------------------------------------ one method per event

    def _text(self, event: ev.TextDelta) -> None:
        first = self.answer is None
        if first:
            self.flush()
            self.answer = self.view.new_answer()
            self._set_state("responding")
        self._text_buffer.append(event.text)
        if self.schedule_flush is None:
            self.flush()  # no clock to wait for (a bare router)
        else:
            self._want_flush(soon=first)  # the answer's first text waits for no spinner's frame

    def _thinking_delta(self, event: ev.ThinkingDelta) -> None:
        self._thinking_buffer += event.text
        self._set_state("thinking")
        self._want_flush()

    def _tool_output(self, event: ev.ToolOutput) -> None:
        self._output_buffers[event.id] = self._output_buffers.get(event.id, "") + event.text
        self._want_flush()

    def _model_start(self, event: ev.ModelStart) -> None:
        if self._turn_started is None:
            self._turn_started = time.monotonic()
        self._close_answer()
        self.thinking = None
        self._set_state("thinking")
        if self.fold is not None:
            self.fold.round_started()

    def _committed(self, event: ev.MessageCommitted) -> None:
        message = event.message
        if _a_users_images(message):  # what was sent: an `@` mention's images too
            self.view.show_user_images(Message.from_dict(message).images)
        if self.fold is not None:
            self.fold.committed(event.message)

    def _thinking_done(self, event: ev.ThinkingDone) -> None:
        if self.thinking is None:
            self.thinking = self.view.new_thinking()
        self.thinking.finish(event.text, event.duration_ms)

    def _tool_calls(self, event: ev.ToolCallsReceived) -> None:
        self._close_answer()
        for call in event.calls:
            self.tools[call["id"]] = self.view.new_tool_call(call["id"], call["name"], call["args"])

    def _approval_requested(self, event: ev.ApprovalRequested) -> None:
        view = self.tools.get(event.id)
        if view is not None:
            view.waiting_for_approval()
        self._set_state("waiting for approval")
        if not event.answered:
            self.view.request_approval(event)

    def _approval_decided(self, event: ev.ApprovalDecided) -> None:
        if event.decision == "always" and event.rule:
            # shown on the call itself, before it runs (not after its output)
            call_view = self.tools.get(event.id)
            if call_view is not None:
                call_view.note(f"Always allowed from now on: {event.rule}")
            else:
                self.view.add_notice("info", f"Always allowed from now on: {event.rule}")
        elif event.decision == "deny" and event.feedback:
            self.view.add_notice("info", f"Denied with feedback: {event.feedback}")

    def _tool_started(self, event: ev.ToolStarted) -> None:
        view = self.tools.get(event.id) or self.view.new_tool_call(event.id, event.name, event.args)
        self.tools[event.id] = view
        view.start(event.args, event.background)
        self._set_state(f"running {event.name}")

    def _tool_succeeded(self, event: ev.ToolSucceeded) -> None:
        view = self.tools.get(event.id)
        if view is not None:
            view.succeed(event.result, event.elapsed_ms, event.display, event.images)

    def _tool_failed(self, event: ev.ToolFailed) -> None:
        view = self.tools.get(event.id)
        if view is None:
            view = self.tools[event.id] = self.view.new_tool_call(event.id, event.name, {})
        view.fail(event.error, event.elapsed_ms)

    def _background_task(self, event: ev.BackgroundTaskUpdate) -> None:
        suffix = f" (exit {event.exit_code})" if event.exit_code is not None else ""
        self.view.add_notice(
            "background", f"Background task {event.task_id} {event.status}{suffix}: {event.summary}"
        )

    def _compacted(self, event: ev.Compacted) -> None:
        how = "summarised" if event.method == "summary" else "trimmed (the summary failed)"
        self.view.add_notice(
            "compaction",
            f"Context {how}: {event.before_messages} → {event.after_messages} messages, "
            f"~{event.before_tokens:,} → ~{event.after_tokens:,} tokens",
        )

    def _retry_injected(self, event: ev.RetryInjected) -> None:
        self.view.add_notice("retry", event.notice)

    def _fallback(self, event: ev.FallbackSwitched) -> None:
        self._drop_partial()
        self.view.add_notice(
            "fallback", f"{event.from_model} failed ({event.error}); continuing with {event.to_model}"
        )
        self.view.status_changed()

    def _retrying(self, event: ev.Retrying) -> None:
        self._drop_partial()
        self._waiting = self.view.add_counting_notice("retry", retry_wait_text(event))

    def _hook_ran(self, event: ev.HookRan) -> None:
        line = hook_line(event)
        view = self.tools.get(event.call_id) if event.call_id else None
        if view is not None:
            view.add_hook_line(line, event.outcome)
        elif event.outcome != "ok" or event.message:
            self.view.add_notice("warning" if event.outcome != "ok" else "info", line)

    def _turn_failed(self, event: ev.TurnFailed) -> None:
        self._failure = event
        self.view.add_notice("error", f"{event.kind}: {event.message}")

    def _session_changed(self, event: ev.SessionChanged) -> None:
        self._close_answer()
        self.view.session_changed(event)

    def _rewound(self, event: ev.Rewound) -> None:
        self._close_answer()
        self.view.rewound(event)

    def _turn_done(self, event: ev.TurnDone) -> None:
        self.view.withdraw_approvals()
        self._close_answer()
        if self.thinking is not None and self.thinking.live:
            self.thinking.interrupt()  # its round ended without a ThinkingDone
        self.last_done = event
        if event.reason == "aborted":
            self.view.add_notice("aborted", "Interrupted.")
        elif event.reason == "max_tool_rounds":
            self.view.add_notice("warning", "Stopped at the tool-round limit; say “continue” to go on.")
        self.view.mount_pending()  # the turn's last entries now, not at the next frame
        self._set_state("idle")
        self._turn_ended(event)

    def _subagent(self, event: ev.SubagentEvent) -> None:
        view: object = self.tools.get(event.parent_call_id)
        if isinstance(view, ChildHost):  # a task's widget (tui/widgets/task_call.py)
            view.child_event(event)
            return
        request = ev.approval_of(event)  # no widget to show it in: still ask
        if request is not None and not request.answered:
            self.view.request_approval(request, event.agent)

    def _turn_ended(self, done: ev.TurnDone) -> None:
        started, failure = self._turn_started, self._failure
        self._turn_started = self._failure = None
        if self.on_turn_end is not None:
            self.on_turn_end(done, failure, None if started is None else time.monotonic() - started)


# what ends a retry's wait: output, another model or attempt, the end of the turn
_WAIT_ENDS = (
    ev.TextDelta,
    ev.ThinkingDelta,
    ev.ToolCallsReceived,
    ev.FallbackSwitched,
    ev.Retrying,
    ev.TurnFailed,
    ev.TurnDone,
)


def hook_line(event: ev.HookRan) -> str:
    """`↳ PreToolUse hook ./check.sh · 12 ms · blocked: no rm`."""
    command = event.command if len(event.command) <= 60 else event.command[:59] + "…"
    text = f"↳ {event.hook_event} hook {command} · {event.elapsed_ms} ms · {event.outcome}"
    return f"{text}: {event.message}" if event.message else text


def _a_users_images(message: dict[str, Any]) -> bool:
    """Whether a committed message is a person's message with images."""
    if message.get("role") != "user" or message.get("meta", {}).get("synthetic"):
        return False
    return any(part.get("type") == "image" for part in message.get("parts", ()))
