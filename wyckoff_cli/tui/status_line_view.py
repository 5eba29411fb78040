"""The status line command in the status bar (session/status_line.py runs it): the
bar tells the refresher whenever it repaints, the refresher puts the command's first
line into the status model, and the bar repaints with it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from wyckoff_cli.session.status_line import (
    StatusLineRefresher,
    StatusLineSpec,
    find_status_line,
    status_payload,
    user_status_line,
)
from wyckoff_cli.tui.widgets.status_bar import StatusBar


def attach_status_line(screen: Any) -> StatusLineRefresher:
    """Connect a status line to `screen` (the ChatScreen): runs only while a command is
    configured (and, for a project file's, trusted)."""
    controller = screen.controller
    bar = screen.query_one(StatusBar)
    user_command = user_status_line()  # read once: the user's own config.toml
    started = time.monotonic()

    def spec() -> StatusLineSpec | None:
        hooks = controller.builder.user_hooks.hooks if controller.builder.load_user_hooks else None
        return find_status_line(user_command, hooks)

    def show(text: str) -> None:
        screen.status.custom_line = text
        bar.refresh_status()

    refresher = StatusLineRefresher(spec, Path(controller.root), show)
    bar.on_refresh = lambda: refresher.changed(status_payload(controller, started))
    screen.status_line = refresher
    bar.refresh_status()
    return refresher
