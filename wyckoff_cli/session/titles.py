"""Session titles from the small model (`[routing] title`, or `small`).

After a session's first completed turn, `SessionTitler` asks the title route for a few
words naming what the session is about (from the first request and answer) and saves them
as the session's title: `sessions list`, the resume picker and ACP's session lists show
it instead of the first message. The call's usage (purpose `title`) goes out as the turn's
last event before `turn_done`, so hosts record it and `done` and live totals count it; a failing small
model falls back to the session's (one notice). A
title that cannot be made leaves the first message as the title.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.providers.routed import SmallModelRoute
from wyckoff_cli.runtime.hooks import RuntimeHooks
from wyckoff_cli.storage.recorder import SessionRecorder

log = logging.getLogger(__name__)

TITLE_PROMPT = (
    "You name coding sessions. Answer with a title of 3 to 7 words saying what the session "
    "is about, in the user's language: no quotes, no final full stop, nothing else."
)
MAX_TITLE_CHARS = 60


class SessionTitler(RuntimeHooks):
    receives_deltas = False

    def __init__(
        self, route: SmallModelRoute, recorder: SessionRecorder, session_provider: Callable[[], LLMProvider]
    ) -> None:
        self.route = route
        self.recorder = recorder
        self.session_provider = session_provider
        self.done = recorder.info.turns > 1  # a resumed session keeps the title it has

    async def before_done(self, reason: str, text: str) -> list[ev.RuntimeEvent]:
        """The title call, once the first turn is answered: its usage (and a fallback's
        notice) go out as the turn's last events before `turn_done`, so live totals and
        `done` count it."""
        if self.done or reason not in ("completed", "completed_by_tool"):
            return []
        self.done = True
        request = next((m.text for m in self.recorder.conversation if m.role == "user"), "")
        asked = f"The request:\n{request[:2000]}\n\nThe answer:\n{text[:1000]}\n\nThe title:"
        provider = self.route.over(self.session_provider())
        events: list[ev.RuntimeEvent] = []
        try:
            response = await provider.chat([Message.user(asked)], [], TITLE_PROMPT)
        except Exception:  # a title is a nicety: never break the session for it
            log.warning("could not make a session title", exc_info=True)
            return events
        finally:
            events += [ev.Notice("warning", notice) for notice in self.route.take_notices()]
        served = self.route.served or provider.name
        events.append(ev.UsageReported.from_usage(served, response.usage, purpose="title"))
        title = clean_title(response.text)
        if title:
            self.recorder.set_title(title)
        return events


def clean_title(text: str) -> str:
    """The first line, without quotes, a heading mark or a final full stop; cut to
    `MAX_TITLE_CHARS` at a word."""
    line = next((part.strip() for part in text.strip().splitlines() if part.strip()), "")
    line = line.lstrip("#").strip()
    if line.lower().startswith("title:"):
        line = line[6:].strip()
    line = line.strip("\"'`*").strip().rstrip(".").strip("\"'`*").strip()
    if len(line) > MAX_TITLE_CHARS:
        line = line[:MAX_TITLE_CHARS].rsplit(" ", 1)[0] + "…"
    return " ".join(line.split())
