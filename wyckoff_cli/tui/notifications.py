"""Telling the person, when the terminal is not focused, that Wyckoff needs them.

The app tracks the terminal's focus from Textual's `App.app_focus` (focus reporting,
`AppFocus`/`AppBlur`). While it is not focused, one notification goes out when a
dialog that blocks the turn opens — an approval, the plan, a trust question: any
screen with an `attention` text — and one when a turn ends (not when you interrupted
it). Parallel calls asked one after another make one wait: one notification until
the terminal is focused again or the turn ends. What is written comes from
`tui/terminal_notify.py` (`[ui] notifications`); it goes through Textual's driver.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from typing import Any

from textual.app import App
from textual.screen import Screen

from wyckoff_cli.core import events as ev
from wyckoff_cli.tui.terminal_notify import Mode, notification, under_tmux
from wyckoff_cli.tui.textual_compat import write_to_terminal

TITLE = "Wyckoff"
SUMMARY_ARGS = ("command", "path", "file_path", "url", "query", "pattern", "description")


def call_summary(name: str, args: Mapping[str, Any], preview: Mapping[str, Any] | None = None) -> str:
    """`run_shell \\`pytest\\``: the tool and what it acts on, for a one-line message."""
    subject = (preview or {}).get("command")
    if not isinstance(subject, str):
        subject = next((args[k] for k in SUMMARY_ARGS if isinstance(args.get(k), str)), None)
    if not subject:
        return name
    subject = " ".join(subject.split())
    subject = subject if len(subject) <= 60 else subject[:59] + "…"
    return f"{name} `{subject}`"


def turn_text(done: ev.TurnDone, failure: ev.TurnFailed | None, elapsed: float | None) -> str | None:
    """What a turn's end says, or None for a turn the person interrupted."""
    took = f" ({elapsed:.1f}s)" if elapsed is not None else ""
    if failure is not None:
        return f"turn failed{took} — {failure.kind}: {failure.message}"
    if done.reason == "aborted":
        return None
    if done.reason in ("completed", "completed_by_tool"):
        return f"turn finished{took}"
    if done.reason == "max_tool_rounds":
        return f"turn stopped at the tool-round limit{took}"
    return f"turn ended: {done.reason}{took}"


VISIBILITY = "#{window_active} #{session_attached} #{window_zoomed_flag} #{pane_active}"


def _tmux(command: list[str], env: Mapping[str, str]) -> str | None:
    try:
        result = subprocess.run(
            ["tmux", *command], capture_output=True, text=True, timeout=2, check=False, env=dict(env)
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def pane_visible(shown: str) -> bool:
    """From `VISIBILITY`: the pane's window is its session's current one, a client is
    attached, and no other pane of it is zoomed."""
    try:
        window_active, attached, zoomed, pane_active = (int(part) for part in shown.split())
    except ValueError:
        return False
    return window_active == 1 and attached > 0 and (not zoomed or pane_active == 1)


def tmux_allows_passthrough(env: Mapping[str, str]) -> bool:
    """Whether tmux forwards this pane's `ESC P tmux;` sequence now: `allow-passthrough`
    is `all` (tmux 3.4+), or `on` and the pane is on screen (tmux drops it otherwise —
    in another window, or behind a zoomed pane)."""
    target = ["-t", env["TMUX_PANE"]] if env.get("TMUX_PANE") else []
    option = _tmux(["show-options", "-Apv", *target, "allow-passthrough"], env)
    if option == "all":
        return True
    if option != "on":
        return False
    shown = _tmux(["display-message", "-p", *target, VISIBILITY], env)
    return shown is not None and pane_visible(shown)


class AttentionNotifier:
    """Decides when to notify; `write` sends the bytes (the terminal, or a test's list)."""

    def __init__(
        self,
        mode: Mode,
        write: Callable[[str], None],
        env: Mapping[str, str] | None = None,
        passthrough: Callable[[Mapping[str, str]], bool] = tmux_allows_passthrough,
    ) -> None:
        self.mode = mode
        self.write = write
        self.env = dict(os.environ if env is None else env)
        self._passthrough = passthrough  # asked at each notification: the pane may be hidden now
        self.focused = True
        self._waiting_told = False  # this wait was notified already

    def focus_changed(self, focused: bool) -> None:
        self.focused = focused
        if focused:
            self._waiting_told = False  # the person saw it: the next wait is a new one

    def screen_changed(self, screen: Screen[Any]) -> None:
        text = getattr(screen, "attention", None)
        if isinstance(text, str) and text and not self._waiting_told:
            self._waiting_told = self._send(text)

    def turn_ended(self, done: ev.TurnDone, failure: ev.TurnFailed | None, elapsed: float | None) -> None:
        self._waiting_told = False
        text = turn_text(done, failure, elapsed)
        if text is not None:
            self._send(text)

    def _send(self, text: str) -> bool:
        if self.mode == "off" or self.focused:
            return False
        passthrough = under_tmux(self.env) and self._passthrough(self.env)
        data = notification(self.mode, self.env, TITLE, text, tmux_passthrough=passthrough)
        if data:
            self.write(data)
        return bool(data)


def install(app: App[Any], mode: Mode) -> AttentionNotifier:
    """Follow the app's focus and screens; notify through its driver."""
    notifier = AttentionNotifier(mode, lambda data: write_to_terminal(app, data))
    notifier.focused = app.app_focus
    app.watch(app, "app_focus", notifier.focus_changed, init=False)
    app.screen_change_signal.subscribe(app, notifier.screen_changed)
    return notifier
