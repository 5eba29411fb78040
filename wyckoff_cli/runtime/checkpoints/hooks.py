"""CheckpointHooks: the runtime hook that takes checkpoints.

Before each round whose batch holds a tool of kind `edit`, `execute` or `external` (MCP tools
included: their kind comes from the proxy), the whole work tree is snapshotted and
recorded as a checkpoint of the session and of the user message the turn answers.
Once the round's tools ran (at the next model call, or the end of the turn), the
state they left is recorded too, so later changes by hand can be told apart.

The first time a command runs in the session a notice says what no checkpoint can
undo: once per session, a resumed or rebuilt one included (`commands_ran` says a
command ran in it before). A failing snapshot never breaks the turn: a warning is shown once and
checkpoints stay off for the session.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import WyckoffError
from wyckoff_cli.core.messages import Message, ToolCallPart
from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
from wyckoff_cli.runtime.checkpoints.rewind import CheckpointCommands
from wyckoff_cli.runtime.checkpoints.store import Checkpoint
from wyckoff_cli.runtime.hooks import ModelRequest, RuntimeHooks
from wyckoff_cli.storage.config import CheckpointsConfig
from wyckoff_cli.tools.base import Tool

log = logging.getLogger(__name__)

CHANGING_KINDS = frozenset({"edit", "execute", "external"})  # external: MCP tools that are not read-only
SIDE_EFFECTS_NOTICE = (
    "Checkpoints cover the files in this workspace only. What a command does elsewhere "
    "(databases, network calls, files outside the workspace, processes it starts) "
    "cannot be undone by /undo or /rewind."
)


def _changing_task(call: ToolCallPart, tool: Tool | None) -> bool:
    """A `task` call whose agent is not read-only (its tasks are not concurrency-safe)."""
    return tool is not None and tool.name == "task" and not tool.concurrency_safe_for(call.arguments)


class CheckpointHooks(RuntimeHooks):
    """Install one per session: `AgentRuntime(..., hooks=[CheckpointHooks(engine, session_id)])`."""

    def __init__(
        self,
        engine: CheckpointEngine | None,
        session_id: str,
        *,
        disabled: str | None = None,
        commands_ran: bool = False,
    ) -> None:
        self.engine = engine
        self.session_id = session_id
        self.message_id: str | None = None
        self.pending: Checkpoint | None = None  # the round whose end state is not recorded yet
        self.warned_side_effects = commands_ran  # the notice went with the session's first command
        self.disabled = disabled if engine is not None else disabled or "no checkpoint engine"
        self.warned_disabled = False
        self.pruned = False
        self.warming: asyncio.Task[None] | None = None
        self.last: Checkpoint | None = None

    def commands(self) -> CheckpointCommands | None:
        """What /rewind, /undo, /redo and /diff call for this session (None: checkpoints
        are off)."""
        return CheckpointCommands(self.engine, self.session_id) if self.engine is not None else None

    async def before_run(self, user_message: Message) -> Message | None:
        self.message_id = user_message.id
        if self.warming is None and self.disabled is None:
            # prune and bring the shadow index up to date while the model thinks, so the
            # first checkpoint of a session on a big tree is incremental (docs/PERFORMANCE.md)
            self.warming = asyncio.create_task(asyncio.to_thread(self._warm))
        return None

    def _warm(self) -> None:
        assert self.engine is not None
        self.pruned = True
        self.engine.prune()
        self.engine.snapshot()

    async def before_tool_round(
        self, calls: Sequence[ToolCallPart], tools: Sequence[Tool | None]
    ) -> Sequence[ev.RuntimeEvent]:
        kinds = {tool.kind for tool in tools if tool is not None}
        if any(_changing_task(call, tool) for call, tool in zip(calls, tools, strict=False)):
            kinds.add("edit")  # a sub-agent whose tools may change files (runtime/subagents.py)
        if not kinds & CHANGING_KINDS:
            return ()
        events: list[ev.RuntimeEvent] = []
        if "execute" in kinds and not self.warned_side_effects:
            self.warned_side_effects = True
            events.append(ev.Notice("info", SIDE_EFFECTS_NOTICE))
        if self.disabled is None:
            await self._wait_for_warm_up()
            await self._finish_round()
            records = [{"id": c.id, "name": c.name, "args": c.arguments} for c in calls]
            try:
                self.pending = self.last = await asyncio.to_thread(self._checkpoint, records)
            except Exception as exc:  # a checkpoint never breaks the turn
                self._disable(exc)
        if self.disabled is not None and not self.warned_disabled:
            self.warned_disabled = True
            events.append(
                ev.Notice(
                    "warning",
                    f"Checkpoints are off for this session (undo and rewind of code will not work): {self.disabled}",
                )
            )
        return events

    async def _wait_for_warm_up(self) -> None:
        warming = self.warming
        if warming is None or warming.done() and warming.cancelled():
            return
        try:
            await asyncio.shield(warming)
        except Exception as exc:
            self._disable(exc)

    def _checkpoint(self, records: list[dict[str, Any]]) -> Checkpoint:
        assert self.engine is not None
        if not self.pruned:  # once a session, off the event loop: old checkpoints go
            self.pruned = True
            self.engine.prune()
        return self.engine.checkpoint(self.session_id, self.message_id, records)

    async def before_model_call(self, request: ModelRequest) -> ModelRequest | None:
        await self._finish_round()
        return None

    async def after_run(self, done: ev.TurnDone) -> None:
        await self._finish_round()

    async def _finish_round(self) -> None:
        pending, self.pending = self.pending, None
        if pending is None or self.disabled is not None or self.engine is None:
            return
        try:
            await asyncio.to_thread(self.engine.record_after, pending)
        except Exception as exc:
            self._disable(exc)

    def _disable(self, exc: Exception) -> None:
        expected = isinstance(exc, WyckoffError | OSError)
        message = exc.message if isinstance(exc, WyckoffError) else f"{type(exc).__name__}: {exc}"
        log.warning("checkpoints off for session %s: %s", self.session_id, message, exc_info=not expected)
        self.disabled = message


def checkpoint_hooks(
    workspace: Path,
    settings: CheckpointsConfig,
    session_id: str,
    *,
    redact: Callable[[str], str] | None = None,
    commands_ran: bool = False,
) -> list[CheckpointHooks]:
    """The hooks a session installs: none when `[checkpoints] enabled = false`; one
    that only warns when checkpoints cannot work here (no git binary). `commands_ran`:
    the session (resumed, or rebuilt for another model) ran a command before, so its
    side-effects notice was shown already."""
    if not settings.enabled:
        return []
    try:
        engine = CheckpointEngine(workspace, settings, redact=redact or (lambda text: text))
    except (WyckoffError, OSError) as exc:
        message = exc.message if isinstance(exc, WyckoffError) else str(exc)
        return [CheckpointHooks(None, session_id, disabled=message, commands_ran=commands_ran)]
    return [CheckpointHooks(engine, session_id, commands_ran=commands_ran)]


def ran_a_command(messages: Iterable[Message], kind_of: Callable[[str], str]) -> bool:
    """Whether any assistant message of `messages` called a tool of kind `execute`."""
    return any(
        kind_of(call.name) == "execute"
        for message in messages
        if message.role == "assistant"
        for call in message.tool_calls
    )
