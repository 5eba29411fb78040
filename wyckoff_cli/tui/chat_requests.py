"""How the chat screen sends requests (session/requests.py) to the controller.

What was typed is parsed by the controller (`parse`, the one command table); the
app's own requests (help, scrolling, find, quit) and its two pickers (`/resume`,
`/rewind` without an argument: Esc Esc too) are done here; everything else goes to
`ChatController.handle` in the screen's command worker, its events through the one
router. A restore's preview arrives as a `confirm_request` event, which the screen
answers with its preview screen (`confirm`), so the conversation and the work tree
are changed only on the controller's side.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from textual.app import App

from wyckoff_cli.core import events as ev
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.session.custom_commands import TurnRequest
from wyckoff_cli.session.status import StatusModel
from wyckoff_cli.tui import agents_requests
from wyckoff_cli.tui.router import EventRouter
from wyckoff_cli.tui.screens.rewind import DiffScreen, RestorePreviewScreen, RewindPickerScreen

# what may run while a turn runs (the rest waits for it to end)
WHILE_BUSY = (
    rq.Help,
    rq.Cost,
    rq.SetMode,
    rq.Quit,
    rq.Permissions,
    rq.Memory,
    rq.Top,
    rq.Bottom,
    rq.Find,
    rq.Invalid,
    rq.Background,
    rq.Agents,
)


class ChatHost(Protocol):
    """What of the chat screen sending a request uses (the screen imports this module)."""

    controller: ChatController
    router: EventRouter
    status: StatusModel

    @property
    def app(self) -> App[Any]: ...
    @property
    def busy(self) -> bool: ...
    def add_notice(self, kind: str, message: str) -> None: ...
    def show_help(self) -> None: ...
    def action_top(self) -> None: ...
    def action_bottom(self) -> None: ...
    def action_find(self, query: str = "") -> None: ...
    def resume(self, session_id: str) -> None: ...
    def start_request(self, request: TurnRequest) -> None: ...
    def status_changed(self) -> None: ...
    async def _route(self, events: AsyncIterator[ev.RuntimeEvent]) -> None: ...
    def run_worker(self, work: Any, *, exclusive: bool = ..., group: str = ...) -> Any: ...


def submit(chat: ChatHost, request: rq.Request, name: str) -> None:
    """Do what `/name ...` asked (`name` for the message when it must wait)."""
    if chat.busy and not isinstance(request, WHILE_BUSY):
        chat.add_notice("warning", f"/{name} waits for the turn to end (Esc interrupts it)")
        return
    match request:
        case rq.Help():
            chat.show_help()
        case rq.Top():
            chat.action_top()
        case rq.Bottom():
            chat.action_bottom()
        case rq.Find(text=text):
            chat.action_find(text)
        case rq.Quit():
            chat.app.exit()
        case rq.Background(prompt=prompt):
            agents_requests.start_bg(chat, prompt)
        case rq.Agents():
            agents_requests.open_agents(chat)
        case rq.Resume(session_id=""):
            pick_session(chat)
        case rq.Rewind(turn=None):
            pick_rewind(chat)
        case rq.PromptCommand(name=command, argument=argument):
            prompt_command(chat, command, argument)
        case rq.Interrupt() | rq.DropShellOutput() | rq.SetMode() | rq.CycleMode() | rq.ApprovePlan():
            send_now(chat, request)
        case rq.TrustHooks():
            send_now(chat, request)
        case rq.RejectAlways() | rq.Invalid():
            send_now(chat, request)
        case _:
            send(chat, request)


def send_now(chat: ChatHost, request: rq.ImmediateRequest) -> None:
    for event in chat.controller.handle_now(request):
        chat.router.handle(event)


def send(chat: ChatHost, request: rq.SessionRequest) -> None:
    """A request whose events come over time: in the command worker."""
    compacting = isinstance(request, rq.Compact)
    if compacting:
        chat.status.state = "compacting"
        chat.status_changed()

    async def run() -> None:
        await chat._route(chat.controller.handle(request))
        if compacting:
            chat.status.state = "idle"
            chat.status_changed()

    chat.run_worker(run(), exclusive=True, group="command")


def prompt_command(chat: ChatHost, name: str, argument: str) -> None:
    """`/init` or a custom command: a turn, shown as the command typed."""
    expanded = chat.controller.expand(name, argument)
    if expanded is None:
        chat.add_notice("warning", f"Unknown command /{name} — /help lists them")
    else:
        chat.start_request(expanded)


def pick_session(chat: ChatHost) -> None:
    from wyckoff_cli.tui.screens.sessions import SessionPicker

    def picked(session_id: str | None) -> None:
        if session_id:
            chat.resume(session_id)

    chat.app.push_screen(SessionPicker(chat.controller.store, chat.controller.root), picked)


def pick_rewind(chat: ChatHost) -> None:
    """The rewind picker (the messages, then the three choices); the pick is sent as
    `Rewind(N, choice)`, whose preview the controller asks to confirm."""

    async def pick() -> None:
        points = await chat.controller.rewind_points()
        if isinstance(points, ev.Notice):
            chat.router.handle(points)
            return
        selection = await chat.app.push_screen_wait(RewindPickerScreen(points))
        if selection is None:
            return
        turn = points.index(selection.point) + 1
        await chat._route(chat.controller.handle(rq.Rewind(turn, selection.choice)))

    chat.run_worker(pick(), exclusive=True, group="command")


def confirm(app: App[Any], request: ev.ConfirmRequested) -> None:
    """A restore's preview: `y` restores, `n` or Esc changes nothing."""

    def answered(yes: bool | None) -> None:
        request.respond(bool(yes))

    app.push_screen(RestorePreviewScreen(request.title, request.text), answered)


def show_diff(app: App[Any], output: ev.CommandOutput) -> None:
    app.push_screen(DiffScreen(output.text))
