"""How the chat controller answers `Compact`: summarise the older conversation now."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from wyckoff_cli.core import events as ev

if TYPE_CHECKING:
    from wyckoff_cli.runtime.user_hooks import UserHooks
    from wyckoff_cli.session.builder import Session


async def compaction_events(
    session: Session, user_hooks: UserHooks, focus: str | None
) -> AsyncIterator[ev.RuntimeEvent]:
    """The PreCompact hooks' events, then `compacted` and the summary call's usage (the
    caller records and counts them); a failure is an error notice, nothing changed."""
    try:
        event = await session.runtime.compact(session.conversation, session.system_prompt, focus)
    except Exception as exc:
        yield ev.Notice("error", f"Compaction failed: {getattr(exc, 'message', exc)}")
        return
    finally:
        for hook_event in user_hooks.take_events():  # PreCompact hooks
            yield hook_event
    if event is None:
        yield ev.Notice("info", "Nothing to compact yet")
    sides = session.runtime.side_events()
    for side in sides:
        await session.runtime.announce(side)
    for produced in (event, *sides):
        if produced is not None:
            yield produced
