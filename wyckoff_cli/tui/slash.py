"""The slash commands' behaviour, mixed into the chat screen.

Each command declared in `commands.COMMANDS` has a `command_<name>(argument)` method
here; `run_command` dispatches to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from wyckoff_cli.tools.policy import PERMISSION_MODES
from wyckoff_cli.tui.commands import COMMANDS

if TYPE_CHECKING:
    from wyckoff_cli.tui.screens.chat import ChatScreen

KEYS = (
    ("Enter", "send"),
    ("Shift+Enter, Ctrl+J", "new line"),
    ("Up / Down", "input history (Up on an empty prompt edits a queued message)"),
    ("Esc", "interrupt the turn"),
    ("Ctrl+C", "clear the input, or interrupt; twice quits"),
    ("Ctrl+D", "quit on an empty input"),
    ("Shift+Tab", "cycle permission modes"),
    ("Ctrl+O", "show / hide all thinking"),
    ("PageUp / PageDown", "scroll the transcript"),
    ("Tab", "next widget (Enter on a tool call or thinking expands it)"),
)

INIT_PROMPT = (
    "Write an AGENTS.md file at the root of this repository for coding assistants working here. "
    "First look around: list the files, read the README and build files, find how to install, run the "
    "tests and lint. Then write a concise AGENTS.md (under 150 lines) covering: what the project is, the "
    "layout, how to set up, build, test and lint (exact commands), code style and conventions you "
    "observed, and anything surprising. If an AGENTS.md exists, improve it instead of replacing it."
)


class SlashCommands:
    """The commands of one chat screen."""

    def __init__(self, chat: ChatScreen) -> None:
        self.chat = chat

    def run_command(self, name: str, argument: str) -> None:
        if self.chat.busy and name not in ("help", "cost", "mode", "quit", "permissions", "memory"):
            self.chat.add_notice("warning", f"/{name} waits for the turn to end (Esc interrupts it)")
            return
        handler = getattr(self, f"command_{name}")
        handler(argument)

    def _show(self, renderable: Any) -> None:
        self.chat._mount(Static(renderable, classes="command-output"))

    def command_help(self, argument: str) -> None:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        for command in COMMANDS:
            table.add_row(command.usage, command.description)
        table.add_row("", "")
        for key, what in KEYS:
            table.add_row(key, what)
        table.add_row("@path", "mention a file: the model must read it")
        self._show(table)

    def command_model(self, argument: str) -> None:
        if not argument:
            others = (
                ", ".join(m for m in self.chat.deps.models if m != self.chat.session.model)
                or "none configured"
            )
            self.chat.add_notice(
                "info", f"Model: {self.chat.session.model}. Others: {others}. /model ID switches."
            )
            return
        problem = self.chat.deps.check_model(argument)
        if problem:
            self.chat.add_notice("error", problem)
            return
        self.chat.run_worker(self._switch_model(argument), exclusive=True, group="command")

    async def _switch_model(self, model: str) -> None:
        await self.chat.session.set_model(model)
        self.chat.status.model = model
        self.chat.status.fallback_model = None
        self.chat.status.context_window = self.chat.deps.context_window(model)
        self.chat.status_changed()
        self.chat.add_notice("info", f"Model switched to {model}")

    def command_mode(self, argument: str) -> None:
        if not argument:
            self.chat.add_notice(
                "info",
                f"Permission mode: {self.chat.status.mode} (one of {', '.join(PERMISSION_MODES)}; Shift+Tab cycles)",
            )
            return
        if argument not in PERMISSION_MODES:
            self.chat.add_notice(
                "error", f"Unknown mode {argument!r}: use one of {', '.join(PERMISSION_MODES)}"
            )
            return
        self.chat.set_mode(argument)
        self.chat.add_notice("info", f"Permission mode: {argument}")

    def command_compact(self, argument: str) -> None:
        if not self.chat.session.history:
            self.chat.add_notice("info", "Nothing to compact yet")
            return
        self.chat.run_worker(self._compact(argument or None), exclusive=True, group="command")

    async def _compact(self, focus: str | None) -> None:
        self.chat.status.state = "compacting"
        self.chat.status_changed()
        try:
            session = self.chat.session
            event = await session.runtime.compact(session.history, session.system_prompt, focus)
        except Exception as exc:
            self.chat.add_notice("error", f"Compaction failed: {getattr(exc, 'message', exc)}")
        else:
            for produced in (event, session.runtime.side_usage()):
                if produced is not None:
                    session.recorder.record(produced)
                    self.chat.router.handle(produced)
        self.chat.status.state = "idle"
        self.chat.status_changed()

    def command_clear(self, argument: str) -> None:
        self.chat.run_worker(self._new_session(None), exclusive=True, group="command")

    async def _new_session(self, loaded: Any) -> None:
        from wyckoff_cli.tui.chat_session import ChatSession

        await self.chat.session.close()
        self.chat.session = ChatSession(self.chat.deps, self.chat.approve, loaded)
        self.chat.session.model = self.chat.status.model
        self.chat.session.mode = self.chat.status.mode
        await self.chat.transcript.remove_children()
        self.chat.router.tools.clear()
        self.chat.status.per_model.clear()
        self.chat.status.context_tokens = 0
        if loaded is not None:
            self.chat.status.restore(loaded.info.usage_by_model)
        self.chat.status_changed()
        if loaded is not None:
            self.chat.render_history()
            self.chat.add_notice("info", f"Resumed session {loaded.id}")
        else:
            self.chat.add_notice("info", "New session")

    def command_resume(self, argument: str) -> None:
        from wyckoff_cli.tui.screens.sessions import SessionPicker

        def picked(session_id: str | None) -> None:
            if session_id:
                self.resume(session_id)

        if argument:
            self.resume(argument)
        else:
            self.chat.app.push_screen(
                SessionPicker(self.chat.deps.store, self.chat.deps.project_root), picked
            )

    def resume(self, session_id: str) -> None:
        try:
            loaded = self.chat.deps.store.load(session_id)
        except Exception as exc:
            self.chat.add_notice("error", getattr(exc, "message", str(exc)))
            return
        self.chat.run_worker(self._new_session(loaded), exclusive=True, group="command")

    def command_cost(self, argument: str) -> None:
        if not self.chat.status.per_model:
            self.chat.add_notice("info", "No model calls in this session yet")
            return
        table = Table(title="This session", title_justify="left", show_edge=False)
        for column in (
            "model",
            "calls",
            "input",
            "output",
            "cache read",
            "cache write",
            "cost",
            "cache saved",
        ):
            table.add_column(column, justify="left" if column == "model" else "right")
        for model, totals in self.chat.status.per_model.items():
            cost = f"${totals.cost:.4f}" if totals.priced else "unpriced"
            table.add_row(
                model,
                str(totals.calls),
                f"{totals.input_tokens:,}",
                f"{totals.output_tokens:,}",
                f"{totals.cache_read_tokens:,}",
                f"{totals.cache_write_tokens:,}",
                cost,
                f"${totals.saved:.4f}",
            )
        table.add_row(
            "total",
            "",
            f"{self.chat.status.input_tokens:,}",
            f"{self.chat.status.output_tokens:,}",
            f"{self.chat.status.cache_read_tokens:,}",
            f"{self.chat.status.cache_write_tokens:,}",
            f"${self.chat.status.cost:.4f}",
            f"${self.chat.status.saved:.4f}",
            style="bold",
        )
        self._show(table)

    def command_memory(self, argument: str) -> None:
        if self.chat.deps.list_memories is None:
            self.chat.add_notice("warning", "Memory is not available in this build")
            return
        self._show(Text(self.chat.deps.list_memories(argument) or "No memories yet."))

    def command_permissions(self, argument: str) -> None:
        verb, _, rule = argument.partition(" ")
        if verb == "remove" and rule.strip():
            if self.chat.deps.remove_rule is None:
                self.chat.add_notice("warning", "Rules cannot be changed in this build")
                return
            self.chat.add_notice("info", self.chat.deps.remove_rule(rule.strip()))
            return
        rules = self.chat.deps.list_rules() if self.chat.deps.list_rules else ""
        session = ", ".join(self.chat.session.runtime.policy.session_allow) or "none"
        self._show(
            Text(
                f"{rules or 'No saved rules.'}\nAllowed for this session: {session}\n"
                "/permissions remove RULE removes a saved rule."
            )
        )

    def command_init(self, argument: str) -> None:
        self.chat.add_user("/init")
        self.chat.transcript.follow()
        from wyckoff_cli.runtime.loop import AbortSignal

        self.chat.abort = AbortSignal()
        self.chat.turn_worker = self.chat.run_turn(INIT_PROMPT, self.chat.abort, ("write_file",))

    def command_export(self, argument: str) -> None:
        if self.chat.deps.export_session is None or self.chat.session.id is None:
            self.chat.add_notice("warning", "Nothing to export yet")
            return
        self.chat.session.recorder.flush()
        target = Path(argument).expanduser() if argument else None
        try:
            written = self.chat.deps.export_session(self.chat.session.id, target)
        except Exception as exc:
            self.chat.add_notice("error", f"Export failed: {getattr(exc, 'message', exc)}")
            return
        self.chat.add_notice("info", f"Exported to {written}")

    def command_quit(self, argument: str) -> None:
        self.chat.app.exit()

    # ------------------------------------------------------------------ MCP (tools/mcp/host.py)

    def command_mcp(self, argument: str) -> None:
        mcp = self.chat.deps.mcp
        if mcp is None:
            self.chat.add_notice("info", "MCP is not available in this session")
            return
        action, _, name = argument.partition(" ")
        if action == "restart" and name.strip():

            async def restart() -> None:
                self.chat.add_notice("info", await mcp.restart(name.strip()))

            self.chat.run_worker(restart(), group="mcp")
        elif action == "trust":
            self.chat.add_notice("info", mcp.trust(name.strip() or None))
        elif action:
            self.chat.add_notice("warning", "Usage: /mcp, /mcp restart NAME, /mcp trust [NAME]")
        else:
            self._show(Text(mcp.table()))

    def run_mcp_prompt(self, text: str) -> None:
        """`/mcp__SERVER__PROMPT ARGS`: the server's prompt, sent as the user's message."""
        mcp = self.chat.deps.mcp
        assert mcp is not None
        name, _, line = text[1:].partition(" ")

        async def send() -> None:
            try:
                message = await mcp.render_prompt(name, line)
            except Exception as exc:  # a server error is a notice, never a crash
                self.chat.add_notice("warning", getattr(exc, "message", None) or str(exc))
                return
            self.chat.start_turn(message)

        self.chat.run_worker(send(), group="mcp")
