"""The terminal driver's input thread sleeps while nothing happens (tui/textual_compat.py
`QuietLinuxDriver`): keys, escape sequences and a lone Escape still arrive as Textual's
own driver gives them, and the exit flag ends the thread at once."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.app import App

from tests.tui.support import quiet_driver
from tests.waiting import until_sync
from wyckoff_cli.tui import textual_compat

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the Linux driver")


def _wakeups(native_id: int) -> int:
    """Times the thread went to sleep and was woken (its voluntary context switches)."""
    status = Path(f"/proc/self/task/{native_id}/status").read_text()
    return int(
        next(line for line in status.splitlines() if line.startswith("voluntary_ctxt_switches")).split()[1]
    )


@pytest.fixture
async def driver() -> AsyncIterator[tuple[Any, int, list[Any], threading.Thread, list[int]]]:
    quiet = quiet_driver(App())
    keys_in, keys_out = os.pipe()
    quiet.fileno = keys_in  # the "terminal": what the test writes to keys_out
    received: list[Any] = []
    quiet.process_message = received.append  # type: ignore[method-assign]
    native: list[int] = []

    def run() -> None:
        native.append(threading.get_native_id())
        quiet.run_input_thread()

    thread = threading.Thread(target=run, name="textual-input")
    thread.start()
    try:
        yield quiet, keys_out, received, thread, native
    finally:
        quiet.exit_event.set()
        thread.join(5)
        quiet.close()
        os.close(keys_in)
        os.close(keys_out)


def _keys(received: list[Any]) -> list[str]:
    return [message.key for message in received if isinstance(message, events.Key)]


async def test_keys_escape_sequences_and_a_lone_escape_arrive(driver: Any) -> None:
    _, keys_out, received, _, _ = driver
    os.write(keys_out, b"a")
    until_sync(lambda: _keys(received) == ["a"], observe=lambda: _keys(received))
    os.write(keys_out, b"\x1b[D")  # the Left arrow: one sequence
    until_sync(lambda: _keys(received) == ["a", "left"], observe=lambda: _keys(received))
    os.write(keys_out, b"\x1b")  # Escape alone: reported once the parser's timeout is due
    until_sync(lambda: _keys(received) == ["a", "left", "escape"], observe=lambda: _keys(received))
    os.write(keys_out, "é".encode())  # UTF-8 across the read
    until_sync(lambda: _keys(received)[-1:] == ["é"], observe=lambda: _keys(received))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts wake-ups in /proc")
async def test_the_idle_input_thread_sleeps_and_the_exit_flag_wakes_it(driver: Any) -> None:
    quiet, keys_out, received, thread, native = driver
    os.write(keys_out, b"x")
    until_sync(lambda: _keys(received) == ["x"])
    until_sync(lambda: native)
    before = _wakeups(native[0])
    time.sleep(1.0)  # the span measured, not a wait for a condition: Textual's woke 10 times in it
    assert _wakeups(native[0]) - before <= 1
    quiet.exit_event.set()
    thread.join(5)
    assert not thread.is_alive()  # woken by the flag, not by a timeout


async def test_each_run_of_the_thread_has_its_own_pipe_and_keys_work_after_a_restart(driver: Any) -> None:
    """The app suspended for an editor stops the thread and closes the driver, then starts a
    new thread: the flag then writes nowhere, and the new thread hears keys and the flag."""
    quiet, keys_out, received, thread, _ = driver
    quiet.exit_event.set()
    thread.join(5)
    assert not thread.is_alive() and quiet.exit_event.wake_fd == -1
    quiet.close()
    quiet.exit_event.set()  # a closed pipe's number may be another file's by now: not written
    quiet.exit_event.clear()
    again = threading.Thread(target=quiet.run_input_thread)
    again.start()
    os.write(keys_out, b"k")
    until_sync(lambda: _keys(received)[-1:] == ["k"], observe=lambda: _keys(received))
    quiet.exit_event.set()
    again.join(5)
    assert not again.is_alive()


def test_the_app_uses_it_where_textual_would_use_its_linux_driver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEXTUAL_DRIVER", raising=False)
    assert textual_compat.quiet_driver_class() is textual_compat.QuietLinuxDriver
    monkeypatch.setenv("TEXTUAL_DRIVER", "textual.drivers.linux_driver:LinuxDriver")
    assert textual_compat.quiet_driver_class() is None  # the user's choice wins
