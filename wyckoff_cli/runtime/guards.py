"""Guards: small objects the loop consults at fixed points, run as a pipeline.

- `RoundLimitGuard`: more tool rounds than allowed ends the turn.
- `DoomLoopGuard`: the same call (tool + canonical arguments) 3 times within the last
  6 calls is refused and the rest of the batch is aborted.
- `RepeatGuard` (runtime/repeats.py, the runaway guard): the same call getting the same
  result 3 times in a row is pointed out to the model, 5 times ends the turn (`loop`).
- `RequiredToolsGuard` (the loop guard): a final answer that skipped required tools gets a retry message, at
  most `max_retries` times; then the turn ends as unreliable. When the turn attempted
  edits or commands and none of that kind succeeded, and the answer does not say so,
  it asks once for a truthful answer naming the failed calls; an answer that still
  does not admit it ends the turn as unreliable. A call refused by a hook, the
  policy, a person or a guard is a refusal the answer may simply report ("The hook
  blocked my command."): no second answer is asked for then.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Literal

from wyckoff_cli.core.messages import ToolCallPart
from wyckoff_cli.runtime.claims import admits_failure, claims_edit, claims_run, reports_refusal
from wyckoff_cli.runtime.expectation import Requirement, TurnExpectation

Refuser = Literal["hook", "policy", "user", "no_approver", "guard"]
"""Who refused a call that never ran: a PreToolUse hook, the permission policy (rules,
mode), the person asked, a run with no one to ask, or a guard of this module."""


@dataclass
class TurnState:
    """What guards may look at. Owned by the loop, one per turn."""

    tool_rounds: int = 0
    retries: int = 0
    succeeded: list[ToolCallPart] = field(default_factory=list)
    failed: list[tuple[ToolCallPart, str]] = field(default_factory=list)  # (call, error text)
    refused: dict[str, Refuser] = field(default_factory=dict)  # call id → who refused it

    def record_result(
        self, call: ToolCallPart, text: str, is_error: bool, refused_by: Refuser | None = None
    ) -> None:
        """Note one answered call (the loop calls this for every tool result);
        `refused_by` when the call was refused rather than run and failed."""
        if is_error:
            self.failed.append((call, text))
            if refused_by is not None:
                self.refused[call.id] = refused_by
        else:
            self.succeeded.append(call)


@dataclass(frozen=True, slots=True)
class RoundVerdict:
    stop: bool
    message: str = ""


@dataclass(frozen=True, slots=True)
class CallVerdict:
    refuse: str | None = None  # error text for this call
    abort_rest: bool = False


@dataclass(frozen=True, slots=True)
class ResultVerdict:
    note: str | None = None  # added to this call's result, for the model
    stop: str | None = None  # end the turn as a loop after this result: the notice


RetryReason = Literal["missing_tools", "untruthful"]


@dataclass(frozen=True, slots=True)
class FinalVerdict:
    retry_message: str | None = None
    missing: tuple[Requirement, ...] = ()
    unreliable: bool = False
    warning: str | None = None  # the notice for an unreliable end, when not the default one
    reason: RetryReason = "missing_tools"  # what the retry message asks for
    calls: tuple[str, ...] = ()  # with "untruthful": the calls that did not succeed, in a few words


class Guard:
    def check_round(self, state: TurnState) -> RoundVerdict | None:
        return None

    def check_call(self, state: TurnState, call: ToolCallPart) -> CallVerdict | None:
        return None

    def check_final(self, state: TurnState, text: str) -> FinalVerdict | None:
        return None

    def check_result(
        self, state: TurnState, call: ToolCallPart, text: str, refused_by: Refuser | None
    ) -> ResultVerdict | None:
        """Look at one answered call (refused, failed or succeeded), in order."""
        return None


class RoundLimitGuard(Guard):
    def __init__(self, max_tool_rounds: int) -> None:
        self.max_tool_rounds = max_tool_rounds

    def check_round(self, state: TurnState) -> RoundVerdict | None:
        if state.tool_rounds > self.max_tool_rounds:
            return RoundVerdict(
                True,
                f"Not run: this turn reached its limit of {self.max_tool_rounds} tool rounds. "
                "Summarise what you did and what remains; the user can ask you to continue.",
            )
        return None


def canonical_call(call: ToolCallPart) -> str:
    args: Any = call.arguments if call.raw_arguments is None else call.raw_arguments
    return call.name + ":" + json.dumps(args, sort_keys=True, separators=(",", ":"))


class DoomLoopGuard(Guard):
    def __init__(self, repeats: int = 3, window: int = 6) -> None:
        self.repeats = repeats
        self.window: deque[str] = deque(maxlen=window)

    def check_call(self, state: TurnState, call: ToolCallPart) -> CallVerdict | None:
        key = canonical_call(call)
        self.window.append(key)
        if sum(1 for k in self.window if k == key) >= self.repeats:
            return CallVerdict(
                refuse=(
                    f"Refused: you called {call.name} with these exact arguments {self.repeats} "
                    f"times within the last {self.window.maxlen} calls, so you appear to be in "
                    "a loop. The remaining calls of this batch were not run. "
                    "Stop repeating it: use the results you already have, change the "
                    "arguments, or explain to the user what is blocking you."
                ),
                abort_rest=True,
            )
        return None


class RequiredToolsGuard(Guard):
    def __init__(self, expectation: TurnExpectation, max_retries: int = 2) -> None:
        self.expectation = expectation
        self.max_retries = max_retries
        self.asked_for_truth = False

    def check_final(self, state: TurnState, text: str) -> FinalVerdict | None:
        unmet = self.expectation.unmet_attempts(state.succeeded, state.failed)
        if unmet and not self._says_so(state, unmet, text):
            return self._untruthful(state, unmet)
        missing = self.expectation.missing(state.succeeded, text, state.failed)
        if not missing:
            return None
        if state.retries >= self.max_retries:
            return FinalVerdict(missing=tuple(missing), unreliable=True)
        lines = "\n".join(f"- {req.describe()}" for req in missing)
        message = (
            "Before you answer, you still need to use tools you have not called "
            f"successfully in this turn:\n{lines}\n"
            "Call them now and base your answer on their results; do not claim results "
            "you have not seen."
        )
        return FinalVerdict(retry_message=message, missing=tuple(missing))

    def _says_so(self, state: TurnState, unmet: list[tuple[ToolCallPart, str]], text: str) -> bool:
        """The answer admits the calls did not succeed. When every one was refused (not
        run), reporting the refusal is enough: naming who refused it ("the hook", "the
        policy") without claiming the refused kind of work was done anyway."""
        if admits_failure(text):
            return True
        refusers = {state.refused.get(call.id) for call, _ in unmet}
        if None in refusers:
            return False
        kinds = {self.expectation.kind_of(call.name) for call, _ in unmet}
        claimed = ("edit" in kinds and claims_edit(text)) or ("execute" in kinds and claims_run(text))
        return not claimed and reports_refusal(text, {r for r in refusers if r is not None})

    def _untruthful(self, state: TurnState, unmet: list[tuple[ToolCallPart, str]]) -> FinalVerdict:
        kinds = dict.fromkeys(self.expectation.kind_of(call.name) for call, _ in unmet)
        missing = tuple(
            Requirement(kind=kind, reason="every such call this turn was refused or failed") for kind in kinds
        )
        names = ", ".join(dict.fromkeys(call.name for call, _ in unmet))
        if self.asked_for_truth or state.retries >= self.max_retries:
            return FinalVerdict(
                missing=missing,
                unreliable=True,
                warning=(
                    f"This answer may be unreliable: no {names} call succeeded this turn "
                    "(refused or failed), and the answer does not say so. Nothing was changed "
                    "by those calls."
                ),
            )
        self.asked_for_truth = True
        lines = "\n".join(f"- {describe_call(call)}: {_first_line(error)}" for call, error in unmet)
        message = (
            "None of your attempts this turn to change files or run commands succeeded:\n"
            f"{lines}\n"
            "So nothing was changed by them. Answer again, truthfully: say what you could not "
            "do and why, and what the user can do instead (for example approve the call, or "
            "apply the change themselves). Do not say it was done."
        )
        calls = tuple(dict.fromkeys(describe_call(call) for call, _ in unmet))
        return FinalVerdict(retry_message=message, missing=missing, reason="untruthful", calls=calls)


def describe_call(call: ToolCallPart) -> str:
    """`edit_file(path=calc.py)`: a call in a few words, for messages to the model."""
    shown = []
    for key, value in list(call.arguments.items())[:2]:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        text = text if len(text) <= 60 else text[:57] + "..."
        shown.append(f"{key}={text}")
    return f"{call.name}({', '.join(shown)})"


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(no message)"
    return line if len(line) <= limit else line[: limit - 1] + "…"


class GuardPipeline:
    def __init__(self, guards: list[Guard]) -> None:
        self.guards = guards

    def check_round(self, state: TurnState) -> RoundVerdict | None:
        for guard in self.guards:
            verdict = guard.check_round(state)
            if verdict is not None:
                return verdict
        return None

    def check_call(self, state: TurnState, call: ToolCallPart) -> CallVerdict | None:
        for guard in self.guards:
            verdict = guard.check_call(state, call)
            if verdict is not None:
                return verdict
        return None

    def check_final(self, state: TurnState, text: str) -> FinalVerdict | None:
        for guard in self.guards:
            verdict = guard.check_final(state, text)
            if verdict is not None:
                return verdict
        return None

    def check_result(
        self, state: TurnState, call: ToolCallPart, text: str, refused_by: Refuser | None
    ) -> ResultVerdict | None:
        for guard in self.guards:
            verdict = guard.check_result(state, call, text, refused_by)
            if verdict is not None:
                return verdict
        return None
