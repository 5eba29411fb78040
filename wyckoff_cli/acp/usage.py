"""`PromptResponse.usage`: what a turn used, a cancelled one included.

Providers report a call's usage when its stream ends, so a stream cut short by
`session/cancel` reports none and the turn's own sum misses it. `TurnUsage` follows the
turn's events and, for a cancelled turn, adds an estimate of the cut call: its prompt
about the size of the context before it (the last reported prompt plus answer, plus the
new message) and its answer the text streamed since, at four characters a token. The
response then says `_meta.estimated` so a client can tell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acp import schema

from wyckoff_cli.core import events as ev

CHARS_PER_TOKEN = 4


@dataclass
class TurnUsage:
    prompt_chars: int = 0  # the message the person sent
    context_tokens: int = 0  # the last reported call's prompt and answer
    unreported_chars: int = 0  # streamed since the last call that reported its usage
    calls_started: int = 0
    calls_reported: int = 0

    def observe(self, event: ev.RuntimeEvent, context_tokens: int) -> None:
        match event:
            case ev.ModelStart():
                self.calls_started += 1
                self.unreported_chars = 0
            case ev.TextDelta(text=text) | ev.ThinkingDelta(text=text):
                self.unreported_chars += len(text)
            case ev.UsageReported():
                self.calls_reported += 1
                self.context_tokens = context_tokens
                self.unreported_chars = 0
            case _:
                pass

    def response(self, done: ev.TurnDone | None) -> schema.Usage | None:
        """The usage to answer the prompt with (None when the turn reported none and
        nothing was cut short)."""
        usage: dict[str, Any] = dict(done.usage) if done is not None and done.usage else {}
        cut = self.calls_started > self.calls_reported and (done is None or done.reason == "aborted")
        if not usage and not cut:
            return None
        input_tokens = int(usage.get("input_tokens", 0))
        output_tokens = int(usage.get("output_tokens", 0))
        meta = None
        if cut:
            input_tokens += self.context_tokens + self.prompt_chars // CHARS_PER_TOKEN
            output_tokens += -(-self.unreported_chars // CHARS_PER_TOKEN)
            meta = {"estimated": True}
        return schema.Usage(
            total_tokens=input_tokens + output_tokens,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            thought_tokens=int(usage.get("reasoning_tokens", 0)) or None,
            cached_read_tokens=int(usage.get("cache_read_tokens", 0)) or None,
            cached_write_tokens=int(usage.get("cache_write_tokens", 0)) or None,
            field_meta=meta,
        )
