"""What the runtime does with a model's stop reason after each round.

The adapters end every stream with a `StopChunk`; the runtime puts its reason on the
assistant message (`meta["stop_reason"]`) and into `done.stop_reason`, and asks
`StopReasonReview.review()` what to do next:

- **Text cut at the output limit** (`max_tokens`, no tool call): the model is asked to
  continue where it stopped, at most `max_continuations` times (2 by default), each
  time with a notice; `full_text()` joins the pieces for `done.text`.
- **Cut inside a tool call's arguments** (`max_tokens` with tool calls, from a vendor
  that streams calls in fragments; Gemini sends each call whole): no call of that
  message runs. Each gets an error result telling the model its call was
  truncated, and the model gets another round (counted as a continuation).
- **Safety / recitation stop** (`content_filter`): a warning notice, not a silent end.
- **Paused server-tool turn** (`pause`, Anthropic's `pause_turn`): the answer so far is
  sent back as it is so the vendor goes on, at most `MAX_PAUSES` times.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message
from wyckoff_cli.providers.registry import vendor_of

MAX_CONTINUATIONS = 2
WHOLE_CALLS = ("gemini",)  # vendors that send each tool call whole, never in fragments
MAX_PAUSES = 5
CONTINUE_PROMPT = (
    "Your previous answer was cut off at the output-token limit. Continue exactly where it "
    "stopped, without repeating what you already wrote."
)
TRUNCATED_CALL = (
    "Not run: your response reached the output-token limit while this tool call was being "
    "written, so its arguments are incomplete. Send the call again; keep its arguments "
    "smaller (for example, write a large file in several parts)."
)
NOT_RUN_WITH_TRUNCATED = (
    "Not run: your response was cut off at the output-token limit, so none of its tool calls "
    "ran. Send the calls again."
)


@dataclass
class StopAction:
    """Events to emit and messages to append, then what the loop does: `continue`
    (another model round), `end` (finish the turn) or `proceed` (as usual)."""

    events: list[ev.RuntimeEvent] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    then: Literal["continue", "end", "proceed"] = "proceed"


class StopReasonReview:
    """One turn's view of its stop reasons."""

    def __init__(self, max_continuations: int = MAX_CONTINUATIONS) -> None:
        self.max_continuations = max_continuations
        self.continuations = 0
        self.pauses = 0
        self.last: str | None = None
        self._earlier: list[str] = []  # text of rounds that were cut and continued

    def full_text(self, text: str) -> str:
        """The answer including the pieces before each continuation."""
        return "".join(self._earlier) + text

    def review(self, assistant: Message) -> StopAction | None:
        reason = assistant.meta.get("stop_reason")
        self.last = reason if isinstance(reason, str) else None
        if reason == "max_tokens":
            if assistant.tool_calls:
                if vendor_of(str(assistant.meta.get("model", ""))) in WHOLE_CALLS:
                    return None  # such calls arrive whole: the cut was after them
                return self._truncated_calls(assistant)
            return self._cut_text(assistant)
        if reason == "pause" and not assistant.tool_calls:
            if self.pauses >= MAX_PAUSES:
                return StopAction([ev.Notice("warning", "The model paused its turn again; stopped here.")])
            self.pauses += 1
            self._earlier.append(assistant.text)
            return StopAction(then="continue")  # the paused answer goes back unchanged
        if reason == "content_filter":
            raw = assistant.meta.get("stop_raw") or "content filter"
            shown = "the answer was cut short" if assistant.text else "no answer was given"
            return StopAction(
                [
                    ev.Notice(
                        "warning",
                        f"The model stopped on the vendor's safety or recitation filter ({raw}): {shown}.",
                    )
                ]
            )
        return None

    def _cut_text(self, assistant: Message) -> StopAction:
        if self.continuations >= self.max_continuations:
            return StopAction(
                [
                    ev.Notice(
                        "warning",
                        f"The answer was cut off at the output-token limit (after {self.continuations} "
                        "continuations); raise max_tokens for this model to get it whole.",
                    )
                ]
            )
        self.continuations += 1
        self._earlier.append(assistant.text)
        notice = ev.Notice(
            "info",
            "The answer reached the output-token limit; asking the model to continue "
            f"({self.continuations} of {self.max_continuations}).",
        )
        prompt = Message.user(CONTINUE_PROMPT, synthetic="continuation")
        return StopAction([notice], [prompt], "continue")

    def _truncated_calls(self, assistant: Message) -> StopAction:
        calls = assistant.tool_calls
        action = StopAction()
        for position, call in enumerate(calls):
            text = TRUNCATED_CALL if position == len(calls) - 1 else NOT_RUN_WITH_TRUNCATED
            action.events.append(ev.ToolFailed(call.id, call.name, text))
            action.messages.append(Message.tool_result(call.id, call.name, text, is_error=True))
        last = calls[-1].name
        if self.continuations >= self.max_continuations:
            action.events.append(
                ev.Notice(
                    "warning",
                    f"The model's {last} call was cut off at the output-token limit again; it was not "
                    "run. Raise max_tokens for this model.",
                )
            )
            action.then = "end"
            return action
        self.continuations += 1
        action.events.append(
            ev.Notice(
                "warning",
                f"The model's {last} call was cut off at the output-token limit; it was not run and "
                "the model was told.",
            )
        )
        action.then = "continue"
        return action
