"""The runaway guard: the same call getting the same result, over and over.

A model can loop on calls that all *succeed* (re-reading a file, re-running a passing
test) as surely as on failing ones. `RepeatGuard` watches every answered call in order:
the same tool, with the same canonical arguments, getting the same result `warn_at`
times in a row (3) has a note added to that result telling the model so (once per
turn); `stop_at` times in a row (5) ends the turn with `done.reason = "loop"` right
after that result, before another model call is paid for. A call the doom-loop guard
refused for repeating the previous one is the same outcome again: the model got
nothing new from it.
"""

from __future__ import annotations

from wyckoff_cli.core.messages import ToolCallPart
from wyckoff_cli.runtime.guards import Guard, Refuser, ResultVerdict, TurnState, canonical_call


class RepeatGuard(Guard):
    def __init__(self, warn_at: int = 3, stop_at: int = 5) -> None:
        self.warn_at = warn_at
        self.stop_at = stop_at
        self._last_call: str | None = None
        self._last_result: str | None = None
        self._streak = 0
        self._warned = False

    def check_result(
        self, state: TurnState, call: ToolCallPart, text: str, refused_by: Refuser | None
    ) -> ResultVerdict | None:
        key = canonical_call(call)
        same_call = key == self._last_call
        if same_call and (text == self._last_result or refused_by == "guard"):
            self._streak += 1
        else:
            self._last_call, self._last_result, self._streak = key, text, 1
        if self._streak >= self.stop_at:
            return ResultVerdict(
                stop=(
                    f"Turn ended: {call.name} was called {self._streak} times in a row with the "
                    "same arguments and got the same result each time (a loop)."
                )
            )
        if self._streak >= self.warn_at and not self._warned:
            self._warned = True
            return ResultVerdict(
                note=(
                    f"Note: you have now called {call.name} {self._streak} times in a row with these "
                    "exact arguments and got this same result. Calling it again will not "
                    f"change it; at {self.stop_at} in a row the turn ends. Use what you have, "
                    "change the arguments, or tell the user what is blocking you."
                )
            )
        return None
