"""A scripted chat app for Pilot and snapshot tests."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from textual.app import App
from textual.drivers.linux_driver import LinuxDriver

from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.controller import ChatController, Exporter
from wyckoff_cli.storage.sessions import LoadedSession, SessionStore
from wyckoff_cli.tools.base import Tool
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.registry import ToolRegistry
from wyckoff_cli.tui import textual_compat
from wyckoff_cli.tui.app import WyckoffApp

MODEL = "scripted:test"


def make_controller(
    root: Path,
    rounds: list[Any],
    tools: list[Tool] | None = None,
    *,
    loaded: LoadedSession | None = None,
    model: str = MODEL,
    exporter: Exporter | None = None,
    store: SessionStore | None = None,
) -> tuple[ChatController, ScriptedProvider]:
    """A controller over the real builder with a scripted provider, `tools` (the
    built-ins when None), no context manager and the system prompt "SYSTEM"."""
    provider = ScriptedProvider(rounds, model=MODEL)
    builder = SessionBuilder(
        open_workspace(root),
        provider_factory=lambda _model: provider,
        tools_factory=default_registry if tools is None else lambda: ToolRegistry(tools),
        manage_context=False,
        fixed_prompt="SYSTEM",
        store=store or SessionStore(),
    )
    controller = ChatController(
        builder,
        model=model,
        mode="default",
        loaded=loaded,
        exporter=exporter,
        price=lambda _m, u: (u.input_tokens * 3e-6 + u.output_tokens * 15e-6, u.cache_read_tokens * 2.7e-6),
        context_window=lambda _m: 200_000,
    )
    return controller, provider


def make_app(
    root: Path, rounds: list[Any], tools: list[Tool] | None = None, **options: Any
) -> tuple[WyckoffApp, ScriptedProvider]:
    controller, provider = make_controller(root, rounds, tools, **options)
    return WyckoffApp(controller), provider


def quiet_driver(app: App[None]) -> LinuxDriver:
    """A QuietLinuxDriver made (not started) in the running loop; the two signal handlers
    Textual's driver sets as it is made are put back here."""
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTSTP, signal.SIGCONT)}
    try:
        return textual_compat.QuietLinuxDriver(app)
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
