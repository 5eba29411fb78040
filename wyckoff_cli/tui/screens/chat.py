"""The chat screen: transcript, queued messages, prompt and status bar.

The screen renders events and forwards keys; the `ChatController` does the rest. A
turn (or a slash command) runs in an exclusive worker owned by this screen; its events
go through the one `EventRouter`. Keys: Esc interrupts; Ctrl+C clears the input, else
interrupts, and twice quits; Ctrl+D quits on an empty input; Shift+Tab cycles
permission modes; Ctrl+O shows or hides all thinking; PageUp/PageDown scroll.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.worker import Worker

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.session import extensions, warm
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.session.custom_commands import TurnRequest
from wyckoff_cli.session.lsp import lsp_segment
from wyckoff_cli.tools.mcp.server_asks import ELICITATION
from wyckoff_cli.tools.plan import EXIT_PLAN
from wyckoff_cli.tui import agents_requests, chat_requests, heap, image_attach
from wyckoff_cli.tui.completion import Completions
from wyckoff_cli.tui.entry_batch import EntryBatch
from wyckoff_cli.tui.frame_clock import clock_of
from wyckoff_cli.tui.help_table import help_table
from wyckoff_cli.tui.input_history import load_input_history, save_input_history
from wyckoff_cli.tui.literal import literal, visible
from wyckoff_cli.tui.replay import replay_history
from wyckoff_cli.tui.router import EventRouter
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.screens.elicitation import ElicitationScreen
from wyckoff_cli.tui.screens.plan_approval import PlanApprovalScreen
from wyckoff_cli.tui.screens.rewind import DoubleEscape
from wyckoff_cli.tui.shell_line import attached_lines, drop_attached, run_shell_line, shell_line
from wyckoff_cli.tui.status_line_view import attach_status_line
from wyckoff_cli.tui.textual_compat import draw_changed_rows_only
from wyckoff_cli.tui.transcript_entries import TranscriptEntries
from wyckoff_cli.tui.transcript_find import FindBar, Finder
from wyckoff_cli.tui.transcript_fold import TranscriptFold
from wyckoff_cli.tui.widgets.command_table import CommandTable
from wyckoff_cli.tui.widgets.entries import NoticeLine
from wyckoff_cli.tui.widgets.image_chips import ImageChips, chips_line
from wyckoff_cli.tui.widgets.markdown_stream import RENDERER
from wyckoff_cli.tui.widgets.prompt_input import CompletionMenu, PromptInput
from wyckoff_cli.tui.widgets.status_bar import StatusBar
from wyckoff_cli.tui.widgets.thinking import collapse_all
from wyckoff_cli.tui.widgets.transcript import Transcript

QUIT_WINDOW = 2.0


class ChatScreen(TranscriptEntries, Screen[None]):
    CSS_PATH = "chat.tcss"
    AUTO_FOCUS = "#prompt"  # back from a dialog after the terminal lost focus: the prompt, not the transcript
    BINDINGS = [
        Binding("escape", "interrupt", "Interrupt", show=False, priority=True),
        Binding("ctrl+c", "ctrl_c", "Clear / interrupt / quit", show=False, priority=True),
        # priority: the prompt's own Ctrl+D (delete right) would take it otherwise
        Binding("ctrl+d", "ctrl_d", "Quit", show=False, priority=True),
        Binding("ctrl+home", "top", "Top of the transcript", show=False, priority=True),
        Binding("ctrl+end", "bottom", "Bottom of the transcript", show=False, priority=True),
        Binding("ctrl+f", "find", "Find", show=False, priority=True),
        Binding("shift+tab", "cycle_mode", "Mode", show=False, priority=True),
        Binding("ctrl+o", "toggle_thinking", "Thinking", show=False, priority=True),
        Binding("pageup", "page_up", "Scroll up", show=False, priority=True),
        Binding("pagedown", "page_down", "Scroll down", show=False, priority=True),
        Binding("ctrl+b", "agents", "Agents", show=False, priority=True),
    ]

    def __init__(self, controller: ChatController) -> None:
        super().__init__()
        # a streamed line or a spinner's turn redraws its rows, not the box between them
        draw_changed_rows_only(self)
        self.controller = controller
        self.status = controller.status
        self.router = EventRouter(self, self.status, schedule_flush=self._schedule_flush)
        # new entries mount once per frame (issue 36): fast rounds share a layout pass
        self.entry_batch = EntryBatch(
            self, lambda widgets: self.transcript.mount_all(widgets), lambda: self.busy
        )
        self.fold = self.router.fold = TranscriptFold(
            lambda: self.transcript, self.router.tools, self._session_folder, lambda: self.entry_batch.pending
        )
        self.queued: list[str] = []
        self.turn_worker: Worker[None] | None = None
        self.thinking_expanded = False
        self._last_ctrl_c = 0.0
        self._approvals: list[ApprovalScreen | ElicitationScreen] = []
        self._escapes = DoubleEscape()
        self.completions = Completions(
            controller.root, lambda: controller.slash_commands, controller.builder.mcp
        )
        self.finder = Finder()
        self.queue_held = False  # after Esc, queued messages wait for Enter
        self._held: list[Widget] | None = None  # mounted once the transcript is replaced
        self._mcp_trust_notice: Widget | None = None
        self._status_bar: StatusBar | None = None

    def compose(self) -> ComposeResult:
        yield Transcript(id="transcript")
        with Vertical(id="bottom"):
            yield Static("", id="queued")
            yield CompletionMenu(id="completions")
            yield FindBar(id="find")
            yield ImageChips(id="chips")
            history = load_input_history(self.controller.input_history_file)
            yield PromptInput(history=history, completer=self.completions, id="prompt")
            yield StatusBar(self.status, id="status")

    def on_mount(self) -> None:
        prompt = self.query_one(PromptInput)
        prompt.menu = self.query_one(CompletionMenu)
        prompt.pull_queued = self.pull_queued
        prompt.on_empty_enter = self.send_held_queue
        chips = self.query_one(ImageChips)
        prompt.on_empty_backspace = lambda: image_attach.drop_last(self, chips) or drop_attached(self)
        prompt.on_paste_image = lambda: self.run_worker(image_attach.paste_clipboard(self, chips, prompt))
        prompt.on_paste_path = lambda text: image_attach.attach_path(self, chips, text)
        prompt.focus()
        self.controller.on_background = self.status_changed
        # The context window is looked up after the first paint: it loads the model
        # catalogue, ~25 ms of start-up, and shows only once a call reports usage.
        self.call_after_refresh(self._look_up_context_window)
        self.call_after_refresh(self._prepare)  # the SDK imports in a thread meanwhile
        self.call_after_refresh(self._shell_notice)  # why commands run unsandboxed (issue 22)
        self.status_line = attach_status_line(self)  # `[ui] status_line`, Claude Code's statusLine
        if self.controller.builder.mcp is not None:  # MCP servers connect in the background
            self.controller.builder.mcp.on_change = self._mcp_changed  # no polling: they report changes
            # after the first paint: their start-up competes for the CPU (issue 36)
            self.call_after_refresh(self._start_mcp)
        if len(self.controller.conversation):
            self.render_history()
            self.add_notice(
                "info", f"Resumed session {self.controller.id} · {len(self.controller.conversation)} messages"
            )
        else:
            self.add_notice(
                "info",
                f"Wyckoff · {self.controller.root} · {self.controller.model} · /help for keys and commands",
            )
        self.call_after_refresh(self._ask_hook_trust, self._ask_mcp_trust)  # one dialog after the other
        agents_requests.watch_waiting(self)  # a background session that waits shows in the status bar

    def _prepare(self) -> None:
        self.run_worker(self._warm_up(), group="prepare")

    async def _warm_up(self) -> None:
        """The first message's one-time work, in worker threads while nothing waits for
        it: the controller's (SDK, session modules, provider), then the answer's renderer."""
        await self.controller.prepare()
        await warm.ready([RENDERER])  # imported on the first delta otherwise (~10-30 ms)
        heap.app_warm(self.busy)  # the start-up heap collected once and set aside

    def _ask_hook_trust(self, then: Callable[[], None]) -> None:
        """Project hooks not trusted yet: ask, naming each command, before any turn;
        `then` (the MCP question) once answered, so two dialogs never stack."""
        waiting = self.controller.hooks_needing_trust()
        if not waiting:
            then()
            return
        from wyckoff_cli.tui.screens.trust import HookTrustScreen

        def answered(trusted: bool | None) -> None:
            chat_requests.send_now(self, rq.TrustHooks(tuple(waiting), bool(trusted)))
            then()

        self.app.push_screen(HookTrustScreen(waiting), answered)

    def _shell_notice(self) -> None:
        if notice := self.controller.builder.shell_notice():
            self.add_notice("warning", notice)
        for problem in self.controller.builder.agents().problems:  # agent files skipped, once
            self.add_notice("warning", problem)
        if notice := self.controller.untrusted_allow_notice():  # the project's allow rules (issue 27)
            self.add_notice("warning", notice)
        if notice := self.controller.mode_notice:  # yolo asked for, disabled by a managed policy
            self.add_notice("warning", notice)

    # ------------------------------------------------------------------ transcript (TranscriptView)

    @property
    def transcript(self) -> Transcript:
        return self.query_one("#transcript", Transcript)

    def _mount(self, widget: Widget) -> None:
        if not self.is_attached:  # the app is closing: a late event has nowhere to go
            return
        if self._held is not None:  # the transcript is being replaced: after it
            self._held.append(widget)
            return
        self.entry_batch.add(widget)

    def _ask_mcp_trust(self) -> None:
        """The project's `.mcp.json` names commands to run: ask once, before any starts."""
        from wyckoff_cli.tui.screens.mcp_trust import McpTrustScreen

        mcp = self.controller.builder.mcp
        question = mcp.trust_prompt() if mcp is not None else None
        if mcp is None or question is None:
            return

        def answered(trusted: bool | None) -> None:
            if trusted:
                self.add_notice("info", mcp.trust())
                self._show_mcp()

        self.app.push_screen(McpTrustScreen(question), answered)

    def _start_mcp(self) -> None:
        if self.controller.builder.mcp is not None:
            self.controller.builder.mcp.start()
            self._show_mcp()

    def _mcp_changed(self) -> None:
        self.call_later(self._show_mcp)

    def _show_mcp(self) -> None:
        mcp = self.controller.builder.mcp
        assert mcp is not None
        for kind, message in mcp.take_notices():
            notice = NoticeLine(kind, message)
            self._mount(notice)
            if message == mcp.trust_notice:
                self._mcp_trust_notice = notice
        if self._mcp_trust_notice is not None and mcp.manager is not None and mcp.trust_prompt() is None:
            self.mount_pending()  # it may be held still
            self._mcp_trust_notice.remove()  # trusted (here or by /mcp trust): the request is stale
            self._mcp_trust_notice = None
        if self.status.mcp != mcp.status_text():
            self.status.mcp = mcp.status_text()
            self.status_bar.refresh_status()

    def show_output(self, output: ev.CommandOutput) -> None:
        """A command's output: its text, or its table (the last row, a total, in bold)."""
        if output.columns:
            self._mount(Static(CommandTable(output), classes="command-output"))
            if output.text:
                self._mount(Static(literal(output.text), classes="command-output"))
        elif output.command == "diff":
            chat_requests.show_diff(self.app, output)  # coloured, in its own screen
        elif output.command == "review":  # the findings, as Markdown (docs/REVIEW.md)
            self._mount(Markdown(output.text, classes="command-output review-output"))
        else:
            self._mount(Static(literal(output.text), classes="command-output"))

    def confirm(self, request: ev.ConfirmRequested) -> None:
        chat_requests.confirm(self.app, request)

    def rewound(self, event: ev.Rewound) -> None:
        """`/rewind` went back: show the shorter conversation, the message in the input."""
        if event.messages_removed:
            self.session_changed(ev.SessionChanged(self.controller.id, resumed=True))
        if event.input_text:
            self.query_one(PromptInput).load_text(event.input_text)

    def session_changed(self, event: ev.SessionChanged) -> None:
        """Another session is shown: clear the transcript, replay a resumed one."""

        self.mount_pending()  # the old transcript's last entries go with it
        held = self._held = [] if self._held is None else self._held

        async def swap() -> None:
            await self.transcript.remove_children()
            self.router.tools.clear()
            if event.resumed:
                self.render_history()
            self.fold.restart()
            self._held = None
            for widget in held:  # what came meanwhile (a command's notices) goes after it
                self._mount(widget)
            self.status_changed()

        self.run_worker(swap(), group="session")

    def _look_up_context_window(self) -> None:
        self.status.context_window = self.controller.context_window(self.status.model)

    def status_changed(self) -> None:
        """While a turn runs, the bar shows the new status at the next frame (a tool
        round changes the state three or four times; the bar is drawn once)."""
        if self.busy and self.is_attached:
            clock_of(self.app).request(self._show_status)
        else:
            self._show_status()

    def _show_status(self) -> None:
        if not self.is_attached:
            return
        self.status.background_running = self.controller.background_running()
        self.status.lsp = lsp_segment(self.controller.builder.lsp)
        self.status_bar.refresh_status()

    @property
    def status_bar(self) -> StatusBar:
        """The bar, found once (a query by type walks every transcript entry, ~2 ms)."""
        if self._status_bar is None:
            self._status_bar = self.query_one(StatusBar)
        return self._status_bar

    def resume(self, session_id: str) -> None:
        chat_requests.send(self, rq.Resume(session_id))

    def render_history(self) -> None:
        self.mount_pending()  # what was added before goes before the history
        replay_history(self.transcript, self.controller.conversation, self._session_folder())
        self.fold.restart()

    def _session_folder(self) -> Path | None:
        loaded = self.controller.loaded  # the session's folder holds its tasks' transcripts
        return loaded.info.directory if loaded else None

    # ------------------------------------------------------------------ approval

    def request_approval(self, request: ev.ApprovalRequested, agent: str | None = None) -> None:
        """Open the dialog (naming the sub-agent that asks, if one does); the person's
        choice answers the request. The call asking is mounted first, behind it."""
        self.mount_pending()

        def done(decision: ApprovalDecision | None) -> None:
            if screen in self._approvals:
                self._approvals.remove(screen)
            if isinstance(screen, PlanApprovalScreen) and screen.chosen_mode:
                chat_requests.send_now(self, rq.ApprovePlan(screen.chosen_mode))  # before it runs
            request.respond(decision or ApprovalDecision.deny(None))

        prompt = self.query_one(PromptInput)
        kind = {EXIT_PLAN: PlanApprovalScreen, ELICITATION: ElicitationScreen}.get(
            request.name, ApprovalScreen
        )
        screen = kind(
            request,
            self.controller.root,
            last_typed=lambda: prompt.last_key_at,
            forward_key=prompt.type_key,
            agent=agent,
        )
        self._approvals.append(screen)
        self.app.push_screen(screen, done)

    def withdraw_approvals(self) -> None:
        """The turn ended while a dialog was open (Esc, an error): close it."""
        for screen in list(self._approvals):
            if screen.is_attached:
                screen.dismiss(ApprovalDecision.deny(None))
        self._approvals.clear()

    # ------------------------------------------------------------------ input and turns

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        text = event.text.strip()
        save_input_history(self.controller.input_history_file, event.text)
        if (line := shell_line(text)) is not None:  # `!command`: the workspace shell
            run_shell_line(self, line)
            return
        request = self.controller.parse(text)
        if request is not None:
            chat_requests.submit(self, request, text[1:].split(" ", 1)[0])
            return
        if text.startswith("/mcp__") and self.controller.builder.mcp is not None:
            self._run_mcp_prompt(text)  # a server's prompt (tools/mcp/host.py)
            return
        if text.startswith("/") and len(text) > 1 and not text[1].isspace():
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

    def start_turn(
        self,
        text: str,
        *,
        shown: str | None = None,
        required_tools: tuple[str, ...] = (),
        request: TurnRequest | None = None,
    ) -> None:
        images = self.query_one(ImageChips).take()  # the chips go with this message
        self.add_user("\n".join(filter(None, [text if shown is None else shown, chips_line(images)])))
        self.transcript.follow()
        attached = tuple(self.controller.take_shell_runs())  # `!command` output goes with this message
        self._show_queue()
        self.turn_worker = self.run_turn(rq.Turn(text, required_tools, request, attached, tuple(images)))

    def start_request(self, request: TurnRequest) -> None:
        """A command that is a turn (/init, a custom command)."""
        self.start_turn(
            request.text, shown=request.shown, required_tools=request.required_tools, request=request
        )

    @work(exclusive=True, group="turn")
    async def run_turn(self, turn: rq.Turn) -> None:
        await self._route(self.controller.handle(turn))
        heap.turn_ended()  # a first message sent before the app was warm settles the heap now
        done = self.router.last_done
        if done is not None and done.reason == "aborted" and self.queued:
            self.queue_held = True  # Esc stops the work: nothing more is sent until Enter
            self._show_queue()
        else:
            self.call_after_refresh(self._next_queued)

    async def _route(self, events: AsyncIterator[ev.RuntimeEvent]) -> None:
        try:
            async for event in events:
                if self.is_attached:  # when the app is closing, the stream still runs out
                    self.router.handle(event)
        except Exception as exc:  # an expected failure must not kill the app
            message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            self.add_notice("error", message)
            self.status.state = "idle"
            self.status_changed()
        self.router.flush()
        if self.is_attached:
            self.mount_pending()

    # ------------------------------------------------------------------ slash commands

    def run_command(self, name: str, argument: str) -> None:
        """`/name argument`, as if typed."""
        request = self.controller.parse(f"/{name} {argument}".rstrip())
        if request is None:
            self.add_notice("warning", f"Unknown command /{name} — /help lists them")
        else:
            chat_requests.submit(self, request, name)

    def _run_mcp_prompt(self, text: str) -> None:
        """`/mcp__SERVER__PROMPT ARGS`: the server's prompt, sent as the user's message."""
        mcp = self.controller.builder.mcp
        assert mcp is not None
        name, _, line = text[1:].partition(" ")

        async def send() -> None:
            try:
                message = await mcp.render_prompt(name, line)
            except Exception as exc:  # a server error is a notice, never a crash
                self.add_notice("warning", getattr(exc, "message", None) or str(exc))
                return
            self.start_turn(message, shown=text)

        self.run_worker(send(), group="mcp")

    def show_help(self) -> None:
        more = extensions.help_rows(self.controller.builder)  # agents and skills, as task and $NAME take them
        self._mount(Static(help_table(self.controller.slash_commands, more), classes="command-output"))

    def send_held_queue(self) -> bool:
        """Enter on an empty prompt sends the queue held after Esc."""
        if not self.queue_held or self.busy:
            return False
        self.queue_held = False
        self._next_queued()
        return True

    def _next_queued(self) -> None:
        if self.queued and not self.busy and not self.queue_held:
            text = self.queued.pop(0)
            self._show_queue()
            self.start_turn(text)

    def _show_queue(self) -> None:
        queued = self.query_one("#queued", Static)
        lines = [f"… queued: {q}" for q in self.queued]
        if lines:
            lines[-1] += (
                "  (held after Esc: Enter on an empty prompt sends it; Up edits)"
                if self.queue_held
                else "  (Up on an empty prompt edits)"
            )
        lines = attached_lines(self) + lines
        queued.update(literal("\n".join(lines)))
        queued.display = bool(lines)

    def pull_queued(self) -> str | None:
        if not self.queued:
            return None
        text = self.queued.pop()
        self._show_queue()
        return text

    # ------------------------------------------------------------------ actions

    def on_key(self, event: events.Key) -> None:
        """A character typed with the focus in the transcript (Tab moved it there) goes to
        the prompt, and the focus with it. Space is left to the widget (it expands it)."""
        if not event.is_printable or event.character in (None, " ") or not self._focus_in_transcript():
            return
        event.stop()
        event.prevent_default()
        prompt = self.query_one(PromptInput)
        prompt.focus()
        prompt.insert(event.character)

    def _focus_in_transcript(self) -> bool:
        focused = self.focused
        return focused is not None and self.transcript in focused.ancestors_with_self

    def action_interrupt(self) -> None:
        if isinstance(self.app.screen, ApprovalScreen):
            return
        find = self.query_one(FindBar)
        if find.has_class("-open"):
            find.remove_class("-open")
            self.query_one(PromptInput).focus()
            return
        if self._focus_in_transcript():  # Esc brings the focus back (and still interrupts)
            self.query_one(PromptInput).focus()
            if not self.busy:
                return
        if self.busy:
            if skipped_to := self.controller.skip_to_fallback():  # a retry's wait: the next model now
                self.add_notice("fallback", f"Trying {skipped_to} now")
            else:
                chat_requests.send_now(self, rq.Interrupt())
        elif not self.query_one(PromptInput).text and self._escapes.press():
            chat_requests.submit(self, rq.Rewind(), "rewind")  # Esc Esc on an empty input

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
        if self.busy:
            chat_requests.send_now(self, rq.Interrupt())
            return
        now = time.monotonic()
        if now - self._last_ctrl_c < QUIT_WINDOW:
            self.app.exit()
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit", timeout=QUIT_WINDOW)

    def action_ctrl_d(self) -> None:
        prompt = self.query_one(PromptInput)
        if prompt.text:
            prompt.action_delete_right()
        else:
            self.app.exit()

    def action_top(self) -> None:
        self.transcript.scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.transcript.follow()

    def action_find(self, query: str = "") -> None:
        find = self.query_one(FindBar)
        find.add_class("-open")
        find.focus()
        query = visible(query)  # the transcript shows control characters so: find them so
        if query:
            find.value = query
            self.on_find_bar_step(FindBar.Step(query, forward=False))

    def on_find_bar_step(self, event: FindBar.Step) -> None:
        if event.query != self.finder.query:
            self.finder.search(self.transcript, event.query)
        found = self.finder.step(self.transcript, event.forward)
        text = f"{found[0]} of {found[1]}: {event.query}" if found else f"Not found: {event.query}"
        self.notify(visible(text), timeout=2, markup=False)

    def action_cycle_mode(self) -> None:
        chat_requests.send_now(self, rq.CycleMode())

    def action_toggle_thinking(self) -> None:
        self.thinking_expanded = not self.thinking_expanded
        collapse_all(list(self.transcript.children), self.thinking_expanded)

    def action_page_up(self) -> None:
        self.transcript.scroll_page_up()

    def action_agents(self) -> None:
        agents_requests.open_agents(self)

    def action_page_down(self) -> None:
        self.transcript.scroll_page_down()
