"""One turn of a chat, as the controller runs it for an `rq.Turn`.

Before the first model call: what the turn waits for (turn_start.py), the mode note,
the SessionStart hooks, a command's `!`…`` snippets, notices and model, and the
`@SERVER:URI` resources; then the runtime's stream, every event observed (recorded
and counted) before the host sees it. `controller` is the `ChatController` (typed
by what this module uses of it, so the two modules do not import each other).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.abort import AbortSignal
from wyckoff_cli.core.shown import with_command
from wyckoff_cli.session import extensions
from wyckoff_cli.session.custom_commands import (
    ShellExpansion,
    TurnRequest,
    runtime_for_model,
    shell_snippets,
    turn_rules,
)
from wyckoff_cli.session.images import turn_message
from wyckoff_cli.session.turn_start import preparing

if TYPE_CHECKING:
    from wyckoff_cli.core.messages import ImagePart
    from wyckoff_cli.session.builder import Session, SessionBuilder
    from wyckoff_cli.session.modes import ModeNotes
    from wyckoff_cli.session.telemetry import SessionTelemetry
    from wyckoff_cli.session.user_shell import ShellRun


class TurnHost(Protocol):
    """What a turn uses of the controller."""

    builder: SessionBuilder
    model: str
    mode: str
    mode_notes: ModeNotes
    hook_source: str | None  # the SessionStart hooks' source while they are due
    approved_snippets: set[str]
    telemetry: SessionTelemetry

    @property
    def session(self) -> Session: ...
    @property
    def root(self) -> Path: ...
    async def prepare(self) -> None: ...
    def check_model(self, name: str) -> str | None: ...
    def observe(self, event: ev.RuntimeEvent, *, record: bool = True) -> None: ...


async def turn_events(
    controller: TurnHost,
    text: str,
    abort: AbortSignal,
    required_tools: Sequence[str] = (),
    request: TurnRequest | None = None,
    attached: Sequence[ShellRun] = (),
    images: Sequence[ImagePart] = (),
    shown: str | None = None,
) -> AsyncIterator[ev.RuntimeEvent]:
    """One turn; `request` when it comes from a command (its `!`…`` snippets run
    first, its rules hold for this turn only, its model answers this turn);
    `attached`, `images`: `!command` runs (before the text) and images sent with it;
    `shown`: what the transcript shows for the text (an MCP prompt as typed)."""
    async for waiting in preparing(controller, abort, text, required_tools):  # MCP servers, SDK imports
        yield waiting
    if abort.aborted:
        yield ev.TurnDone("", "aborted", 0)
        return
    await controller.prepare()  # the imports run in a thread, never on the event loop
    if telemetry_off := controller.telemetry.take_notice():  # configured, but it cannot export
        yield ev.Notice("warning", telemetry_off)
    session = controller.session
    builder = controller.builder
    text = controller.mode_notes.prefix(controller.mode, text)  # a mode change is announced once
    if controller.hook_source is not None:  # SessionStart hooks; their events come with the turn
        source, controller.hook_source = controller.hook_source, None
        await builder.user_hooks.session_start(source)
    runtime = session.runtime
    if request is not None:
        for event in extensions.request_notices(request):
            yield event
        if shell_snippets(text):  # the command's rules hold for its snippets too, as headless
            expansion = ShellExpansion.of(
                text, request, session, controller.root, controller.approved_snippets
            )
            with turn_rules(session.policy, request.allow):
                async for event in expansion.events():
                    controller.observe(event)
                    yield event
            if expansion.failed is not None:
                yield ev.Notice("error", expansion.failed)
                yield ev.TurnDone("", "stopped", 0)
                return
            text = expansion.text
        if request.model and request.model != controller.model:
            problem = controller.check_model(request.model)
            if problem:
                yield ev.Notice("error", f"/{request.command}: {problem}")
                yield ev.TurnDone("", "error", 0)
                return
            runtime = runtime_for_model(runtime, builder.provider(request.model))
    if builder.mcp is not None:
        text = await builder.mcp.prepare_message(text)  # @SERVER:URI attaches a resource
    message = turn_message(text, attached, images)  # `!command` output and images go with it
    if request is not None or shown is not None:  # the transcript shows `/NAME ARGS`, a resumed one too
        message = with_command(message, request.shown if request is not None else shown or "")
    try:
        with turn_rules(session.policy, request.allow if request is not None else ()):
            async for event in runtime.run_stream(
                session.conversation,
                message,
                system_prompt=session.system_prompt,
                abort=abort,
                required_tools=required_tools,
            ):
                controller.observe(event)
                yield event
    finally:
        if session.recorder is not None:
            session.recorder.flush()
