"""The one place where runtime events become screen updates.

`EventRouter.handle(event)` is a single `match` over the event union ending in
`assert_never`, so a new event type fails type-checking until it is handled here.
The figures of the status bar come from the chat controller (which sees every event
first); the router sets the display state and asks the bar to repaint.
Deltas are coalesced before they reach a widget: text, thinking and tool output are
buffered and handed over by `flush()` at the next frame of the app's clock (the first
buffered delta asks the screen for one flush) and at every non-delta event; the answer
widget then renders once in that same frame. A delta costs a list append.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, assert_never

from wyckoff_cli.core import events as ev
from wyckoff_cli.session.status import StatusModel
from wyckoff_cli.tui.sources import server_tool_text
from wyckoff_cli.tui.widgets.counting_notice import retry_wait_text
from wyckoff_cli.tui.widgets.thinking import ThinkingPane
from wyckoff_cli.tui.widgets.tool_call import ToolCallView


class AnswerView(Protocol):
    def append(self, text: str) -> None: ...
    def finish(self) -> None: ...
    def discard(self) -> None: ...


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
    def status_changed(self) -> None: ...
    def request_approval(self, request: ev.ApprovalRequested, agent: str | None = None) -> None: ...
    def withdraw_approvals(self) -> None: ...
    def show_output(self, output: ev.CommandOutput) -> None: ...
    def session_changed(self, event: ev.SessionChanged) -> None: ...


class EventRouter:
    def __init__(
        self, view: TranscriptView, status: StatusModel, schedule_flush: Callable[[], None] | None = None
    ) -> None:
        self.view = view
        self.status = status
        self.schedule_flush = schedule_flush  # asks for one `flush()` at the next frame
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

    def _want_flush(self) -> None:
        if not self._flush_pending and self.schedule_flush is not None:
            self._flush_pending = True
            self.schedule_flush()

    def _close_answer(self) -> None:
        self.flush()
        if self.answer is not None:
            self.answer.finish()
            self.answer = None
        self._answer_parts = []

    def _drop_partial(self) -> None:
        """A failed attempt's answer and thinking leave the screen (fallback, retry)."""
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
            case ev.TextDelta(text=text):
                if self.answer is None:
                    self.flush()
                    self.answer = self.view.new_answer()
                    self._set_state("responding")
                self._text_buffer.append(text)
                if self.schedule_flush is None:
                    self.flush()  # no clock to wait for (a bare router)
                else:
                    self._want_flush()
                return
            case ev.ThinkingDelta(text=text):
                self._thinking_buffer += text
                self._set_state("thinking")
                self._want_flush()
                return
            case ev.ToolOutput(id=call_id, text=text):
                self._output_buffers[call_id] = self._output_buffers.get(call_id, "") + text
                self._want_flush()
                return
            case ev.ModelStart():
                if self._turn_started is None:
                    self._turn_started = time.monotonic()
                self._close_answer()
                self.thinking = None
                self._set_state("thinking")
            case ev.ThinkingDone(text=text, duration_ms=duration):
                if self.thinking is None:
                    self.thinking = self.view.new_thinking()
                self.thinking.finish(text, duration)
            case ev.ToolCallsReceived(calls=calls):
                self._close_answer()
                for call in calls:
                    self.tools[call["id"]] = self.view.new_tool_call(call["id"], call["name"], call["args"])
            case ev.ApprovalRequested(id=call_id):
                view = self.tools.get(call_id)
                if view is not None:
                    view.waiting_for_approval()
                self._set_state("waiting for approval")
                if not event.answered:
                    self.view.request_approval(event)
            case ev.ApprovalDecided(id=call_id, decision=decision, rule=rule, feedback=feedback):
                if decision == "always" and rule:
                    # shown on the call itself, before it runs (not after its output)
                    call_view = self.tools.get(call_id)
                    if call_view is not None:
                        call_view.note(f"Always allowed from now on: {rule}")
                    else:
                        self.view.add_notice("info", f"Always allowed from now on: {rule}")
                elif decision == "deny" and feedback:
                    self.view.add_notice("info", f"Denied with feedback: {feedback}")
            case ev.ToolStarted(id=call_id, name=name, args=args, background=background):
                view = self.tools.get(call_id) or self.view.new_tool_call(call_id, name, args)
                self.tools[call_id] = view
                view.start(args, background)
                self._set_state(f"running {name}")
            case ev.ToolSucceeded(id=call_id, result=result, elapsed_ms=elapsed, display=display):
                view = self.tools.get(call_id)
                if view is not None:
                    view.succeed(result, elapsed, display)
            case ev.ToolFailed(id=call_id, name=name, error=error, elapsed_ms=elapsed):
                view = self.tools.get(call_id)
                if view is None:
                    view = self.tools[call_id] = self.view.new_tool_call(call_id, name, {})
                view.fail(error, elapsed)
            case ev.BackgroundTaskUpdate(task_id=task_id, status=status, summary=summary, exit_code=code):
                suffix = f" (exit {code})" if code is not None else ""
                self.view.add_notice("background", f"Background task {task_id} {status}{suffix}: {summary}")
            case ev.Compacted(
                before_messages=b, after_messages=a, before_tokens=bt, after_tokens=at, method=m
            ):
                how = "summarised" if m == "summary" else "trimmed (the summary failed)"
                self.view.add_notice(
                    "compaction", f"Context {how}: {b} → {a} messages, ~{bt:,} → ~{at:,} tokens"
                )
            case ev.RetryInjected():
                self.view.add_notice("retry", event.notice)
            case ev.UsageReported() | ev.ModelChanged() | ev.ModeChanged():
                self.view.status_changed()
            case ev.FallbackSwitched(from_model=old, to_model=new, error=error):
                self._drop_partial()
                self.view.add_notice("fallback", f"{old} failed ({error}); continuing with {new}")
                self.view.status_changed()
            case ev.Retrying():
                self._drop_partial()
                self._waiting = self.view.add_counting_notice("retry", retry_wait_text(event))
            case ev.ServerToolUsed(summary=summary, sources=sources):
                self.view.add_notice("info", server_tool_text(summary, sources))
            case ev.Notice(level=level, message=message):
                self.view.add_notice(level, message)
            case ev.HookRan(call_id=call_id):
                line = hook_line(event)
                view = self.tools.get(call_id) if call_id else None
                if view is not None:
                    view.add_hook_line(line, event.outcome)
                elif event.outcome != "ok" or event.message:
                    self.view.add_notice("warning" if event.outcome != "ok" else "info", line)
            case ev.MessageCommitted():
                pass  # the session recorder persists it
            case ev.TurnFailed(kind=kind, message=message):
                self._failure = event
                self.view.add_notice("error", f"{kind}: {message}")
            case ev.CommandOutput():
                self.view.show_output(event)
            case ev.SessionChanged():
                self._close_answer()
                self.view.session_changed(event)
            case ev.TurnDone(reason=reason):
                self.view.withdraw_approvals()
                self._close_answer()
                if self.thinking is not None and self.thinking.live:
                    self.thinking.interrupt()  # its round ended without a ThinkingDone
                self.last_done = event
                if reason == "aborted":
                    self.view.add_notice("aborted", "Interrupted.")
                elif reason == "max_tool_rounds":
                    self.view.add_notice(
                        "warning", "Stopped at the tool-round limit; say “continue” to go on."
                    )
                self._set_state("idle")
                self._turn_ended(event)
            case ev.SubagentEvent(parent_call_id=call_id):
                view = self.tools.get(call_id)
                child = getattr(view, "child_event", None)  # a task's widget (tui/widgets/task_call.py)
                if child is not None:
                    child(event)
                else:
                    request = ev.approval_of(event)  # no widget to show it in: still ask
                    if request is not None and not request.answered:
                        self.view.request_approval(request, event.agent)
            case _:
                assert_never(event)

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
