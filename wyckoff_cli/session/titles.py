"""Session titles from the small model (`[routing] title`, or `small`).

After a session's first completed turn, `SessionTitler` asks the title route for a few
words naming what the session is about (from the first request and answer) and saves them
as the session's title: `sessions list`, the resume picker and ACP's session lists show
it instead of the first message. The call is recorded in the session's trace with purpose
`title`; a failing small model falls back to the session's (one notice in the trace). A
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

    async def after_run(self, done: ev.TurnDone) -> None:
        if self.done or done.reason not in ("completed", "completed_by_tool"):
            return
        self.done = True
        request = next((m.text for m in self.recorder.conversation if m.role == "user"), "")
        asked = f"The request:\n{request[:2000]}\n\nThe answer:\n{done.text[:1000]}\n\nThe title:"
        provider = self.route.over(self.session_provider())
        try:
            response = await provider.chat([Message.user(asked)], [], TITLE_PROMPT)
        except Exception:  # a title is a nicety: never break the session for it
            log.warning("could not make a session title", exc_info=True)
            return
        finally:
            for notice in self.route.take_notices():
                self.recorder.record(ev.Notice("warning", notice))
        served = self.route.served or provider.name
        self.recorder.record(ev.UsageReported.from_usage(served, response.usage, purpose="title"))
        title = clean_title(response.text)
        if title:
            self.recorder.set_title(title)


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
