"""CheckpointHooks: the runtime hook that takes checkpoints.

Before each round whose batch holds a tool of kind `edit` or `execute` (MCP tools
included: their kind comes from the proxy), the whole work tree is snapshotted and
recorded as a checkpoint of the session and of the user message the turn answers.
Once the round's tools ran (at the next model call, or the end of the turn), the
state they left is recorded too, so later changes by hand can be told apart.

The first time a command runs in the session a notice says what no checkpoint can
undo. A failing snapshot never breaks the turn: a warning is shown once and
checkpoints stay off for the session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import WyckoffError
from wyckoff_cli.core.messages import Message, ToolCallPart
from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
from wyckoff_cli.runtime.checkpoints.store import Checkpoint
from wyckoff_cli.runtime.hooks import ModelRequest, RuntimeHooks
from wyckoff_cli.tools.base import Tool

log = logging.getLogger(__name__)

CHANGING_KINDS = frozenset({"edit", "execute"})
SIDE_EFFECTS_NOTICE = (
    "Checkpoints cover the files in this workspace only. What a command does elsewhere "
    "(databases, network calls, files outside the workspace, processes it starts) "
    "cannot be undone by /undo or /rewind."
)


class CheckpointHooks(RuntimeHooks):
    """Install one per session: `AgentRuntime(..., hooks=[CheckpointHooks(engine, session_id)])`."""

    def __init__(self, engine: CheckpointEngine, session_id: str) -> None:
        self.engine = engine
        self.session_id = session_id
        self.message_id: str | None = None
        self.pending: Checkpoint | None = None  # the round whose end state is not recorded yet
        self.warned_side_effects = False
        self.disabled: str | None = None
        self.last: Checkpoint | None = None

    async def before_run(self, user_message: Message) -> Message | None:
        self.message_id = user_message.id
        return None

    async def before_tool_round(
        self, calls: Sequence[ToolCallPart], tools: Sequence[Tool | None]
    ) -> Sequence[ev.RuntimeEvent]:
        kinds = {tool.kind for tool in tools if tool is not None}
        if not kinds & CHANGING_KINDS:
            return ()
        events: list[ev.RuntimeEvent] = []
        if "execute" in kinds and not self.warned_side_effects:
            self.warned_side_effects = True
            events.append(ev.Notice("info", SIDE_EFFECTS_NOTICE))
        if self.disabled is not None:
            return events
        await self._finish_round()
        records = [{"id": c.id, "name": c.name, "args": c.arguments} for c in calls]
        try:
            self.pending = self.last = await asyncio.to_thread(
                self.engine.checkpoint, self.session_id, self.message_id, records
            )
        except (WyckoffError, OSError) as exc:
            events.append(self._disable(exc))
        return events

    async def before_model_call(self, request: ModelRequest) -> ModelRequest | None:
        await self._finish_round()
        return None

    async def after_run(self, done: ev.TurnDone) -> None:
        await self._finish_round()

    async def _finish_round(self) -> None:
        pending, self.pending = self.pending, None
        if pending is None or self.disabled is not None:
            return
        try:
            await asyncio.to_thread(self.engine.record_after, pending)
        except (WyckoffError, OSError) as exc:
            self._disable(exc)

    def _disable(self, exc: Exception) -> ev.Notice:
        message = exc.message if isinstance(exc, WyckoffError) else str(exc)
        log.warning("checkpoints off for session %s: %s", self.session_id, message)
        self.disabled = message
        return ev.Notice(
            "warning",
            f"Checkpoints are off for this session (undo and rewind of code will not work): {message}",
        )
