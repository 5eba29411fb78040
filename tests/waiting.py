"""Tests wait for a condition, never for a fixed time.

- `until(pilot, condition)`: polls `condition` between `pilot.pause()` calls (so the app
  processes its messages, timers and workers in between) until it is truthy.
- `eventually(condition)`: the same for asyncio code without an app.
- `until_sync(condition)`: the same for plain threads and processes.

Each returns the condition's first truthy value, so a test can wait for a thing and use
it (`dialog = await until(pilot, lambda: approval_screen(app))`). When the deadline
passes it fails loudly: an `AssertionError` naming what it waited for (`what`, or the
condition's source line) and the last state it observed (`observe()`, or the
condition's last value and, for an app, the screen and the focused widget).

The deadline is generous (the machine running the suite may be loaded); a condition
that holds returns at once, so a passing test never waits for the deadline.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
"""Seconds before a wait fails. Generous: it bounds a failure, not a passing test."""

POLL_SECONDS = 0.01
"""The gap between two looks at the condition when the app (or loop) has nothing to do."""


def describe(condition: Callable[[], Any]) -> str:
    """The condition's source line (a lambda's text), or its name."""
    try:
        source = inspect.getsource(condition).strip()
    except (OSError, TypeError):
        return getattr(condition, "__qualname__", repr(condition))
    return " ".join(source.split())[:300]


def _failure(what: str, timeout: float, last: object, observed: str) -> AssertionError:
    return AssertionError(
        f"waited {timeout:g} s for: {what}\n  last value: {last!r}\n  last observed: {observed}"
    )


def _app_state(app: Any) -> str:
    try:
        screen = type(app.screen).__name__
    except Exception as error:  # the app may have no screen yet, or be gone
        screen = f"<no screen: {error}>"
    focused = getattr(app, "focused", None)
    focus = type(focused).__name__ if focused is not None else "nothing"
    return f"screen {screen}, focus on {focus}"


async def until(
    pilot: Any,
    condition: Callable[[], T],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    what: str | None = None,
    observe: Callable[[], object] | None = None,
) -> T:
    """Wait until `condition()` is truthy, letting the app run between looks; return its value."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        last = condition()
        if last:
            return last
        if loop.time() > deadline:
            observed = str(observe()) if observe is not None else _app_state(pilot.app)
            raise _failure(what or describe(condition), timeout, last, observed)
        await pilot.pause()  # the app handles what is pending
        last = condition()
        if last:
            return last
        await pilot.pause(POLL_SECONDS)  # timers and threads move on


async def eventually(
    condition: Callable[[], T],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    what: str | None = None,
    observe: Callable[[], object] | None = None,
) -> T:
    """Wait in asyncio (no app) until `condition()` is truthy; return its value."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        last = condition()
        if last:
            return last
        if loop.time() > deadline:
            observed = str(observe()) if observe is not None else "(nothing else observed)"
            raise _failure(what or describe(condition), timeout, last, observed)
        await asyncio.sleep(POLL_SECONDS)


def until_sync(
    condition: Callable[[], T],
    timeout: float = DEFAULT_TIMEOUT,
    *,
    what: str | None = None,
    observe: Callable[[], object] | None = None,
) -> T:
    """Block (threads, processes) until `condition()` is truthy; return its value."""
    deadline = time.monotonic() + timeout
    while True:
        last = condition()
        if last:
            return last
        if time.monotonic() > deadline:
            observed = str(observe()) if observe is not None else "(nothing else observed)"
            raise _failure(what or describe(condition), timeout, last, observed)
        time.sleep(POLL_SECONDS)
