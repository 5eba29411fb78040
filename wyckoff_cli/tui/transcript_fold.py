"""Folding a long live transcript: old rounds become "↑ N earlier messages".

Every layout pass of the screen walks every entry of the transcript (Textual arranges
all of them, on screen or not), and a tool round mounts entries, so after a few
hundred tool calls each round's layout passes cost tens of milliseconds and typed keys
wait behind them (bench/live_session.py). A resumed session never has that problem: it
shows its last messages and folds the rest into a `LoadEarlier` entry
(tui/replay.py). `TranscriptFold` does the same for a live session: when the entries
shown since the transcript was last (re)built pass FOLD_AT, the oldest rounds above
the screen are removed and replaced by one `LoadEarlier` holding the messages they
showed, so the transcript stays at about FOLD_AT entries (plus what was replayed), or
what fills the screen if that is more.
Expanding it shows them as a resumed session would (`widgets_for`): every message, in
order; notices that were not messages (a "/help" table, a retry notice) are not
brought back.

A fold happens only at a round's start (the previous rounds' tools have all finished,
so the router holds no live widget among them) and only while the transcript follows
its end: what the person is reading never moves. Entries held for the next frame
(`pending`, tui/entry_batch.py) count as shown: a round's start is marked after them, so
a fold never takes the messages of a round whose entries are not mounted yet. Entries
come in batches while a turn runs, so the transcript may pass FOLD_AT by one batch
before the next round's start folds it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from textual.widget import Widget

from wyckoff_cli.core.messages import Message
from wyckoff_cli.tui.replay import LoadEarlier
from wyckoff_cli.tui.widgets.tool_call import ToolCallView
from wyckoff_cli.tui.widgets.transcript import Transcript

__all__ = ["FOLD_AT", "KEEP", "TranscriptFold"]

FOLD_AT = 100
"""Entries shown live (since the transcript was last built) that start a fold."""
KEEP = 40
"""Entries left after a fold, at least (a fold cuts at a round's start, and never
folds an entry with a line on screen or below it)."""


class TranscriptFold:
    """Tracks the messages committed since the transcript was (re)built and, at a
    round's start, folds the oldest rounds when too many entries are mounted."""

    def __init__(
        self,
        transcript: Callable[[], Transcript],
        tools: dict[str, ToolCallView],
        folder: Callable[[], Path | None] = lambda: None,
        pending: Callable[[], Sequence[Widget]] = lambda: (),
    ) -> None:
        self._transcript = transcript
        self._tools = tools  # the router's calls by id: folded ones are dropped from it
        self._folder = folder
        self._pending = pending  # entries added, mounted at the next frame
        self._committed: list[dict[str, Any]] = []
        self._messages: list[Message] = []  # the committed ones decoded so far
        self._prefix: Widget | None = None  # the last entry present at restart (never folded)
        self._marks: list[tuple[Widget, int]] = []  # (last entry before a round, messages then)
        self._fold: LoadEarlier | None = None
        self.folds = 0
        """How many folds ran (for tests and benchmarks)."""

    def restart(self) -> None:
        """The transcript was rebuilt (a session shown or replayed): what it holds now
        stays; only what is shown from here on is folded."""
        transcript = self._transcript()
        self._prefix = transcript.children[-1] if transcript.children else None
        self._committed = []
        self._messages = []
        self._marks = []
        self._fold = None

    def committed(self, message: dict[str, Any]) -> None:
        self._committed.append(message)

    def round_started(self) -> None:
        """A model call starts: note where the round begins and fold if it is time."""
        transcript = self._transcript()
        pending = self._pending()
        if not transcript.is_attached or not (transcript.children or pending):
            return
        children = list(transcript.children)
        if self._prefix is not None and self._prefix.parent is not transcript:
            self.restart()  # the transcript was replaced without a restart()
            return
        start = children.index(self._prefix) + 1 if self._prefix is not None else 0
        last = pending[-1] if pending else children[-1]
        if self._marks and self._marks[-1][0] is last:
            self._marks[-1] = (last, len(self._committed))  # nothing shown since
        elif len(children) + len(pending) > start:
            self._marks.append((last, len(self._committed)))
        if len(children) - start > FOLD_AT and transcript.following:
            self._fold_before(transcript, children, start)

    def _fold_before(self, transcript: Transcript, children: list[Widget], start: int) -> None:
        position = {id(widget): index for index, widget in enumerate(children)}
        held = {id(widget) for widget in self._pending()}
        chosen: tuple[int, int] | None = None
        kept_marks: list[tuple[Widget, int]] = []
        top = transcript.scroll_y  # the first line on screen, in the transcript's content
        for widget, count in self._marks:
            index = position.get(id(widget))
            if index is None:
                if id(widget) in held:  # mounted at the next frame: a later fold may cut there
                    kept_marks.append((widget, count))
                continue
            region = widget.virtual_region_with_margin
            # wholly above the screen as last laid out (an entry mounted since has no region yet)
            above = region.width > 0 and region.bottom <= top
            if len(children) - 1 - index >= KEEP and above:
                chosen = (index, count)
            else:
                kept_marks.append((widget, count))
        if chosen is None:
            return
        last, count = chosen
        self._marks = kept_marks
        folded = children[start : last + 1]
        for message in self._committed[len(self._messages) : count]:
            self._messages.append(Message.from_dict(message))
        earlier = LoadEarlier(transcript, self._messages[:count], self._folder())
        transcript.mount(earlier, before=children[last + 1])
        gone = {id(widget) for widget in folded}
        for call_id in [key for key, view in self._tools.items() if id(view) in gone]:
            del self._tools[call_id]
        transcript.remove_children(folded)
        self._fold = earlier
        self.folds += 1
