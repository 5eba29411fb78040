"""The answer text of `wyckoff run --output-format text`, never with discarded output.

When a model call fails mid-answer and is retried, or a fallback model takes over, the
partial text streamed so far is dropped by the runtime. Printed text cannot be dropped,
so: when stdout is a terminal, deltas are printed live and a restart is marked visibly
on its own line (`[… restarted: …; the text above is discarded]`); when stdout is a pipe
or a file, each answer's text is printed once its message is committed, so what a script
reads is exactly the answers that count.
"""

from __future__ import annotations

from typing import TextIO

from wyckoff_cli.core import events as ev


class TextPrinter:
    def __init__(self, out: TextIO, *, live: bool) -> None:
        self.out = out
        self.live = live
        self.ended_with_newline = True

    def handle(self, event: ev.RuntimeEvent) -> None:
        if isinstance(event, ev.TextDelta):
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

    def _write(self, text: str) -> None:
        if not text:
            return
        self.out.write(text)
        self.out.flush()
        self.ended_with_newline = text.endswith("\n")
