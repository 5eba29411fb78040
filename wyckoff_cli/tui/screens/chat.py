"""The chat screen: transcript, queued messages, prompt and status bar.

A turn runs in an exclusive worker owned by this screen; its events go through the
one `EventRouter`. Keys: Esc interrupts; Ctrl+C clears the input, else interrupts,
and twice quits; Ctrl+D quits on an empty input; Shift+Tab cycles permission modes;
Ctrl+O shows or hides all thinking; PageUp/PageDown scroll.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker

from wyckoff_cli.runtime.approval import ApprovalDecision, ApprovalRequest
from wyckoff_cli.runtime.loop import AbortSignal
from wyckoff_cli.tools.policy import PERMISSION_MODES
from wyckoff_cli.tui.chat_session import ChatDeps, ChatSession
from wyckoff_cli.tui.commands import parse_command
from wyckoff_cli.tui.completion import Completions
from wyckoff_cli.tui.router import AnswerView, EventRouter
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.slash import SlashCommands
from wyckoff_cli.tui.status import StatusModel
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.prompt_input import CompletionMenu, PromptInput
from wyckoff_cli.tui.widgets.status_bar import StatusBar
from wyckoff_cli.tui.widgets.thinking import ThinkingPane, collapse_all
from wyckoff_cli.tui.widgets.tool_call import ToolCallView
from wyckoff_cli.tui.widgets.transcript import Transcript

FLUSH_SECONDS = 1 / 30
QUIT_WINDOW = 2.0


class ChatScreen(Screen[None]):
    CSS_PATH = "chat.tcss"
    BINDINGS = [
        Binding("escape", "interrupt", "Interrupt", show=False, priority=True),
        Binding("ctrl+c", "ctrl_c", "Clear / interrupt / quit", show=False, priority=True),
        Binding("ctrl+d", "ctrl_d", "Quit", show=False),
        Binding("shift+tab", "cycle_mode", "Mode", show=False, priority=True),
        Binding("ctrl+o", "toggle_thinking", "Thinking", show=False, priority=True),
        Binding("pageup", "page_up", "Scroll up", show=False, priority=True),
        Binding("pagedown", "page_down", "Scroll down", show=False, priority=True),
    ]

    def __init__(self, deps: ChatDeps, session: ChatSession | None = None) -> None:
        super().__init__()
        self.deps = deps
        self.session = session or ChatSession(deps, self.approve)
        self.session.approver = self.approve
        # The context window is looked up after the first paint (on_mount): it loads the
        # model catalogue, ~25 ms of start-up, and shows only once a call reports usage.
        self.status = StatusModel(model=deps.model, mode=deps.mode, price=deps.price)
        self.router = EventRouter(self, self.status)
        if self.session.loaded is not None:
            self.status.restore(self.session.loaded.info.usage_by_model)
        self.queued: list[str] = []
        self.abort: AbortSignal | None = None
        self.turn_worker: Worker[None] | None = None
        self.thinking_expanded = False
        self._last_ctrl_c = 0.0
        self.completions = Completions(deps.project_root, deps.mcp)
        self.commands = SlashCommands(self)

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        with Vertical(id="bottom"):
            yield Static("", id="queued")
            yield CompletionMenu(id="completions")
            history = load_input_history(self.deps.input_history_file)
            yield PromptInput(history=history, completer=self.completions, id="prompt")
            yield StatusBar(self.status, id="status")

    def on_mount(self) -> None:
        prompt = self.query_one(PromptInput)
        prompt.menu = self.query_one(CompletionMenu)
        prompt.pull_queued = self.pull_queued
        prompt.focus()
        self.set_interval(FLUSH_SECONDS, self.router.flush)
        self.set_interval(1.0, self._watch_background)
        self.call_after_refresh(self._look_up_context_window)
        if self.deps.mcp is not None:  # MCP servers connect in the background
            self.deps.mcp.start()
            self.set_interval(0.5, self._show_mcp)
        if self.session.history:
            self.render_history()
        else:
            self.add_notice(
                "info",
                f"Wyckoff · {self.deps.project_root} · {self.deps.model} · /help for keys and commands",
            )

    # ------------------------------------------------------------------ transcript (TranscriptView)

    @property
    def transcript(self) -> Transcript:
        return self.query_one("#transcript", Transcript)

    def _mount(self, widget: Widget) -> None:
        self.transcript.mount(widget)

    def new_answer(self) -> AnswerView:
        view = MarkdownStreamView()
        self._mount(view)
        return view

    def new_thinking(self) -> ThinkingPane:
        pane = ThinkingPane()
        self._mount(pane)
        return pane

    def new_tool_call(self, call_id: str, name: str, args: dict[str, Any]) -> ToolCallView:
        view = ToolCallView(call_id, name, args)
        self._mount(view)
        return view

    def add_notice(self, kind: str, message: str) -> None:
        self._mount(NoticeLine(kind, message))

    def add_user(self, text: str) -> None:
        self._mount(UserMessage(text))

    def _show_mcp(self) -> None:
        mcp = self.deps.mcp
        assert mcp is not None
        for kind, message in mcp.take_notices():
            self.add_notice(kind, message)
        if self.status.mcp != mcp.status_text():
            self.status.mcp = mcp.status_text()
            self.query_one(StatusBar).refresh_status()

    def _look_up_context_window(self) -> None:
        self.status.context_window = self.deps.context_window(self.status.model)

    def status_changed(self) -> None:
        self.status.background_running = (
            len(self.session.runtime.background.running()) if self.session._runtime else 0
        )
        self.query_one(StatusBar).refresh_status()

    def _watch_background(self) -> None:
        runtime = self.session._runtime
        running = len(runtime.background.running()) if runtime is not None else 0
        if running != self.status.background_running:
            self.status_changed()

    def resume(self, session_id: str) -> None:
        self.commands.resume(session_id)

    def render_history(self) -> None:
        from wyckoff_cli.tui.replay import replay_history

        replay_history(self, self.session.history)

    # ------------------------------------------------------------------ approval

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()

        def done(decision: ApprovalDecision | None) -> None:
            if not future.done():
                future.set_result(decision or ApprovalDecision.deny(None))

        tool = self.session.runtime.tools.get(request.name)
        validate = _validator(tool) if tool is not None else None
        screen = ApprovalScreen(request, validate, self.deps.project_root)
        self.app.push_screen(screen, done)
        try:
            return await future
        except asyncio.CancelledError:
            if screen.is_attached:
                screen.dismiss(ApprovalDecision.deny(None))
            raise

    # ------------------------------------------------------------------ input and turns

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        text = event.text.strip()
        save_input_history(self.deps.input_history_file, event.text)
        command = parse_command(text)
        if command is not None:
            self.commands.run_command(command[0].name, command[1])
            return
        if text.startswith("/mcp__") and self.deps.mcp is not None:
            self.commands.run_mcp_prompt(text)
            return
        if text.startswith("/"):
            self.add_notice("warning", f"Unknown command {text.split()[0]} — /help lists them")
            return
        if self.busy:
            self.queued.append(text)
            self._show_queue()
            return
        self.start_turn(text)

    @property
    def busy(self) -> bool:
        return self.turn_worker is not None and self.turn_worker.is_running

    def start_turn(self, text: str, *, show: bool = True) -> None:
        if show:
            self.add_user(text)
        self.transcript.follow()
        self.abort = AbortSignal()
        self.turn_worker = self.run_turn(text, self.abort)

    @work(exclusive=True, group="turn")
    async def run_turn(self, text: str, abort: AbortSignal, required_tools: tuple[str, ...] = ()) -> None:
        try:
            async for event in self.session.turn(text, abort, required_tools):
                self.router.handle(event)
        except Exception as exc:  # an expected failure must not kill the app
            message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            self.add_notice("error", message)
            self.status.state = "idle"
            self.status_changed()
        self.router.flush()
        self.call_after_refresh(self._next_queued)

    def _next_queued(self) -> None:
        if self.queued and not self.busy:
            text = self.queued.pop(0)
            self._show_queue()
            self.start_turn(text)

    def _show_queue(self) -> None:
        queued = self.query_one("#queued", Static)
        queued.update(
            "\n".join(f"… queued: {q}" for q in self.queued)
            + ("  (Up on an empty prompt edits)" if self.queued else "")
        )
        queued.display = bool(self.queued)

    def pull_queued(self) -> str | None:
        if not self.queued:
            return None
        text = self.queued.pop()
        self._show_queue()
        return text

    # ------------------------------------------------------------------ actions

    def action_interrupt(self) -> None:
        if isinstance(self.app.screen, ApprovalScreen):
            return
        if self.busy and self.abort is not None:
            self.abort.abort()

    def action_ctrl_c(self) -> None:
        selected = self.get_selected_text()
        if selected:
            self.app.copy_to_clipboard(selected)
            self.clear_selection()
            self.notify("Copied", timeout=1.5)
            return
        prompt = self.query_one(PromptInput)
        if prompt.text:
            prompt.clear()
            return
        if self.busy and self.abort is not None:
            self.abort.abort()
            return
        now = time.monotonic()
        if now - self._last_ctrl_c < QUIT_WINDOW:
            self.app.exit()
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit", timeout=QUIT_WINDOW)

    def action_ctrl_d(self) -> None:
        if not self.query_one(PromptInput).text:
            self.app.exit()

    def action_cycle_mode(self) -> None:
        modes = list(PERMISSION_MODES)
        self.set_mode(modes[(modes.index(self.status.mode) + 1) % len(modes)])  # type: ignore[arg-type]

    def set_mode(self, mode: str) -> None:
        self.session.set_mode(mode)
        self.status.mode = mode
        self.status_changed()

    def action_toggle_thinking(self) -> None:
        self.thinking_expanded = not self.thinking_expanded
        collapse_all(list(self.transcript.children), self.thinking_expanded)

    def action_page_up(self) -> None:
        self.transcript.scroll_page_up()

    def action_page_down(self) -> None:
        self.transcript.scroll_page_down()


def _validator(tool: Any) -> Any:
    from wyckoff_cli.core.errors import ToolError

    def validate(args: dict[str, Any]) -> str | None:
        try:
            tool.check_arguments(args)
        except ToolError as exc:
            return exc.message
        return None

    return validate


def load_input_history(path: Path | None, limit: int = 500) -> list[str]:
    if path is None:
        return []
    import json

    try:
        lines = path.read_text(encoding="utf-8").splitlines()[-limit:]
    except OSError:
        return []
    entries: list[str] = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, str):
            entries.append(value)
    return entries


def save_input_history(path: Path | None, text: str) -> None:
    if path is None or not text.strip():
        return
    import json
    import os

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(text) + "\n")
