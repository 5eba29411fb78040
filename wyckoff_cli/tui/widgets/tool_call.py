"""One tool call: a spinner and elapsed time while it runs, a one-line summary of its
arguments, streamed output, then the result collapsed to a few lines (Enter or a
click expands it). Errors use the error colour, edits show a coloured diff, the plan
shows as a checklist.
"""

from __future__ import annotations

import io
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static

from wyckoff_cli.tui.frame_clock import SPINNER, clock_of, spinner_frame
from wyckoff_cli.tui.literal import visible
from wyckoff_cli.tui.widgets.diff import render_diff

COLLAPSED_LINES = 4
COLLAPSED_DIFF_LINES = 14
LIVE_LINES = 12
SUMMARY_KEYS = ("command", "path", "pattern", "task_id", "text", "url")
TODO_MARKS = {"completed": "☑", "in_progress": "◐", "pending": "☐"}


def summarize_args(name: str, args: dict[str, Any], width: int = 90) -> str:
    """The one argument that says what the call does, on one line."""
    for key in SUMMARY_KEYS:
        value = args.get(key)
        if isinstance(value, str) and value:
            line = " ".join(value.split())
            return line if len(line) <= width else line[: width - 1] + "…"
    if not args:
        return ""
    text = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return text if len(text) <= width else text[: width - 1] + "…"


class ToolCallView(Static, can_focus=True):
    DEFAULT_CSS = """
    ToolCallView { padding: 0 1; margin: 0 0 1 0; }
    ToolCallView:focus { background: $boost; }
    ToolCallView.-error { color: $text-error; }
    """
    BINDINGS = [Binding("enter,space", "toggle_open", "Expand/collapse", show=False)]

    def __init__(self, call_id: str, name: str, args: dict[str, Any], **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.call_id = call_id
        self.tool_name = name
        self.args = args
        self.status = "pending"  # pending | running | ok | error | waiting
        self.started: float | None = None
        self.elapsed_ms: int | None = None
        self.output = ""
        self.result = ""
        self.display_data: dict[str, Any] | None = None
        self.images: list[str] = []  # labels of the result's images (read_file on a PNG, an MCP image)
        self.background = False
        self.notes: list[str] = []  # lines shown under the header, before any output
        self.expanded = False
        self._frame = 0
        self._spinning = False  # animated by the app's frame clock while running
        self.hook_lines: list[Text] = []  # one per user hook run for this call

    def on_mount(self) -> None:
        self._spin()  # started before it was attached
        self.refresh_view()

    def start(self, args: dict[str, Any], background: bool) -> None:
        self.args = args
        self.background = background
        self.status = "running"
        self.started = time.monotonic()
        self._spin()
        self.refresh_view()

    def waiting_for_approval(self) -> None:
        self.status = "waiting"
        self.refresh_view()

    def note(self, text: str) -> None:
        """A line under the header (e.g. the rule "always" just saved), before the output."""
        self.notes.append(text)
        self.refresh_view()

    def add_output(self, text: str) -> None:
        self.output += text
        if len(self.output) > 200_000:
            self.output = self.output[-100_000:]
        self.refresh_view()

    def add_hook_line(self, line: str, outcome: str) -> None:
        style = {"ok": "dim", "blocked": "yellow", "error": "red", "timeout": "red"}.get(outcome, "dim")
        self.hook_lines.append(Text(visible(line), style=style))
        self.refresh_view()

    def succeed(
        self, result: str, elapsed_ms: int, display: dict[str, Any] | None, images: Sequence[str] = ()
    ) -> None:
        """`images`: the labels of the images the result gives the model, shown as chips."""
        self.display_data = display
        self.images = list(images)
        self._finish("ok", result, elapsed_ms)

    def fail(self, error: str, elapsed_ms: int) -> None:
        if not elapsed_ms and self.started is not None:  # interrupted: it ran until now
            elapsed_ms = int((time.monotonic() - self.started) * 1000)
        self._finish("error", error, elapsed_ms)
        self.add_class("-error")

    def _finish(self, status: str, result: str, elapsed_ms: int) -> None:
        self.status = status
        self.result = result
        self.elapsed_ms = elapsed_ms
        self._stop_spinning()
        self.refresh_view()

    def _spin(self) -> None:
        if not self._spinning and self.is_attached and self.status == "running":
            self._spinning = True
            clock_of(self.app).animate(self._tick)

    def _stop_spinning(self) -> None:
        if self._spinning:
            self._spinning = False
            clock_of(self.app).stop(self._tick)

    def on_unmount(self) -> None:
        self._stop_spinning()

    def _tick(self, now: float) -> None:
        """Repaint only when the spinner's frame changes (a frame may come early, asked
        for by something else)."""
        frame = spinner_frame(time.monotonic() - (self.started or time.monotonic()))
        if frame != self._frame:
            self._frame = frame
            self.refresh_view()

    def action_toggle_open(self) -> None:
        self.expanded = not self.expanded
        self.refresh_view()

    def on_click(self) -> None:
        self.action_toggle_open()

    def refresh_view(self) -> None:
        # Not mounted yet (held for the next frame, tui/entry_batch.py): its mount lays it
        # out, so a change before then asks for no layout pass of its own.
        self.update(self.render_call(), layout=self.is_mounted)

    def render_call(self) -> RenderableType:
        parts: list[RenderableType] = [self._header()]
        parts.extend(Text(f"  {visible(note)}", style="cyan") for note in self.notes)
        if self.status in ("running", "waiting") and self.output:
            tail = "\n".join(visible(self.output).rstrip("\n").splitlines()[-LIVE_LINES:])
            parts.append(Text(tail, style="dim"))
        elif self.status in ("ok", "error"):
            parts.append(self._body())
            if self.images:
                parts.append(image_chips(self.images))
        parts.extend(self.hook_lines)
        return Group(*parts)

    def status_icon(self) -> tuple[str, str]:
        """The header's (icon, style) for the status: a spinner frame while running."""
        return {
            "pending": ("○", "dim"),
            "waiting": ("?", "bold yellow"),
            "running": (SPINNER[self._frame], "bold cyan"),
            "ok": ("✓", "bold green"),
            "error": ("✗", "bold red"),
        }[self.status]

    def append_progress(self, header: Text) -> None:
        """The header's time (live while running) and "waiting for approval"."""
        if self.status == "running" and self.started is not None:
            header.append(f"  {time.monotonic() - self.started:.1f}s", style="dim")
        elif self.elapsed_ms is not None:
            header.append(f"  {self.elapsed_ms / 1000:.1f}s", style="dim")
        if self.status == "waiting":
            header.append("  waiting for approval", style="yellow")

    def _header(self) -> Text:
        icon, style = self.status_icon()
        header = Text.assemble((f"{icon} ", style), (visible(self.tool_name), "bold"))
        summary = summarize_args(self.tool_name, self.args)
        if summary:
            header.append(f"  {visible(summary)}", style="")
        self.append_progress(header)
        if self.background:
            header.append("  (background)", style="dim")
        return header

    def _body(self) -> RenderableType:
        data = self.display_data or {}
        if self.status == "ok" and isinstance(data.get("todos"), list):
            return todo_checklist(data["todos"])
        if self.status == "ok" and isinstance(data.get("diff"), str) and data["diff"]:
            return self._clip_renderable(data["diff"], diff=True)
        return self._clip_renderable(self.result or self.output, diff=False)

    def _clip_renderable(self, text: str, *, diff: bool) -> RenderableType:
        lines = visible(text).rstrip("\n").splitlines()  # a carriage return is shown, not a line break
        shown = lines if self.expanded else lines[: COLLAPSED_DIFF_LINES if diff else COLLAPSED_LINES]
        body: RenderableType
        if diff:
            body = render_diff("\n".join(shown))
        else:
            style = "red" if self.status == "error" else "dim"
            body = Text("\n".join(shown), style=style)
        hidden = len(lines) - len(shown)
        if hidden > 0:
            return Group(body, Text(f"… {hidden} more lines (Enter to expand)", style="dim italic"))
        return body


def image_chips(labels: Sequence[str]) -> Text:
    """A result's images as the prompt shows attachments: `[Image #1 shot.png 1280×720]`."""
    text = Text()
    for number, label in enumerate(labels, start=1):
        if text:
            text.append(" ")
        text.append(visible(f"[Image #{number} {label}]"), style="bold cyan")
    return text


def plain_text(renderable: RenderableType, width: int = 100) -> str:
    """What a renderable shows, as plain text (for tests and copying)."""
    from rich.console import Console

    console = Console(width=width, color_system=None, file=io.StringIO())
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def todo_checklist(items: list[Any]) -> Text:
    text = Text()
    for item in items:
        if not isinstance(item, dict):
            continue
        status = str(item.get("status", "pending"))
        mark = TODO_MARKS.get(status, "☐")
        style = {"completed": "dim strike", "in_progress": "bold"}.get(status, "")
        if text:
            text.append("\n")
        text.append(visible(f"{mark} {item.get('content') or item.get('text') or ''}"), style=style)
    return text
