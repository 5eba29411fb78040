"""The answer text of `wyckoff run --output-format text`, never with discarded output.

When a model call fails mid-answer and is retried, or a fallback model takes over, the
partial text streamed so far is dropped by the runtime. Printed text cannot be dropped,
so: when stdout is a terminal, deltas are printed live and a restart is marked visibly
on its own line (`[… restarted: …; the text above is discarded]`); when stdout is a pipe
or a file, each answer's text is printed once its message is committed, so what a script
reads is exactly the answers that count.

Each round's text is separated from the previous one by a blank line, and every refused
or failed tool call is reported on stderr, one line each.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from wyckoff_cli.core import events as ev


class TextPrinter:
    def __init__(
        self, out: TextIO, *, live: bool, err: TextIO | None = None, flush: Callable[[], None] | None = None
    ) -> None:
        self.out = out
        self._flush = flush or out.flush  # `wyckoff run`: one flush per pass of the loop
        self.err = err
        self.live = live
        self.ended_with_newline = True
        self.printed = False  # any answer text yet
        self.new_round = False  # the next text starts a new round: a blank line first

    def handle(self, event: ev.RuntimeEvent) -> None:
        if isinstance(event, ev.ModelStart):
            self.new_round = self.printed
        elif isinstance(event, ev.ToolFailed):
            first = event.error.strip().splitlines()[0] if event.error.strip() else "failed"
            err = self.err or sys.stderr
            self.out.flush()  # the answer so far before the line on stderr
            err.write(f"wyckoff: {event.name} not run or failed: {first[:300]}\n")
            err.flush()
        elif isinstance(event, ev.TextDelta):
            if self.live:
                self._write(event.text)
        elif isinstance(event, ev.FallbackSwitched | ev.Retrying):
            if self.live and event.discarded_text:
                what = (
                    f"retrying {event.model}"
                    if isinstance(event, ev.Retrying)
                    else f"continuing with {event.to_model}"
                )
                self._write(f"\n[answer restarted: {what}; the text above is discarded]\n")
        elif isinstance(event, ev.MessageCommitted) and not self.live:
            message = event.message
            if message.get("role") == "assistant":
                text = "".join(p.get("text", "") for p in message.get("parts", ()) if p.get("type") == "text")
                self._write(text)
                self.new_round = self.printed

    def _write(self, text: str) -> None:
        if not text:
            return
        if self.new_round:
            self.out.write("\n" if self.ended_with_newline else "\n\n")
            self.new_round = False
        self.printed = True
        self.out.write(text)
        self._flush()
        self.ended_with_newline = text.endswith("\n")
