"""A chat driven by code: headless `wyckoff run` and the Python API (`wyckoff_cli.api`).

Both are hosts of the `ChatController`, like the app and ACP: a turn is an `rq.Turn`
sent to `ChatController.handle`, whose events (recorded and counted by the controller)
pass through `answer_approvals` so that a function answers the approval requests —
`deny_without_approver` when no one can be asked (what `wyckoff run` does), or the
API's `on_approval`. `HeadlessChat.open` builds the session with the workspace's MCP
servers started and waited for (their tools are in the first request) and reports
their notices through `write`; `turn(...)` adds what a typed prompt may carry before
the controller runs it: an MCP server's prompt (`/mcp__SERVER__PROMPT ARGS`, rendered
as in ACP) and image files.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.errors import ImageError
from wyckoff_cli.runtime.approval import Approver, answer_approvals, deny_without_approver
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.session.mcp import open_mcp, print_notices, untrusted_notice
from wyckoff_cli.tools.mcp.host import McpHost

if TYPE_CHECKING:
    from wyckoff_cli.session.builder import Session, SessionBuilder
    from wyckoff_cli.session.custom_commands import TurnRequest
    from wyckoff_cli.storage.recorder import SessionRecorder
    from wyckoff_cli.storage.sessions import LoadedSession
    from wyckoff_cli.tools.mcp.config import ServerSpec

WriteFn = Callable[[str], None]
unattended: Approver = deny_without_approver  # the answer when no one can be asked


class HeadlessChat:
    """One controller, its MCP servers, and the function that answers approvals."""

    def __init__(self, controller: ChatController, approver: Approver = deny_without_approver) -> None:
        self.controller = controller
        self.approver = approver
        self._approval_error: BaseException | None = None

    @classmethod
    async def open(
        cls,
        builder: SessionBuilder,
        *,
        model: str,
        mode: str,
        recorder: SessionRecorder | None = None,
        loaded: LoadedSession | None = None,
        record: bool = True,
        resumed: bool = False,
        trust_mcp: bool = False,
        approver: Approver = deny_without_approver,
        write: WriteFn = lambda _text: None,
        extra_mcp: Sequence[ServerSpec] = (),
    ) -> HeadlessChat:
        """The chat, its session built now. `recorder`: a session the host opened (new,
        reopened or forked); `loaded`: one the controller reopens; neither with `record`
        False saves nothing. `resumed`: the SessionStart hooks' source is "resume".
        `extra_mcp`: servers the host adds to the workspace's (the API's `mcp_servers`)."""
        results = recorder.results_dir if recorder is not None else None
        builder.mcp = McpHost(
            lambda _on_event: open_mcp(
                builder.workspace,
                None,
                model=model,
                trust_project=trust_mcp,
                trust_settings=builder.trust_project_hooks,  # --trust-hooks: the project's enabledPlugins
                on_event=print_notices(write),
                extra=extra_mcp,
            ),
            results_dir=results,
        )
        controller = ChatController(
            builder, model=model, mode=mode, loaded=loaded, recorder=recorder, unrecorded=not record
        )
        controller.hook_source = "resume" if resumed or loaded is not None else "startup"
        controller.mode_notes.told = mode  # chosen before the run: no mode note, as before
        chat = cls(controller, approver)
        try:
            controller.session  # built now: MCP tools attach as their servers connect  # noqa: B018
            if builder.mcp.manager is not None:
                await builder.mcp.manager.wait_ready()
                notice = untrusted_notice(builder.mcp.manager)
                if notice:
                    write(notice)
        except BaseException:
            await chat.aclose()  # the session file and its lock are released
            raise
        return chat

    @property
    def session(self) -> Session:
        return self.controller.session

    @property
    def session_id(self) -> str | None:
        return self.controller.id

    def interrupt(self) -> None:
        """Stop the running turn (Ctrl+C headless; the API's cancellation)."""
        self.controller.handle_now(rq.Interrupt())

    async def turn(
        self,
        text: str,
        *,
        command: TurnRequest | None = None,
        images: Sequence[Path] = (),
    ) -> AsyncIterator[ev.RuntimeEvent]:
        """One turn through the controller, approvals answered by `approver`. A prompt
        `/mcp__SERVER__PROMPT ARGS` is rendered by its server first; `images` are stored
        in the session and sent with the text. Either failing ends the turn, said, with
        nothing sent."""
        mcp = self.controller.builder.mcp
        shown = None
        if command is None and mcp is not None and text.startswith("/mcp__"):
            name, _, line = text[1:].partition(" ")
            try:
                text, shown = await mcp.render_prompt(name, line), text
            except Exception as exc:  # an unknown prompt or a server error
                yield ev.TurnFailed("invalid_request", getattr(exc, "message", None) or str(exc))
                yield ev.TurnDone("", "error", 0)
                return
        store = self.session.images
        try:
            attached = tuple(store.add_file(path.expanduser()) for path in images) if store else ()
        except ImageError as exc:  # one line naming the file
            yield ev.TurnFailed("image", exc.message)
            yield ev.TurnDone("", "error", 0)
            return
        required = command.required_tools if command is not None else ()
        request = rq.Turn(
            command.text if command is not None else text, required, command, images=attached, shown=shown
        )
        async for event in self.send(request):
            yield event

    async def send(self, request: rq.SessionRequest) -> AsyncIterator[ev.RuntimeEvent]:
        """Any request (a turn, the correction of a schema-checked answer, a command).
        An exception from `approver` denies that call and stops the turn, which ends
        with every call answered and saved; then the exception is raised here."""
        async for event in answer_approvals(self.controller.handle(request), self._approve):
            yield event
        failed, self._approval_error = self._approval_error, None
        if failed is not None:
            raise failed

    async def _approve(self, request: ev.ApprovalRequested) -> ApprovalDecision:
        try:
            return await self.approver(request)
        except Exception as exc:
            self._approval_error = self._approval_error or exc
            self.interrupt()
            return ApprovalDecision.deny(
                f"Not run: the host's approval function failed ({type(exc).__name__})."
            )

    async def aclose(self, reason: str = "other") -> None:
        """SessionEnd hooks (recorded), the runtime, the session file, the MCP servers
        and the language servers, closed."""
        builder = self.controller.builder
        try:
            await self.controller.aclose(reason)
        finally:
            if builder.mcp is not None:
                await builder.mcp.aclose()
            if builder.lsp is not None:
                await builder.lsp.manager.close()
