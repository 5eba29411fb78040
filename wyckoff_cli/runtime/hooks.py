"""Lifecycle hooks around the run, each model call and each tool call.

Subclass `RuntimeHooks` and override what you need. A hook may return a modified
input (or `None` to keep it) and may raise `StopRun(reason)` to end the run; the turn
then ends with `done.reason == "stopped"` and a valid history.

Two hook points decide rather than change: `decide_tool(call, args)` may allow, deny
or ask for a call (or change its arguments) after its arguments passed the schema and
before the approval policy — across hooks, deny wins over ask over allow
(`merge_decisions`); `before_stop(text)` may return a reminder that makes the turn go
on instead of ending. `attach(emit)` gives a hook, at the start of each turn, the way
to put its own events on that turn's stream.

Context management plugs in through `wyckoff_cli.context.hooks.ContextHooks`; user
hooks (Claude Code compatible) through `wyckoff_cli.runtime.user_hooks.UserHooks`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.messages import Message, ToolCallPart, ToolSpec

if TYPE_CHECKING:
    from wyckoff_cli.core.events import RuntimeEvent, TurnDone
    from wyckoff_cli.tools.base import Tool


Emit = Callable[["RuntimeEvent"], Awaitable[None]]
Permission = Literal["allow", "deny", "ask"]
_STRENGTH = {None: 0, "allow": 1, "ask": 2, "deny": 3}


@dataclass(frozen=True, slots=True)
class ToolDecision:
    """What a hook says about one call: `permission` (`allow` skips the ordinary
    approval question but never a deny rule or the questions asked in every mode; `ask`
    asks even where the policy would allow; `deny` refuses with `reason`), and/or
    `args` to run instead (validated against the tool's schema again)."""

    permission: Permission | None = None
    reason: str = ""
    args: dict[str, Any] | None = None


def merge_decisions(decisions: Iterable[ToolDecision | None]) -> ToolDecision | None:
    """One decision from several hooks': the strongest permission (deny > ask > allow),
    the reasons of that permission, and the last changed arguments (none when denied)."""
    given = [d for d in decisions if d is not None]
    if not given:
        return None
    permission = max((d.permission for d in given), key=lambda p: _STRENGTH[p])
    reasons = [d.reason for d in given if d.permission == permission and d.reason]
    args = next((d.args for d in reversed(given) if d.args is not None), None)
    return ToolDecision(permission, "; ".join(reasons), None if permission == "deny" else args)


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What is about to be sent to the model (a copy: changing it changes the call,
    not the stored history)."""

    system_prompt: str
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...]
    round: int


class RuntimeHooks:
    """No-op base; every method may raise `StopRun`.

    `on_event` is called for every event of a turn, deltas included, when a subclass
    overrides it. A hook that has no use for `text_delta` / `thinking_delta` events (the
    stream's hot path: thousands a turn) sets `receives_deltas = False`; when no hook
    wants them, the runtime emits deltas without awaiting any hook."""

    receives_deltas: ClassVar[bool] = True
    """Whether `on_event` is called for `text_delta` and `thinking_delta` events."""

    async def before_run(self, user_message: Message) -> Message | None:
        return None

    async def after_run(self, done: TurnDone) -> None:
        return None

    async def before_done(self, reason: str, text: str) -> Sequence[RuntimeEvent]:
        """The turn has ended (`reason`, its answer `text`) and `turn_done` is about to go
        out: events that belong to the turn after its answer (a title call's usage), so
        `turn_done`'s totals and every host count them."""
        return ()

    async def before_model_call(self, request: ModelRequest) -> ModelRequest | None:
        return None

    async def after_model_call(self, message: Message) -> Message | None:
        return None

    async def before_tool_round(
        self, calls: Sequence[ToolCallPart], tools: Sequence[Tool | None]
    ) -> Sequence[RuntimeEvent]:
        """Before a round's calls are checked and run; `tools[i]` is the tool of
        `calls[i]` (None when unknown). Returns events to emit (e.g. notices)."""
        return ()

    async def before_tool(self, call: ToolCallPart) -> ToolCallPart | None:
        return None

    async def after_tool(self, call: ToolCallPart, result: str, is_error: bool) -> str | None:
        return None

    async def on_event(self, event: RuntimeEvent) -> None:
        return None

    def attach(self, emit: Emit) -> None:
        """Called at the start of every turn with the way to emit onto its stream."""
        return None

    async def decide_tool(self, call: ToolCallPart, args: dict[str, Any]) -> ToolDecision | None:
        return None

    async def before_stop(self, text: str) -> str | None:
        """The model ended its turn with `text`; a returned reminder makes it go on."""
        return None

    async def permission_request(self, call: ToolCallPart, args: dict[str, Any]) -> ApprovalDecision | None:
        """The call is about to be asked about; an answer here is given instead of asking
        (`allow`, `deny` with feedback, `edit` with changed arguments, checked again)."""
        return None


def event_listeners(hooks: Iterable[RuntimeHooks]) -> tuple[list[RuntimeHooks], list[RuntimeHooks]]:
    """The hooks whose `on_event` does something (overridden), and of those the ones
    that receive deltas: the runtime awaits only these."""
    listeners = [hook for hook in hooks if type(hook).on_event is not RuntimeHooks.on_event]
    return listeners, [hook for hook in listeners if hook.receives_deltas]
