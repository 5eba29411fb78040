"""The retry notice counts the wait against its limit, and Esc during a retry's wait
tries the fallback now (issue 27); without a fallback Esc interrupts as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui.test_chat_flows import SIZE, chat, send
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.providers.fallback import FallbackProvider
from wyckoff_cli.providers.retry import RetryingProvider, RetryPolicy
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.providers.watchdog import WatchdogProvider
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.storage.sessions import SessionStore
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tui.app import WyckoffApp
from wyckoff_cli.tui.widgets.counting_notice import CountingNotice
from wyckoff_cli.tui.widgets.entries import NoticeLine


def app_with(root: Path, provider: Any) -> WyckoffApp:
    builder = SessionBuilder(
        open_workspace(root),
        provider_factory=lambda _model: provider,
        tools_factory=default_registry,
        manage_context=False,
        fixed_prompt="SYSTEM",
        store=SessionStore(),
    )
    return WyckoffApp(ChatController(builder, model=provider.name, mode="default"))


def stalling(fallback: bool) -> Any:
    """Every attempt stalls (watchdog 0.2 s); a retry waits 600 s unless skipped."""
    stalls = ScriptedProvider([{"stall": 600}] * 3, model="scripted:stalls")
    policy = RetryPolicy(attempts=3, initial_delay=600, max_delay=600, stall_limit=900)
    first = RetryingProvider(WatchdogProvider(stalls, 0.2), policy)
    if not fallback:
        return first
    return FallbackProvider(
        [first, ScriptedProvider([{"text": "Answer from the fallback."}], model="scripted:b")]
    )


def notices(app: WyckoffApp) -> list[NoticeLine]:
    return list(chat(app).query(NoticeLine))


async def test_the_retry_notice_counts_until_output_comes(tmp_path: Path) -> None:
    app = app_with(tmp_path, ScriptedProvider([], model="scripted:a"))
    async with app.run_test(size=SIZE) as pilot:
        router = chat(app).router
        router.handle(ev.ModelStart(1, "a:x"))
        router.handle(ev.Retrying("a:x", 2, 3, 1.0, "no data for 60 s", "", 60.0, 90.0, "b:y"))
        await pilot.pause()
        (notice,) = [n for n in notices(app) if isinstance(n, CountingNotice)]
        assert notice.message == (
            "a:x failed (no data for 60 s); retrying in 1.0 s (attempt 2 of 3) · waited 60 s of 90 s"
            " · Esc: try b:y now"
        )
        await until(pilot, lambda: "waited 61 s of 90 s" in notice.message)  # it counts
        router.handle(ev.TextDelta("output"))
        assert not notice.counting  # output ends the wait; the text stays


async def test_esc_during_a_retry_wait_tries_the_fallback_now(tmp_path: Path) -> None:
    app = app_with(tmp_path, stalling(fallback=True))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "hello")
        await until(pilot, lambda: any("Esc: try scripted:b now" in n.message for n in notices(app)))
        await pilot.press("escape")
        await until(pilot, lambda: not screen.busy)
        shown = [n.message for n in notices(app)]
        assert "Trying scripted:b now" in shown
        assert any(n.kind == "fallback" and "continuing with scripted:b" in n.message for n in notices(app))
        assert screen.router.last_done is not None and screen.router.last_done.reason == "completed"
        assert "Answer from the fallback." in screen.router.last_done.text
        assert "Interrupted." not in shown


async def test_without_a_fallback_esc_interrupts_as_before(tmp_path: Path) -> None:
    app = app_with(tmp_path, stalling(fallback=False))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "hello")
        await until(pilot, lambda: any(n.kind == "retry" for n in notices(app)))
        assert not any("Esc: try" in n.message for n in notices(app))
        await pilot.press("escape")
        await until(pilot, lambda: not screen.busy)
        assert screen.router.last_done is not None and screen.router.last_done.reason == "aborted"
        assert "Interrupted." in [n.message for n in notices(app)]
