"""Notifications while the terminal is not focused (tui/notifications.py), driven
through the real app: focus events, approval dialogs, turn ends, `[ui] notifications`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot

from tests.tui.support import make_app
from tests.tui.test_chat_flows import chat, past_pause, send, settle, shell_tool, wait_for_screen
from tests.waiting import until, until_sync
from wyckoff_cli.core import events as ev
from wyckoff_cli.session import requests as rq
from wyckoff_cli.storage import paths
from wyckoff_cli.tools.plan import EXIT_PLAN
from wyckoff_cli.tui.app import WyckoffApp
from wyckoff_cli.tui.notifications import (
    AttentionNotifier,
    call_summary,
    pane_visible,
    tmux_allows_passthrough,
    turn_text,
)
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.screens.mcp_trust import McpTrustScreen
from wyckoff_cli.tui.screens.plan_approval import PlanApprovalScreen
from wyckoff_cli.tui.screens.trust import HookTrustScreen
from wyckoff_cli.tui.terminal_notify import BEL, TERMINAL_ENV
from wyckoff_cli.tui.widgets.prompt_input import PromptInput

SIZE = (100, 30)
APPROVAL = "\x1b]9;Wyckoff: approval needed — run_shell `pytest -q`\x07"
FINISHED = re.compile(r"\x1b\]9;Wyckoff: turn finished \(\d+\.\ds\)\x07")


@pytest.fixture(autouse=True)
def iterm(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The app runs in iTerm2 (OSC 9), not under tmux, whatever runs the tests."""
    for name in TERMINAL_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    yield


def capture(app: WyckoffApp) -> list[str]:
    """What the notifier writes to the terminal (headless, the driver writes nothing)."""
    sent: list[str] = []
    app.notifier.write = sent.append
    return sent


async def blur(pilot: Pilot[None]) -> None:
    pilot.app.post_message(events.AppBlur())
    await pilot.pause()
    assert not pilot.app.app_focus


async def focus(pilot: Pilot[None]) -> None:
    pilot.app.post_message(events.AppFocus())
    await pilot.pause()


def two_calls() -> list[Any]:
    """Two calls asking approval, one round each, each after a moment (the person looks
    away meanwhile), then the answer after a moment too."""
    calls = [
        {"tool_call": {"name": "run_shell", "args": {"command": c}}} for c in ("pytest -q", "ruff check .")
    ]
    return [[{"sleep": 0.3}, calls[0]], [{"sleep": 0.3}, calls[1]], [{"sleep": 0.3}, {"text": "Both ran."}]]


async def test_each_wait_while_unfocused_notifies_once_and_so_does_the_turns_end(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    app, _ = make_app(tmp_path, two_calls(), [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        sent = capture(app)
        screen = chat(app)
        await send(pilot, "run the checks")
        await blur(pilot)  # the person switched to another window
        await wait_for_screen(pilot, ApprovalScreen)
        await until(pilot, lambda: sent, observe=lambda: sent)
        assert sent == [APPROVAL]
        await focus(pilot)  # back: sees it, answers (a key counts as focus too)
        await past_pause(pilot)
        await pilot.press("y")
        await blur(pilot)  # and away again before the next question
        second = await wait_for_screen(pilot, ApprovalScreen)
        assert second.request.args == {"command": "ruff check ."}
        await until(pilot, lambda: len(sent) >= 2, observe=lambda: sent)
        assert sent[1:] == ["\x1b]9;Wyckoff: approval needed — run_shell `ruff check .`\x07"]
        await past_pause(pilot)
        await pilot.press("y")
        await blur(pilot)
        await settle(pilot, screen)
        assert len(ran) == 2
        assert len(sent) == 3 and FINISHED.fullmatch(sent[2]), sent


async def test_dialogs_opened_together_make_one_notification(tmp_path: Path) -> None:
    """Parallel askers (sub-agents) stack their dialogs: one wait, one notification."""
    app, _ = make_app(tmp_path, [{"text": "hi"}], [])
    async with app.run_test(size=SIZE) as pilot:
        sent = capture(app)
        screen = chat(app)
        await blur(pilot)
        for command in ("pytest -q", "make", "ls"):
            preview = {"kind": "command", "command": command}
            request = ev.ApprovalRequested(command, "run_shell", {"command": command}, preview)
            screen.request_approval(request, agent="explore")
            await pilot.pause()
        assert sent == ["\x1b]9;Wyckoff: approval needed (the explore agent) — run_shell `pytest -q`\x07"]


async def test_nothing_while_the_terminal_is_focused(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, two_calls(), [shell_tool([])])
    async with app.run_test(size=SIZE) as pilot:
        sent = capture(app)
        screen = chat(app)
        await send(pilot, "go")
        for _ in range(2):
            await wait_for_screen(pilot, ApprovalScreen)
            await past_pause(pilot)
            await pilot.press("y")
        await settle(pilot, screen)
        assert sent == []


async def test_off_sends_nothing_and_bell_rings(tmp_path: Path) -> None:
    for mode, expected in (("off", []), ("bell", [BEL, BEL])):  # the approval, the end
        root = tmp_path / mode
        paths.project_config_file(root).parent.mkdir(parents=True)
        paths.project_config_file(root).write_text(f'[ui]\nnotifications = "{mode}"\n')
        one_call = [two_calls()[0], two_calls()[2]]
        app, _ = make_app(root, one_call, [shell_tool([])])
        async with app.run_test(size=SIZE) as pilot:
            sent = capture(app)
            screen = chat(app)
            await send(pilot, "go")
            await blur(pilot)
            await wait_for_screen(pilot, ApprovalScreen)
            await past_pause(pilot)
            await pilot.press("y")
            await blur(pilot)
            await settle(pilot, screen)
            assert sent == expected, mode


async def test_a_turn_that_finishes_or_fails_unfocused_notifies_once(tmp_path: Path) -> None:
    rounds = [
        [{"sleep": 0.3}, {"text": "All done."}],
        [{"sleep": 0.3}, {"error": {"kind": "auth", "message": "bad key"}}],
    ]
    app, _ = make_app(tmp_path, rounds, [])
    async with app.run_test(size=SIZE) as pilot:
        sent = capture(app)
        screen = chat(app)
        await send(pilot, "first")
        await blur(pilot)
        await settle(pilot, screen)
        assert len(sent) == 1 and FINISHED.fullmatch(sent[0]), sent
        await send(pilot, "second")
        await blur(pilot)
        await settle(pilot, screen)
        assert len(sent) == 2
        assert re.fullmatch(r"\x1b\]9;Wyckoff: turn failed \(\d+\.\ds\) — auth: bad key\x07", sent[1]), sent


async def test_an_interrupted_turn_says_nothing(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [[{"sleep": 5}, {"text": "late"}]], [])
    async with app.run_test(size=SIZE) as pilot:
        sent = capture(app)
        screen = chat(app)
        await send(pilot, "slow")
        await until(pilot, lambda: screen.busy)
        assert screen.busy
        await blur(pilot)
        screen.action_interrupt()  # what Esc does (a key would count as focus)
        await settle(pilot, screen)
        assert not screen.busy and sent == []


async def test_a_trust_dialog_that_blocks_the_turn_notifies(tmp_path: Path) -> None:
    app, _ = make_app(tmp_path, [{"text": "hi"}], [])
    async with app.run_test(size=SIZE) as pilot:
        sent = capture(app)
        await blur(pilot)
        app.push_screen(McpTrustScreen("Start the servers of .mcp.json?"))
        await pilot.pause()
        assert sent == ["\x1b]9;Wyckoff: the project's MCP servers wait for your trust (y / n)\x07"]
        app.pop_screen()
        await focus(pilot)
        await blur(pilot)
        app.push_screen(HookTrustScreen([]))
        await pilot.pause()
        assert sent[1:] == ["\x1b]9;Wyckoff: the project's hooks wait for your trust (y / n)\x07"]


def test_under_tmux_the_pane_is_asked_at_each_notification_whether_it_passes_it_on() -> None:
    answers = [True, False]  # visible for the first, in another window for the second
    asked: list[str] = []
    sent: list[str] = []

    def passthrough(env: Any) -> bool:
        asked.append(env["TMUX_PANE"])
        return answers.pop(0)

    env = {"TMUX": "/tmp/tmux-1/default,1,0", "TMUX_PANE": "%3", "ITERM_SESSION_ID": "w0"}
    notifier = AttentionNotifier("auto", sent.append, env, passthrough)
    notifier.focus_changed(False)
    done = ev.TurnDone("", "completed", 1)
    notifier.turn_ended(done, None, 2.0)
    notifier.turn_ended(done, None, 3.0)
    assert asked == ["%3", "%3"]
    # tmux would drop a hidden pane's passthrough: the bell instead, which it passes on
    assert sent == ["\x1bPtmux;\x1b\x1b]9;Wyckoff: turn finished (2.0s)\x07\x1b\\", BEL]


@pytest.mark.parametrize(
    ("shown", "visible"),
    [
        ("1 1 0 0", True),  # the current window of an attached session
        ("1 2 1 1", True),  # zoomed on this pane
        ("0 1 0 1", False),  # another window is shown
        ("1 0 0 1", False),  # nobody attached
        ("1 1 1 0", False),  # another pane is zoomed
        ("", False),
        ("garbage", False),
    ],
)
def test_pane_visible(shown: str, visible: bool) -> None:
    assert pane_visible(shown) is visible


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_a_real_tmux_is_asked(tmp_path: Path) -> None:
    """A private tmux server: off → no; on and shown → yes; on, another window → no."""
    socket = str(tmp_path / "tmux.sock")

    def tmux(*args: str) -> str:
        done = subprocess.run(["tmux", "-S", socket, *args], capture_output=True, text=True, check=False)
        assert done.returncode == 0, (
            f"tmux {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}"
        )
        return done.stdout.strip()

    tmux("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "80", "-y", "10", "sleep 60")
    try:
        pane = tmux("display-message", "-p", "-t", "t", "#{pane_id}")
        env = {**os.environ, "TMUX": f"{socket},1,0", "TMUX_PANE": pane}
        assert tmux_allows_passthrough(env) is False  # off by default
        tmux("set", "-g", "allow-passthrough", "on")
        # detached: tmux shows the pane to nobody, so it would drop the sequence
        assert tmux_allows_passthrough(env) is False
        if shutil.which("script") is None:
            return
        # a client attached through a pseudo-terminal (`script`) shows the pane
        client = subprocess.Popen(
            ["script", "-q", "-c", f"tmux -S {socket} attach -t t", os.devnull],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TERM": "xterm-256color"},
        )
        try:
            until_sync(lambda: tmux("list-clients"), what="the tmux client to attach")
            assert tmux_allows_passthrough(env) is True
            tmux("new-window", "-t", "t", "sleep 60")  # now another window is shown
            assert tmux_allows_passthrough(env) is False
        finally:
            client.kill()
            client.wait()
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, check=False)


@pytest.mark.parametrize(
    ("name", "args", "preview", "expected"),
    [
        ("run_shell", {"command": "pytest -q"}, {"command": "pytest -q"}, "run_shell `pytest -q`"),
        ("edit_file", {"path": "calc.py", "old": "a", "new": "b"}, {}, "edit_file `calc.py`"),
        ("web_fetch", {"url": "https://example.com"}, {}, "web_fetch `https://example.com`"),
        ("mcp__x__y", {"n": 3}, {}, "mcp__x__y"),
        ("run_shell", {"command": "echo " + "x" * 80}, {}, "run_shell `echo " + "x" * 54 + "…`"),
    ],
)
def test_call_summary(name: str, args: dict[str, Any], preview: dict[str, Any], expected: str) -> None:
    assert call_summary(name, args, preview) == expected


def test_turn_text() -> None:
    assert turn_text(ev.TurnDone("", "completed", 1), None, 12.34) == "turn finished (12.3s)"
    assert turn_text(ev.TurnDone("", "aborted", 1), None, 1.0) is None
    assert turn_text(ev.TurnDone("", "budget", 1), None, 1.0) == "turn ended: budget (1.0s)"
    assert (
        turn_text(ev.TurnDone("", "max_tool_rounds", 1), None, None) == "turn stopped at the tool-round limit"
    )


async def test_back_from_a_dialog_that_opened_while_away_the_prompt_has_the_keys(tmp_path: Path) -> None:
    """Losing focus clears the screen's focus; answering the dialog must not leave the
    keys with the transcript (what you type next would be lost)."""
    app, _ = make_app(tmp_path, [two_calls()[0], two_calls()[2]], [shell_tool([])])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "go")
        await blur(pilot)
        await wait_for_screen(pilot, ApprovalScreen)
        await focus(pilot)
        await past_pause(pilot)
        await pilot.press("y")
        await settle(pilot, screen)
        assert app.screen is screen and app.focused is screen.query_one(PromptInput)
        await pilot.press("o", "k")
        assert screen.query_one(PromptInput).text == "ok"


async def test_the_plan_waiting_for_approval_notifies(tmp_path: Path) -> None:
    rounds = [
        [{"sleep": 0.3}, {"tool_call": {"name": EXIT_PLAN, "args": {"plan": "1. Do it."}}}],
        {"text": "ok"},
    ]
    app, _ = make_app(tmp_path, rounds)
    app.controller.handle_now(rq.SetMode("plan"))
    async with app.run_test(size=SIZE) as pilot:
        sent = capture(app)
        await send(pilot, "plan it")
        await blur(pilot)
        await wait_for_screen(pilot, PlanApprovalScreen)
        await pilot.pause()
        assert sent == ["\x1b]9;Wyckoff: the plan is ready for your approval\x07"]
        await pilot.press("escape")
        await settle(pilot, chat(app))
