"""The first message's imports run in a worker thread: `ready()` waits for them
without blocking the event loop, also when another thread is midway through one. The
SDK is imported as its provider imports it, and the first session's provider is built
and warmed up in a thread too (`FirstProvider`), taken by the session built next."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.waiting import eventually
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ProviderConfigError
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session import warm
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.storage.config import Config, ModelAlias
from wyckoff_cli.storage.sessions import SessionStore
from wyckoff_cli.tools.registry import ToolRegistry


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


def test_the_sdk_is_imported_as_its_provider_imports_it_not_whole() -> None:
    """The warm-up thread imports the Anthropic SDK by the modules Wyckoff uses, its
    package `__init__`s deferred (issue 36): a plain `import anthropic` there ran its
    whole `__init__` (~3,500 modules, 1.35 s of CPU instead of 0.53), and a message
    sent as soon as the prompt appeared waited for it."""
    script = textwrap.dedent(
        """
        import asyncio, json, sys
        from wyckoff_cli.session import warm
        from wyckoff_cli.storage.config import Config
        asyncio.run(warm.ready(warm.modules_for(["anthropic:claude-sonnet-4-5"], Config())))
        print(json.dumps([
            "anthropic._client" in sys.modules,
            "__getattr__" in vars(sys.modules["anthropic"]),  # its top `__init__` has not run
            "anthropic.resources.beta" in sys.modules,
            len([m for m in sys.modules if m.startswith("anthropic")]),
        ]))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    client, deferred, beta_resources, modules = json.loads(result.stdout.splitlines()[-1])
    assert client and deferred and not beta_resources
    assert modules < 1_600  # the whole SDK is ~3,500


def _scripted(_model: str) -> ScriptedProvider:
    return ScriptedProvider([{"text": "Hello."}], model="scripted:test")


async def test_the_first_provider_is_built_and_warmed_up_in_a_thread_and_taken_once() -> None:
    config = Config()
    built: list[tuple[str, threading.Thread]] = []

    class Warmed(ScriptedProvider):
        warmed_in: threading.Thread | None = None

        def warm_up(self) -> None:
            self.warmed_in = threading.current_thread()

    def build(model: str) -> ScriptedProvider:
        built.append((model, threading.current_thread()))
        return Warmed([{"text": "Hello."}], model=model)

    first = warm.FirstProvider()
    assert first.take("scripted:test", config) is None  # nothing made yet
    await first.ready("scripted:test", config, build)
    await first.ready("scripted:test", config, build)  # the next turn's wait: made once
    assert [model for model, _ in built] == ["scripted:test"]
    assert built[0][1] is not threading.main_thread()
    assert first.take("scripted:other", config) is None  # made for another model
    assert first.take("scripted:test", Config()) is None  # ... or another config
    provider = first.take("scripted:test", config)
    assert isinstance(provider, Warmed) and provider.warmed_in is built[0][1]
    assert first.take("scripted:test", config) is None  # once


async def test_a_model_changed_before_the_first_turn_gets_its_own_provider() -> None:
    config = Config()
    first = warm.FirstProvider()
    await first.ready("scripted:a", config, _scripted)
    await first.ready("scripted:b", config, lambda model: ScriptedProvider([], model=model))
    assert first.take("scripted:a", config) is None
    taken = first.take("scripted:b", config)
    assert isinstance(taken, ScriptedProvider) and taken.model == "scripted:b"


async def test_a_failed_build_gives_no_provider_and_raises_nothing() -> None:
    def build(model: str) -> ScriptedProvider:
        raise ProviderConfigError(f"{model}: no API key")

    config = Config()
    first = warm.FirstProvider()
    await first.ready("anthropic:x", config, build)  # the session's own build reports it
    assert first.take("anthropic:x", config) is None


async def test_a_cancelled_wait_for_the_provider_leaves_the_build_to_finish_for_the_next(
    gated_module: tuple[str, threading.Event],
) -> None:
    _, gate = gated_module
    config = Config()
    builds: list[str] = []

    def build(model: str) -> ScriptedProvider:
        builds.append(model)
        gate.wait(10)
        return ScriptedProvider([], model=model)

    first = warm.FirstProvider()
    waiting = asyncio.create_task(first.ready("scripted:test", config, build))
    await eventually(lambda: builds)  # the thread is building it
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    gate.set()
    await asyncio.wait_for(first.ready("scripted:test", config, build), timeout=10)
    assert builds == ["scripted:test"] and first.take("scripted:test", config) is not None


def _controller(tmp_path: Path, factory: Callable[[str], ScriptedProvider]) -> ChatController:
    builder = SessionBuilder(
        open_workspace(tmp_path),
        provider_factory=factory,
        tools_factory=ToolRegistry,
        manage_context=False,
        fixed_prompt="SYSTEM",
        store=SessionStore(),
    )
    return ChatController(builder, model="scripted:test", mode="default")


async def test_the_first_session_uses_the_provider_prepare_made_in_a_thread(tmp_path: Path) -> None:
    """What the first request would do on the event loop (build the SDK client, its TLS
    context, import the module of its call) is done by `prepare()` in a worker thread,
    which the app starts after its first paint; the first turn's session takes it."""
    built: list[threading.Thread] = []

    def factory(model: str) -> ScriptedProvider:
        built.append(threading.current_thread())
        return _scripted(model)

    controller = _controller(tmp_path, factory)
    await controller.prepare()
    assert len(built) == 1 and built[0] is not threading.main_thread()
    events = [event async for event in controller.handle(rq.Turn("hi"))]
    assert any(isinstance(event, ev.TurnDone) and event.text == "Hello." for event in events)
    await controller.prepare()  # every later turn's: the session has its provider
    assert len(built) == 1


async def test_a_provider_that_cannot_be_built_is_still_reported_by_the_turn(tmp_path: Path) -> None:
    calls: list[str] = []

    def factory(model: str) -> ScriptedProvider:
        calls.append(model)
        raise ProviderConfigError("no API key for scripted:test")

    controller = _controller(tmp_path, factory)
    await controller.prepare()  # the warm-up's failure is not its to report
    with pytest.raises(ProviderConfigError, match="no API key"):
        _ = controller.session
    assert len(calls) == 2  # the session built it again and met the failure itself
