"""The MCP SDK is imported in a worker thread, once for every connection (issue 36)."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from wyckoff_cli.tools.mcp import sdk_import


async def test_the_import_runs_once_in_a_worker_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[threading.Thread] = []
    release = threading.Event()

    def slow_import() -> None:
        threads.append(threading.current_thread())
        release.wait(30)

    monkeypatch.setattr(sdk_import, "_import_all", slow_import)
    waiters = [asyncio.ensure_future(sdk_import.sdk_ready()) for _ in range(3)]
    while not threads:
        await asyncio.sleep(0.005)  # the loop runs while the import is under way
    assert not any(waiter.done() for waiter in waiters)
    release.set()
    await asyncio.gather(*waiters)
    assert len(threads) == 1 and threads[0] is not threading.main_thread()


async def test_after_it_the_modules_are_imported() -> None:
    await sdk_import.sdk_ready()
    assert all(name in sys.modules for name in sdk_import.SDK_MODULES)


async def test_a_failed_import_is_raised_and_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def broken() -> None:
        calls.append(1)
        raise ImportError("no module named mcp")

    monkeypatch.setattr(sdk_import, "_import_all", broken)
    for _ in range(2):
        with pytest.raises(ImportError, match="no module named mcp"):
            await sdk_import.sdk_ready()
    assert len(calls) == 2
