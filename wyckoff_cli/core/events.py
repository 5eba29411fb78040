"""The runtime's event stream: the only interface from the runtime to any UI.

Every event is a frozen dataclass whose fields are plain JSON values, with a `type`
string; `to_dict()` gives `{"type": ..., **fields}` and `event_from_dict()` reverses it.
The TUI, the headless runner, the scratchpad and tests all consume these. Fields are
documented in docs/EVENTS.md. Imports only `core/`.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from wyckoff_cli.core.approval import ApprovalDecision, ApprovalResponder, Confirmation
from wyckoff_cli.core.usage import Usage

DoneReason = Literal[
    "completed",  # the model answered without further tool calls
    "max_tool_rounds",  # MAX_TOOL_ROUNDS reached; history left valid
    "aborted",  # the user (or host) cancelled the turn
    "unreliable",  # the loop guard's retries ran out; a warning was shown
    "completed_by_tool",  # a tool flagged `completes_run` succeeded
    "stopped",  # a hook stopped the run
    "error",  # the turn failed (see the preceding `error` event)
    "budget",  # the session's cost budget (`--max-budget-usd`) was reached
    "loop",  # the same call kept getting the same result (the runaway guard)
    "schema_failed",  # the answer was not valid against the output schema after two corrections
]


@dataclass(frozen=True, slots=True)
class _Event:
    type: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        names = _WIRE_FIELDS.get(type(self))
        if names is None:  # once per class: `dataclasses.fields` is slow for once per delta
            names = tuple(f.name for f in dataclasses.fields(self) if f.metadata.get("wire", True))
            _WIRE_FIELDS[type(self)] = names
        data: dict[str, Any] = {"type": self.type}
        for name in names:
            data[name] = getattr(self, name)
        return data


_WIRE_FIELDS: dict[type, tuple[str, ...]] = {}  # each event class's fields on the wire, in order


@dataclass(frozen=True, slots=True)
class ModelStart(_Event):
    type: ClassVar[str] = "model_start"
    round: int
    model: str = ""


@dataclass(frozen=True, slots=True)
class TextDelta(_Event):
    type: ClassVar[str] = "text_delta"
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta(_Event):
    type: ClassVar[str] = "thinking_delta"
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDone(_Event):
    """A round's whole reasoning, once the round's stream ended."""

    type: ClassVar[str] = "thinking"
    text: str
    duration_ms: int = 0


@dataclass(frozen=True, slots=True)
class ToolCallsReceived(_Event):
    """The calls of one round, in order: each `{"id", "name", "args"}`."""

    type: ClassVar[str] = "tool_calls"
    calls: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ApprovalRequested(_Event):
    """A call waits for an answer. It carries everything a host needs: `preview` (diff,
    command and cwd, outside paths), `rule` (what "always" would save), `reason` (why
    the policy asks), `editable_fields` (the arguments a person may edit directly), and
    `responder`, through which any host answers (not serialized)."""

    type: ClassVar[str] = "approval_request"
    id: str
    name: str
    args: dict[str, Any]
    preview: dict[str, Any] = field(default_factory=dict)
    rule: str | None = None
    reason: str = ""
    editable_fields: list[str] = field(default_factory=list)
    responder: ApprovalResponder | None = field(
        default=None, compare=False, repr=False, metadata={"wire": False}
    )

    @property
    def answered(self) -> bool:
        return self.responder is None or self.responder.answered

    def respond(self, decision: ApprovalDecision) -> bool:
        """Answer the request (False if it was answered already or has no responder)."""
        return self.responder.respond(decision) if self.responder is not None else False

    def validate(self, args: dict[str, Any]) -> str | None:
        """Why edited `args` are invalid for the tool, or None."""
        return self.responder.validate(args) if self.responder is not None else None


@dataclass(frozen=True, slots=True)
class ApprovalDecided(_Event):
    """How a call's approval was decided: `allow`, `always`, `edit`, `deny` by the
    approver, or `auto_allow` / `auto_deny` by the policy without asking."""

    type: ClassVar[str] = "approval_result"
    id: str
    name: str
    decision: str
    rule: str | None = None
    feedback: str | None = None
    args: dict[str, Any] | None = None  # with `edit`: the arguments that will run


@dataclass(frozen=True, slots=True)
class ToolStarted(_Event):
    type: ClassVar[str] = "tool_start"
    id: str
    name: str
    args: dict[str, Any]
    background: bool = False


@dataclass(frozen=True, slots=True)
class ToolOutput(_Event):
    """Output a running tool streams (shell output), before its result."""

    type: ClassVar[str] = "tool_output"
    id: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolSucceeded(_Event):
    """`result` is what the model sees (a preview when the full result was offloaded
    to `offloaded_path`)."""

    type: ClassVar[str] = "tool_result"
    id: str
    name: str
    result: str
    elapsed_ms: int = 0
    offloaded_path: str | None = None
    display: dict[str, Any] | None = None  # extra for UIs: {"diff": ...}, {"todos": [...]}
    images: list[str] = field(default_factory=list)  # the result's images, as labels: `shot.png 1280×720`


@dataclass(frozen=True, slots=True)
class ToolFailed(_Event):
    type: ClassVar[str] = "tool_error"
    id: str
    name: str
    error: str
    elapsed_ms: int = 0


@dataclass(frozen=True, slots=True)
class BackgroundTaskUpdate(_Event):
    """`status` is `running`, `completed`, `failed` or `stopped`."""

    type: ClassVar[str] = "background_task"
    task_id: str
    status: str
    name: str = ""
    summary: str = ""
    exit_code: int | None = None


@dataclass(frozen=True, slots=True)
class Compacted(_Event):
    type: ClassVar[str] = "compaction"
    before_messages: int
    after_messages: int
    before_tokens: int
    after_tokens: int
    method: str = "summary"  # "summary" or "drop_oldest" when the summary call failed
    archive_path: str | None = None


@dataclass(frozen=True, slots=True)
class RetryInjected(_Event):
    """The loop guard asked the model again: `missing_tools` for tools (or kinds of
    tool) it should have called, or (`reason="untruthful"`) for a truthful answer after
    `failed_calls` did not succeed. `message` is the text sent; `notice` says it to a
    person."""

    type: ClassVar[str] = "retry"
    attempt: int
    missing_tools: list[str]
    message: str
    reason: Literal["missing_tools", "untruthful"] = "missing_tools"
    max_attempts: int = 2
    failed_calls: list[str] = field(default_factory=list)

    @property
    def notice(self) -> str:
        """What every host shows: what was asked, and why."""
        count = f"(retry {self.attempt} of {self.max_attempts})"
        if self.reason == "untruthful":
            calls = ", ".join(self.failed_calls) or ", ".join(self.missing_tools)
            return (
                f"Asked the model to answer again, truthfully: {calls} did not succeed and its "
                f"answer did not say so {count}"
            )
        wanted = ", ".join(_KIND_WORDS.get(name, name) for name in self.missing_tools)
        return f"Reminded the model to call {wanted} {count}"


_KIND_WORDS = {"edit": "a tool that changes files", "execute": "a tool that runs commands"}


@dataclass(frozen=True, slots=True)
class UsageReported(_Event):
    """One model call's own token counts (consumers add them up), flat for JSON.
    `input_tokens` includes cached tokens; `usage` gives them as `core.usage.Usage`."""

    type: ClassVar[str] = "usage"
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    web_searches: int = 0  # server-side web searches the vendor bills for this call
    # What the call was for: `turn` (the agent's own rounds), `compaction`, ...
    purpose: str = "turn"
    # The earlier tool results this call's prompt sent again: {call_id, tool, tokens} each.
    resent: list[dict[str, Any]] = field(default_factory=list)
    # Who asked for the call when not the agent: an MCP server's name (purpose `mcp_sampling`).
    source: str = ""

    @classmethod
    def from_usage(cls, model: str, usage: Usage, purpose: str = "turn") -> UsageReported:
        u = usage
        return cls(
            model,
            u.input_tokens,
            u.output_tokens,
            u.cache_read_tokens,
            u.cache_write_tokens,
            u.reasoning_tokens,
            u.web_searches,
            purpose,
        )

    @property
    def usage(self) -> Usage:
        return Usage(
            self.input_tokens,
            self.output_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
            self.reasoning_tokens,
            self.web_searches,
        )


BudgetScope = Literal["session", "day"]


@dataclass(frozen=True, slots=True)
class BudgetWarning(_Event):
    """A cost limit is `percent` (50, 80 or 100) spent: the session's (`max_budget_usd`)
    or the day's over every session (`max_day_usd`). A `notice` says the same to people;
    at 100 the run ends with `done.reason == "budget"` before its next model call."""

    type: ClassVar[str] = "budget_warning"
    scope: BudgetScope
    percent: int
    limit_usd: float
    spent_usd: float

    @property
    def notice(self) -> str:
        what = "the session's budget" if self.scope == "session" else "today's budget"
        line = f"{self.percent}% of {what} of ${self.limit_usd:.2f} spent (${self.spent_usd:.4f})"
        return line + ("; the run stops before its next model call" if self.percent >= 100 else "")


@dataclass(frozen=True, slots=True)
class FallbackSwitched(_Event):
    """A model failed with a retryable error and the next one takes over. The UI
    drops this round's partial output (`discarded_text` is what it was)."""

    type: ClassVar[str] = "fallback"
    from_model: str
    to_model: str
    error: str
    discarded_text: str = ""


@dataclass(frozen=True, slots=True)
class Retrying(_Event):
    """A model call failed with a retryable error; the same model is asked again after
    `delay` seconds. The UI drops this call's partial output (`discarded_text`)."""

    type: ClassVar[str] = "retrying"
    model: str
    attempt: int  # the attempt about to be made (2 for the first retry)
    attempts: int  # how many attempts are allowed in all
    delay: float
    error: str
    discarded_text: str = ""
    waited: float = 0.0  # seconds this call waited for output so far (`stream_stall_limit`)
    limit: float | None = None  # the most it waits in all (None: no total bound)
    fallback: str | None = None  # the next model of the chain: the host may skip to it now


@dataclass(frozen=True, slots=True)
class ServerToolUsed(_Event):
    """The vendor ran one of its own tools (web search, code execution) or cited
    sources; the blocks themselves are in the assistant message's `server_tool` parts."""

    type: ClassVar[str] = "server_tool"
    name: str
    summary: str
    provider: str = ""
    sources: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Notice(_Event):
    """Something a person should see that is not an error of the turn (an `error`
    notice reports a request that failed, e.g. an unknown mode)."""

    type: ClassVar[str] = "notice"
    level: Literal["info", "warning", "error"]
    message: str


@dataclass(frozen=True, slots=True)
class HookRan(_Event):
    """A user hook ran: for `hook_event` (`PreToolUse`, `Stop`, …), its `command` from
    `source`, how long, and the `outcome`: `ok`, `blocked` (exit 2 or a JSON decision
    that blocks or denies), `error` (another exit code: shown, not blocking) or
    `timeout`. `message` is what the person is shown (stderr, the reason); `call_id`
    the tool call it belongs to."""

    type: ClassVar[str] = "hook_run"
    hook_event: str
    command: str
    outcome: Literal["ok", "blocked", "error", "timeout"]
    elapsed_ms: int = 0
    exit_code: int | None = None
    message: str = ""
    source: str = ""
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class MessageCommitted(_Event):
    """A message became final and was appended to the history (for persistence)."""

    type: ClassVar[str] = "message"
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TurnDone(_Event):
    type: ClassVar[str] = "done"
    text: str
    reason: DoneReason
    rounds: int
    usage: dict[str, int] = field(default_factory=dict)
    # Why the last model call stopped (`end_turn`, `tool_use`, `max_tokens`,
    # `content_filter`, `other`), when the model call got that far.
    stop_reason: str | None = None
    # USD of the turn's model calls, sub-agents' included (None: no call was priced).
    cost_usd: float | None = None
    # The parsed JSON answer when the turn had an output schema (session/output_schema.py).
    data: Any = None


@dataclass(frozen=True, slots=True)
class TurnFailed(_Event):
    """The turn failed. `kind` is the error kind (e.g. `rate_limited`, `auth`)."""

    type: ClassVar[str] = "error"
    kind: str
    message: str
    retryable: bool = False


# ------------------------------------------------------------------ the chat controller's own


@dataclass(frozen=True, slots=True)
class CommandOutput(_Event):
    """What a slash command shows: a title, text, and optionally a table."""

    type: ClassVar[str] = "command_output"
    command: str
    title: str = ""
    text: str = ""
    columns: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SessionChanged(_Event):
    """The chat now shows another session: a new one (`/clear`) or a resumed one."""

    type: ClassVar[str] = "session_changed"
    session_id: str | None
    resumed: bool = False
    messages: int = 0


@dataclass(frozen=True, slots=True)
class ConfirmRequested(_Event):
    """A request waits for a yes/no: `/undo`, `/redo` and `/rewind` show what they will
    restore (`text`, a preview) and change nothing until it is answered through
    `responder` (not serialized). `command` names the request (`undo`, ...)."""

    type: ClassVar[str] = "confirm_request"
    command: str
    title: str
    text: str
    responder: Confirmation | None = field(default=None, compare=False, repr=False, metadata={"wire": False})

    def respond(self, yes: bool) -> bool:
        return self.responder.respond(yes) if self.responder is not None else False


@dataclass(frozen=True, slots=True)
class Rewound(_Event):
    """`/rewind` removed `messages_removed` messages from the conversation (0 when it
    restored only the code); `input_text` is the chosen message, for the host's input."""

    type: ClassVar[str] = "rewound"
    messages_removed: int
    input_text: str | None = None


@dataclass(frozen=True, slots=True)
class ModelChanged(_Event):
    type: ClassVar[str] = "model_changed"
    model: str
    context_window: int = 0


@dataclass(frozen=True, slots=True)
class ModeChanged(_Event):
    type: ClassVar[str] = "mode_changed"
    mode: str


@dataclass(frozen=True, slots=True)
class Preparing(_Event):
    """Before a turn's first model call, what it still waits for ("starting MCP server
    NAME…", "loading the model's SDK…"), so a host never shows "idle" meanwhile."""

    type: ClassVar[str] = "preparing"
    what: str


@dataclass(frozen=True, slots=True)
class SubagentEvent(_Event):
    """An event of a sub-agent (a `task` call's child run), wrapped with who made it:
    `agent_id` (this run), `agent` (the definition's name), `parent_call_id` (the
    `task` call). `event` is the child's own event; on the wire it is its `to_dict()`.
    A child's `approval_request` keeps its responder, so hosts answer it as any other."""

    type: ClassVar[str] = "subagent"
    agent_id: str
    agent: str
    parent_call_id: str
    event: RuntimeEvent

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "agent_id": self.agent_id,
            "agent": self.agent,
            "parent_call_id": self.parent_call_id,
            "event": self.event.to_dict(),
        }

    @property
    def inner(self) -> RuntimeEvent:
        """The innermost event (children never nest today, but the wrapping would)."""
        event: RuntimeEvent = self.event
        while isinstance(event, SubagentEvent):
            event = event.event
        return event


def source_agent(source: str) -> str:
    """Whose spend a call made for `source` (`UsageReported.source`) counts as: `mcp:SERVER`."""
    return f"mcp:{source}"


def approval_of(event: RuntimeEvent) -> ApprovalRequested | None:
    """The approval request `event` is, or wraps (a sub-agent's), else None."""
    if isinstance(event, SubagentEvent):
        event = event.inner
    return event if isinstance(event, ApprovalRequested) else None


RuntimeEvent = (
    ModelStart
    | TextDelta
    | ThinkingDelta
    | ThinkingDone
    | ToolCallsReceived
    | ApprovalRequested
    | ApprovalDecided
    | ToolStarted
    | ToolOutput
    | ToolSucceeded
    | ToolFailed
    | BackgroundTaskUpdate
    | Compacted
    | RetryInjected
    | UsageReported
    | BudgetWarning
    | FallbackSwitched
    | Retrying
    | ServerToolUsed
    | Notice
    | HookRan
    | MessageCommitted
    | TurnDone
    | TurnFailed
    | CommandOutput
    | SessionChanged
    | ConfirmRequested
    | Rewound
    | ModelChanged
    | ModeChanged
    | Preparing
    | SubagentEvent
)

EVENT_TYPES: dict[str, type[_Event]] = {cls.type: cls for cls in typing.get_args(RuntimeEvent)}


def event_from_dict(data: dict[str, Any]) -> RuntimeEvent:
    """Rebuild an event from `to_dict()` output. Unknown keys are an error."""
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown event type: {kind!r}")
    fields = {k: v for k, v in data.items() if k != "type"}
    if cls is SubagentEvent:
        fields["event"] = event_from_dict(fields["event"])
    return cls(**fields)  # type: ignore[return-value]
