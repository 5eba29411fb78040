"""The shared waits (tests/waiting.py) return what they waited for and fail loudly."""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import Static

from tests.waiting import eventually, until, until_sync


class Counter(App[None]):
    """Counts up on a timer: a state that changes only while the app runs."""

    def compose(self) -> ComposeResult:
        yield Static("0", id="count")

    def on_mount(self) -> None:
        self.count = 0
        self.set_interval(0.01, self.tick)

    def tick(self) -> None:
        self.count += 1


async def test_until_lets_the_app_run_and_returns_the_value() -> None:
    app = Counter()
    async with app.run_test() as pilot:
        seen = await until(pilot, lambda: app.count >= 3 and app.count)
        assert seen >= 3


async def test_until_fails_naming_the_condition_and_the_last_state() -> None:
    app = Counter()
    async with app.run_test() as pilot:
        with pytest.raises(AssertionError) as failure:
            await until(pilot, lambda: app.count < 0, timeout=0.2)
    message = str(failure.value)
    assert "waited 0.2 s for: " in message
    assert "app.count < 0" in message  # the condition's own text
    assert "last value: False" in message
    assert "screen Screen" in message and "focus on" in message


async def test_until_reports_what_and_observe_when_given() -> None:
    app = Counter()
    async with app.run_test() as pilot:
        with pytest.raises(
            AssertionError, match=r"the counter to go negative\n.*\n  last observed: count=\d+"
        ):
            await until(
                pilot,
                lambda: None,
                timeout=0.1,
                what="the counter to go negative",
                observe=lambda: f"count={app.count}",
            )


async def test_eventually_waits_for_another_task() -> None:
    box: list[str] = []

    async def later() -> None:
        await asyncio.sleep(0)
        box.append("done")

    task = asyncio.create_task(later())
    assert await eventually(lambda: box) == ["done"]
    await task
    with pytest.raises(AssertionError, match="waited 0.05 s for: nothing ever"):
        await eventually(lambda: False, timeout=0.05, what="nothing ever")


def test_until_sync_waits_for_a_thread() -> None:
    started = threading.Event()
    box: list[int] = []

    def work() -> None:
        started.wait()
        box.append(1)

    worker = threading.Thread(target=work)
    worker.start()
    started.set()
    assert until_sync(lambda: len(box)) == 1
    worker.join()
    with pytest.raises(AssertionError, match=r"last observed: box=\[1\]"):
        until_sync(lambda: len(box) > 1, timeout=0.05, observe=lambda: f"box={box}")


# The pacing of simulated input is not a wait: a person typing at HUMAN_GAP between keys.
PACING = {"POLL_SECONDS", "HUMAN_GAP"}
TESTS = Path(__file__).resolve().parents[1]


def test_no_test_waits_a_fixed_time_for_the_app() -> None:
    """A pause with a number of seconds waits for time, not for what the test needs: use
    `until(pilot, condition)` (a bare `pilot.pause()` for one refresh is fine)."""
    timed = []
    for path in sorted(TESTS.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for argument in re.findall(r"\.pause\(([^)]+)\)", line):
                if argument.strip() not in PACING:
                    timed.append(f"{path.relative_to(TESTS)}:{number}: {line.strip()}")
    assert timed == [], "fixed waits (use tests/waiting.py):\n" + "\n".join(timed)
