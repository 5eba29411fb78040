"""The app attached to a background session (`wyckoff attach ID`).

What the session printed so far is replayed from its chat log; what follows arrives
over its socket (session/channel.py) as the same events the chat screen renders, through
the same `EventRouter`. An approval it waits for opens the usual dialog; the answer goes
back over the socket and the background call resumes. Enter sends a new turn, Esc
interrupts the running one, Ctrl+D or Ctrl+Q detaches (the session keeps running). A
second app attached at the same time is view-only: it shows everything, answers nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Static

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision, ApprovalResponder
from wyckoff_cli.session.channel import ChannelClient, ChannelError, decision_to_dict, event_of
from wyckoff_cli.session.models import call_price
from wyckoff_cli.session.status import PriceFn, StatusModel
from wyckoff_cli.storage.running import RunningSession
from wyckoff_cli.tui.entry_batch import EntryBatch
from wyckoff_cli.tui.literal import literal
from wyckoff_cli.tui.router import EventRouter
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.transcript_entries import TranscriptEntries
from wyckoff_cli.tui.widgets.prompt_input import PromptInput
from wyckoff_cli.tui.widgets.status_bar import StatusBar
from wyckoff_cli.tui.widgets.tool_call import ToolCallView
from wyckoff_cli.tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from wyckoff_cli.storage.config import Config

Connect = Callable[[RunningSession, str], "Any"]  # (entry, want) -> awaitable ChannelClient


def with_responder(event: ev.RuntimeEvent) -> tuple[ev.RuntimeEvent, ApprovalResponder | None]:
    """`event` with a fresh responder on the approval it is or wraps (the wire drops it)."""
    request = ev.approval_of(event)
    if request is None:
        return event, None
    responder = ApprovalResponder()
    asked = dataclasses.replace(request, responder=responder)
    if isinstance(event, ev.SubagentEvent):
        return dataclasses.replace(event, event=asked), responder
    return asked, responder


def session_pricer(root: Path) -> PriceFn:
    """Prices the attached session's calls with its project's configuration (read at
    the first call priced), as its own process prices them."""
    config: Config | None = None

    def price(name: str, usage: ev.UsageReported) -> tuple[float, float] | None:
        nonlocal config
        if config is None:
            from wyckoff_cli.session.builder import open_workspace

            config = open_workspace(root).config
        return call_price(name, usage, config)

    return price


class AttachScreen(TranscriptEntries, Screen[None]):
    CSS_PATH = "chat.tcss"
    AUTO_FOCUS = "#prompt"
    BINDINGS = [
        Binding("escape", "interrupt", "Interrupt", show=False, priority=True),
        Binding("ctrl+d,ctrl+q,ctrl+c", "detach", "Detach", show=False, priority=True),
    ]

    def __init__(
        self,
        entry: RunningSession,
        *,
        want: str = "control",
        connect: Connect | None = None,
        detach: Callable[[], object] | None = None,
    ) -> None:
        super().__init__()
        self._on_detach = detach  # default: quit the app (`wyckoff attach`); in the chat, back to it
        self.entry = entry
        self.want = want
        self._connect = connect
        self.status = StatusModel(model=entry.model or "?", price=session_pricer(Path(entry.root)))
        self.router = EventRouter(self, self.status, schedule_flush=self._schedule_flush)
        self.entry_batch = EntryBatch(
            self, lambda widgets: self.transcript.mount_all(widgets), lambda: self.status.state != "idle"
        )
        self.client: ChannelClient | None = None
        self.role = "view"
        self.ended = False
        self.detached = False  # the app left this screen: late events have nowhere to go
        self._approvals: list[ApprovalScreen] = []
        self._answers: set[asyncio.Task[None]] = set()

    def compose(self) -> ComposeResult:
        yield Static(literal(f"Attaching to {self.entry.id} …"), id="attach-head")
        yield Transcript(id="transcript")
        with Vertical(id="bottom"):
            yield PromptInput(id="prompt")
            yield StatusBar(self.status, id="status")

    def on_mount(self) -> None:
        from wyckoff_cli.tui.background import install_watch

        self._replay()
        self.run_worker(self._follow(), group="channel")
        # any other session of the project that waits shows in this status bar too
        install_watch(self, Path(self.entry.root), self.status, self.status_changed, exclude=self.entry.id)

    # ------------------------------------------------------------------ the session

    def _replay(self) -> None:
        from wyckoff_cli.storage.sessions import SessionStore
        from wyckoff_cli.tui.replay import replay_history

        if not self.entry.session_id:
            return
        try:
            loaded = SessionStore().load(self.entry.session_id)
        except Exception as exc:  # a missing or unreadable log: say so, show what follows
            self.add_notice("warning", f"cannot replay the session's log: {getattr(exc, 'message', exc)}")
            return
        replay_history(self.transcript, loaded.history, loaded.info.directory)
        self.status.restore_session(loaded.info)  # the totals so far; live events add to them

    async def _follow(self) -> None:
        try:
            if self._connect is not None:
                self.client = await self._connect(self.entry, self.want)
            else:
                from wyckoff_cli.storage.running import socket_path

                self.client = await ChannelClient.connect(socket_path(self.entry.id), self.want)
        except ChannelError as exc:
            self.add_notice("error", f"cannot attach: {exc.message}")
            self._head(f"{self.entry.id} · not attached")
            return
        client = self.client
        self.role = client.role
        self._state(client.welcome.get("entry") or {})
        if self.role == "view":
            self.add_notice("warning", "View-only: another app answers this session's approvals.")
        for pending in client.welcome.get("pending", []):
            self.receive(ev.event_from_dict(pending))
        try:
            async for message in client.messages():
                kind = message["kind"]
                if kind == "event":
                    self.receive(event_of(message))
                elif kind == "state":
                    self._state(message.get("entry") or {})
                elif kind == "user":
                    self.add_user(str(message.get("text", "")))
                elif kind == "error":
                    self.add_notice("warning", str(message.get("message", "")))
        except (ChannelError, ConnectionError) as exc:
            self.add_notice("error", f"the channel failed: {getattr(exc, 'message', exc)}")
        self.ended = True
        self.withdraw_approvals()
        self.add_notice("info", f"Background session {self.entry.id} ended ({self.entry.state}).")
        self._head(f"{self.entry.id} · {self.entry.state} · Ctrl+D closes")

    def receive(self, event: ev.RuntimeEvent) -> None:
        """One event of the session: shown; an approval, when this app answers them,
        gets a responder whose answer goes back over the socket."""
        if self.detached:
            return
        if self.role == "control":
            event, responder = with_responder(event)
            request = ev.approval_of(event)
            if responder is not None and request is not None:
                task = asyncio.ensure_future(self._send_answer(request.id, responder))
                self._answers.add(task)
                task.add_done_callback(self._answers.discard)
        elif (request := ev.approval_of(event)) is not None:
            self.add_notice(
                "warning", f"Waits for approval of {request.name} (answered in the controlling app)."
            )
        self._adopt(event)
        self.status.observe(event)
        self.router.handle(event)

    def _adopt(self, event: ev.RuntimeEvent) -> None:
        """A call the replay showed unanswered (it was waiting when we attached) is the
        one its live events update, not a second view of it."""
        call_id = event.parent_call_id if isinstance(event, ev.SubagentEvent) else getattr(event, "id", None)
        if not isinstance(call_id, str) or call_id in self.router.tools or self.detached:
            return
        for view in self.transcript.query(ToolCallView):
            if view.call_id == call_id:
                self.router.tools[call_id] = view
                return

    async def _send_answer(self, call_id: str, responder: ApprovalResponder) -> None:
        decision = await responder.wait()
        if self.client is not None and not self.ended:
            await self.client.send({"kind": "approve", "id": call_id, "decision": decision_to_dict(decision)})

    def _state(self, data: dict[str, Any]) -> None:
        try:
            self.entry = RunningSession.from_dict(data) if data else self.entry
        except (TypeError, ValueError):
            return
        role = "answering approvals" if self.role == "control" else "view-only"
        waiting = f" · waits for {self.entry.waiting_for}" if self.entry.waiting_for else ""
        where = f" · {self.entry.worktree}" if self.entry.worktree else ""
        self._head(
            f"{self.entry.id} · {self.entry.state}{waiting}{where} · {role} · "
            "Esc interrupts · Ctrl+D detaches (it keeps running)"
        )

    def _head(self, text: str) -> None:
        if self.is_attached and not self.detached:
            self.query_one("#attach-head", Static).update(literal(text))

    # ------------------------------------------------------------------ keys and input

    def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        text = event.text.strip()
        if not text:
            return
        if self.role != "control" or self.client is None or self.ended:
            self.add_notice("warning", "This app cannot send turns (view-only, or the session ended).")
            return
        self.query_one(PromptInput).clear()  # the session echoes it to every attached app
        self.run_worker(self.client.send({"kind": "turn", "text": text}), group="send")

    def action_interrupt(self) -> None:
        if self.client is not None and not self.ended:
            self.run_worker(self.client.send({"kind": "interrupt"}), group="send")

    def action_detach(self) -> None:
        self.detached = True
        if self._on_detach is not None:
            self._on_detach()
        else:
            self.app.exit()

    async def on_unmount(self) -> None:
        self.detached = True
        if self.client is not None:
            await self.client.close()

    # ------------------------------------------------------------------ TranscriptView

    @property
    def transcript(self) -> Transcript:
        return self.query_one("#transcript", Transcript)

    def _mount(self, widget: Widget) -> None:
        if self.is_attached and not self.detached:
            self.entry_batch.add(widget)  # mounted at the next frame, with the others

    def status_changed(self) -> None:
        if self.is_attached and not self.detached:
            self.query_one(StatusBar).refresh_status()

    def request_approval(self, request: ev.ApprovalRequested, agent: str | None = None) -> None:
        def done(decision: ApprovalDecision | None) -> None:
            if screen in self._approvals:
                self._approvals.remove(screen)
            request.respond(decision or ApprovalDecision.deny(None))

        self.mount_pending()  # the call asking is on screen behind the dialog
        prompt = self.query_one(PromptInput)
        screen = ApprovalScreen(
            request,
            Path(self.entry.root),
            last_typed=lambda: prompt.last_key_at,
            forward_key=prompt.type_key,
            agent=agent,
        )
        self._approvals.append(screen)
        self.app.push_screen(screen, done)

    def withdraw_approvals(self) -> None:
        for screen in list(self._approvals):
            if screen.is_attached:
                screen.dismiss(ApprovalDecision.deny(None))
        self._approvals.clear()

    def show_output(self, output: ev.CommandOutput) -> None:
        self._mount(Static(literal(output.text), classes="command-output"))

    def session_changed(self, event: ev.SessionChanged) -> None:
        self.add_notice("info", f"The session is now {event.session_id}.")

    def confirm(self, request: ev.ConfirmRequested) -> None:
        request.respond(False)  # nothing of a background session asks this; never yes unseen

    def rewound(self, event: ev.Rewound) -> None:
        self.add_notice("info", "The session was rewound.")
