"""The first message's imports run in a worker thread: `ready()` waits for them
without blocking the event loop, also when another thread is midway through one."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.waiting import eventually
from wyckoff_cli.session import warm
from wyckoff_cli.storage.config import Config, ModelAlias


@pytest.fixture
def slow_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"wyckoff_slow_{time.monotonic_ns()}"
    (tmp_path / f"{name}.py").write_text("import time\ntime.sleep(0.4)\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


async def test_ready_imports_in_a_thread_while_the_loop_keeps_running(slow_module: str) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    await warm.ready([slow_module])
    task.cancel()
    assert sys.modules[slow_module].DONE is True
    assert ticks > 0  # the loop ran during the import


async def test_ready_waits_for_an_import_another_thread_has_begun(slow_module: str) -> None:
    started = threading.Thread(target=__import__, args=(slow_module,), daemon=True)
    started.start()
    await eventually(lambda: slow_module in sys.modules)  # in sys.modules from the start of its import
    assert not hasattr(sys.modules[slow_module], "DONE")
    await warm.ready([slow_module])
    assert sys.modules[slow_module].DONE is True  # finished, so `import` on the loop cannot block
    started.join()


async def test_a_wait_cancelled_midway_leaves_the_imports_to_finish_for_the_next_one(
    slow_module: str, tmp_path: Path
) -> None:
    """A turn cancelled while it waits (the app quits, Esc, an ACP cancel) must not
    cancel the shared import: the next turn's wait would fail, and every module after
    it in the thread would never be marked done (the next session would hang)."""
    after = f"{slow_module}_after"
    (tmp_path / f"{after}.py").write_text("DONE = True\n")
    waiting = asyncio.create_task(warm.ready([slow_module, after]))
    await eventually(lambda: slow_module in sys.modules)  # the thread is importing it
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await asyncio.wait_for(warm.ready([slow_module, after]), timeout=30)
    assert sys.modules[slow_module].DONE is True and sys.modules[after].DONE is True


def test_the_model_and_fallback_sdks_come_first_and_unknown_models_are_skipped() -> None:
    config = Config()
    modules = warm.modules_for(["anthropic:claude-sonnet-4-5", "gemini:gemini-2.5-pro", "nope:x"], config)
    assert modules[:2] == ["anthropic", "google.genai"]
    assert modules[2:] == list(warm.SESSION_MODULES)
    assert warm.modules_for(["scripted:x"], config) == list(warm.SESSION_MODULES)
    aliased = Config(models={"local": ModelAlias(provider="ollama", model="qwen3:8b")})
    assert warm.modules_for(["local"], aliased)[0] == "openai"  # an alias's provider's SDK


@pytest.fixture
def gated_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, threading.Event]:
    """A module whose import waits until the test opens the gate."""
    name = f"wyckoff_gated_{time.monotonic_ns()}"
    gate = threading.Event()
    gates = f"{name}_gate"
    gate_module = type(sys)(gates)
    gate_module.gate = gate  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, gates, gate_module)
    (tmp_path / f"{name}.py").write_text(f"import {gates}\n{gates}.gate.wait(10)\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name, gate


async def test_a_turn_cancelled_while_it_waits_does_not_break_the_next_one(
    gated_module: tuple[str, threading.Event],
) -> None:
    """Esc during the first message's wait (or an app closing) cancels that wait only:
    the import goes on, and the next turn's `ready()` returns once it is done (issue 28;
    before, the shared import was cancelled and every later turn died at once)."""
    name, gate = gated_module
    first = asyncio.create_task(warm.ready([name]))
    await asyncio.sleep(0)  # the wait has begun
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    gate.set()
    await asyncio.wait_for(warm.ready([name]), timeout=10)
    assert sys.modules[name].DONE is True
