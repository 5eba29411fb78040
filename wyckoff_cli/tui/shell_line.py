"""`!command` typed at the start of the prompt: run it in the workspace shell.

The controller runs it as a `run_shell` call through the session's policy (a deny
rule refuses it, an unapproved command opens the approval dialog, plan mode refuses
it); the screen shows it with the same tool widget as the model's calls, in the turn
worker, so Esc interrupts it and messages typed meanwhile are queued. Its output is
offered to the next message: the line above the prompt says so, and Backspace on an
empty prompt takes the last one back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from wyckoff_cli.core import events as ev
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.session.status import StatusModel
from wyckoff_cli.tui.router import EventRouter


class ShellHost(Protocol):
    """What of the chat screen a `!command` uses (the screen imports this module)."""

    controller: ChatController
    router: EventRouter
    status: StatusModel
    turn_worker: Any
    queued: list[str]
    queue_held: bool

    @property
    def busy(self) -> bool: ...
    @property
    def transcript(self) -> Any: ...
    def add_notice(self, kind: str, message: str) -> None: ...
    def add_user(self, text: str) -> None: ...
    def status_changed(self) -> None: ...
    def _show_queue(self) -> None: ...
    def _next_queued(self) -> None: ...
    async def _route(self, events: AsyncIterator[ev.RuntimeEvent]) -> None: ...
    def call_after_refresh(self, callback: Callable[..., Any], *args: Any) -> bool: ...
    def run_worker(self, work: Any, *, exclusive: bool = ..., group: str = ...) -> Any: ...


def shell_line(text: str) -> str | None:
    """The command of a `!command` input, or None when `text` is not one."""
    if not text.startswith("!"):
        return None
    command = text[1:].strip()
    return command or None


def run_shell_line(screen: ShellHost, command: str) -> None:
    if screen.busy:
        screen.add_notice("warning", "`!` commands wait for the turn to end (Esc interrupts it)")
        return
    screen.add_user(f"! {command}")
    screen.transcript.follow()

    async def run() -> None:
        await screen._route(screen.controller.handle(rq.Shell(command)))
        screen.status.state = "idle"
        screen.status_changed()
        if screen.controller.interrupted and screen.queued:
            screen.queue_held = True  # as after a turn: Esc stops the work until Enter
        screen._show_queue()
        screen.call_after_refresh(screen._next_queued)

    screen.turn_worker = screen.run_worker(run(), exclusive=True, group="turn")


def attached_lines(screen: ShellHost) -> list[str]:
    """What the line above the prompt says about `!` output waiting for the next message."""
    lines = []
    for run in screen.controller.shell_runs:
        status = (
            "failed" if run.failed else f"exit {run.exit_code}" if run.exit_code is not None else "killed"
        )
        count = f"{run.lines} line{'s' * (run.lines != 1)}"
        lines.append(f"↳ goes with your next message: `{run.command}` ({count}, {status})")
    if lines:
        lines[-1] += " · Backspace on an empty prompt drops it"
    return lines


def drop_attached(screen: ShellHost) -> bool:
    """Backspace on an empty prompt: the last `!` output is not sent after all."""
    dropped = screen.controller.handle_now(rq.DropShellOutput())
    for event in dropped:
        screen.router.handle(event)
    if dropped:
        screen._show_queue()
    return bool(dropped)
