"""Showing a resumed session: the last messages at once, earlier ones on demand."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message
from wyckoff_cli.core.shown import NOTICE, shown_user_text
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.image_chips import chips_line
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.task_call import ChildTranscript, TaskCallView
from wyckoff_cli.tui.widgets.thinking import ThinkingPane
from wyckoff_cli.tui.widgets.tool_call import ToolCallView
from wyckoff_cli.tui.widgets.transcript import Transcript

SHOWN_AT_ONCE = 50


class LoadEarlier(Static, can_focus=True):
    """Click (or Enter) to show earlier messages."""

    def __init__(
        self, transcript: Transcript, messages: Sequence[Message], folder: Path | None = None
    ) -> None:
        super().__init__(
            Text(f"↑ {len(messages)} earlier messages — click or Enter to show", style="dim italic")
        )
        self.transcript = transcript
        self.messages = messages
        self.folder = folder

    def on_click(self) -> None:
        self.show_earlier()

    def key_enter(self) -> None:
        self.show_earlier()

    def show_earlier(self) -> None:
        widgets = widgets_for(self.messages[-SHOWN_AT_ONCE:], self.folder)
        rest = self.messages[:-SHOWN_AT_ONCE]
        if rest:
            widgets.insert(0, LoadEarlier(self.transcript, rest, self.folder))
        self.transcript.mount_all(widgets, after=self)
        self.remove()


def replay_history(transcript: Transcript, history: Sequence[Message], folder: Path | None = None) -> None:
    """Show `history`; `folder`, the session's, holds what its messages refer to (a
    task's saved child transcript)."""
    start = max(0, len(history) - SHOWN_AT_ONCE)
    while start > 0 and history[start].role == "tool":  # never split a call from its results
        start -= 1
    widgets = widgets_for(history[start:], folder)
    if start:
        widgets.insert(0, LoadEarlier(transcript, history[:start], folder))
    transcript.mount_all(widgets)
    transcript.follow()


def _with_chips(text: str, message: Message) -> str:
    """The shown text with the message's image chips under it, as shown live."""
    return "\n".join(filter(None, [text, chips_line(message.images)]))


def widgets_for(messages: Sequence[Message], folder: Path | None = None) -> list[Widget]:
    """The transcript of `messages` as it looked live: what the person typed (not what
    was sent: core/shown.py), thinking with its duration, tool calls with their time and
    diff (saved in the messages' meta), a `task` as the task widget with its agent's
    transcript (read from `folder`, the session's), the loop guard's notices,
    interruptions, and a compaction summary folded into one entry."""
    widgets: list[Widget] = []
    calls: dict[str, ToolCallView] = {}
    for message in messages:
        if message.role == "user":
            synthetic = message.meta.get("synthetic")
            if synthetic == "compaction":
                widgets.append(SummaryEntry(message))
            elif synthetic:
                widgets.append(synthetic_notice(message, str(synthetic)))
            else:
                if isinstance(runs := message.meta.get("shell_runs"), list):  # `!command` output went first
                    widgets.extend(shell_run_widgets(runs))
                if shown := _with_chips(shown_user_text(message), message):  # core/shown.py: what they saw
                    widgets.append(UserMessage(shown))
        elif message.role == "assistant":
            thinking_ms = message.meta.get("thinking_ms")
            for thinking in message.thinking:
                pane = ThinkingPane()
                pane.finish(thinking.text, thinking_ms if isinstance(thinking_ms, int) else None)
                widgets.append(pane)
            if message.text:
                widgets.append(MarkdownStreamView(message.text))
            for call in message.tool_calls:
                view = (
                    TaskCallView(call.id, call.name, call.arguments, _no_approvals)  # a sub-agent
                    if call.name == "task"
                    else ToolCallView(call.id, call.name, call.arguments)
                )
                calls[call.id] = view
                widgets.append(view)
            if message.meta.get("interrupted"):
                widgets.append(NoticeLine("aborted", "Interrupted."))
        else:
            answered = calls.get(message.tool_call_id or "")
            if answered is None:
                continue
            elapsed = message.meta.get("elapsed_ms")
            display = message.meta.get("display")
            if message.is_error:
                answered.fail(message.text, 0)
            else:
                shown_images = [image.label for image in message.images]  # the chips, as shown live
                answered.succeed(
                    message.text, 0, display if isinstance(display, dict) else None, shown_images
                )
            answered.elapsed_ms = elapsed if isinstance(elapsed, int) else None
            if isinstance(answered, TaskCallView) and isinstance(display, dict):
                answered.box = ChildTranscript(
                    *child_widgets(folder, display.get("transcript")), classes="-hidden"
                )
            answered.refresh_view()
    return widgets


RETRY_NOTICE = "Reminded the model of what this turn still needed"  # a session saved before notices were


def synthetic_notice(message: Message, synthetic: str) -> NoticeLine:
    """The line shown for a message the runtime sent (never the text sent to the model,
    when the line shown is known: the loop guard's notice)."""
    notice = message.meta.get(NOTICE)
    if synthetic == "loop_guard":
        return NoticeLine("retry", notice if isinstance(notice, str) and notice else RETRY_NOTICE)
    return NoticeLine("background", notice if isinstance(notice, str) and notice else message.text[:300])


def child_widgets(folder: Path | None, saved: object) -> list[Widget]:
    """A task's agent transcript as it showed live (its answers and tool calls; the
    prompt it was given is in the task's call), from the file saved in `folder`."""
    if folder is None or not isinstance(saved, str) or not saved:
        return []
    messages = archived_messages(str(folder / saved))
    if messages and messages[0].role == "user":
        messages = messages[1:]
    return widgets_for(messages, folder)


def _no_approvals(request: ev.ApprovalRequested, agent: str) -> None:
    """A replayed task asks nothing: its sub-agent finished long ago."""


def shell_run_widgets(runs: list[object]) -> list[Widget]:
    """The `!command` runs a message carried, as they looked when they ran."""
    widgets: list[Widget] = []
    for number, run in enumerate(runs):
        if not isinstance(run, dict):
            continue
        command = str(run.get("command", ""))
        widgets.append(UserMessage(f"! {command}"))
        view = ToolCallView(f"replayed-shell-{number}", "run_shell", {"command": command})
        output = str(run.get("output", ""))
        if run.get("failed"):
            view.fail(output, 0)
        else:
            view.succeed(output, 0, {"exit_code": run.get("exit_code")})
        widgets.append(view)
    return widgets


def summary_of(text: str) -> str:
    """The summary inside a compaction message, without the framing for the model."""
    body = text.split(">", 1)[1] if text.startswith("<") else text
    body = body.rsplit("</", 1)[0]
    return body.split("\n\n", 1)[1].strip() if "\n\n" in body else body.strip()


class SummaryEntry(Static, can_focus=True):
    """ "Earlier conversation (summarised)": folded; Enter or a click shows the summary
    and the archived messages it replaced."""

    DEFAULT_CSS = """
    SummaryEntry { padding: 0 1; margin: 0 0 1 0; color: $text-muted; }
    SummaryEntry:focus { background: $boost; }
    """

    def __init__(self, message: Message) -> None:
        replaced = message.meta.get("replaced_messages")
        count = f" — {replaced} messages" if isinstance(replaced, int) else ""
        super().__init__(
            Text(f"▸ Earlier conversation (summarised){count} · Enter or click to show", style="italic")
        )
        self.message = message
        self.opened = False

    def on_click(self) -> None:
        self.open()

    def key_enter(self) -> None:
        self.open()

    def open(self) -> None:
        if self.opened:
            return
        self.opened = True
        self.update(Text("▾ Earlier conversation (summarised)", style="italic"))
        widgets: list[Widget] = [MarkdownStreamView(summary_of(self.message.text))]
        archived = archived_messages(self.message.meta.get("archive"))
        if archived:
            widgets.append(NoticeLine("compaction", f"The {len(archived)} messages it replaced:"))
            widgets.extend(widgets_for(archived))
        parent = self.parent
        if isinstance(parent, Transcript):
            parent.mount_all(widgets, after=self)


def archived_messages(path: object) -> list[Message]:
    """The messages a compaction archived (empty when the archive is gone)."""
    if not isinstance(path, str) or not path:
        return []
    from wyckoff_cli.storage.chatlog import read_jsonl

    try:
        records = read_jsonl(Path(path)).records
    except OSError:
        return []
    return [
        Message.from_dict(record["message"])
        for record in records
        if record.get("kind") == "message" and isinstance(record.get("message"), dict)
    ]
