"""What an interactive host (the app; later the ChatController) needs from MCP, UI-free.

`McpHost` owns the session's `McpManager` across runtimes (a model switch builds a new
runtime; the servers stay up). The host calls:

- `start()` once the event loop runs (the app: when the chat screen mounts);
- `connecting()` / `wait_connecting(on_wait)`: the servers still starting, and a wait for
  them (a turn waits, so their tools are in its first request);
- `attach(registry)` for every runtime it builds (tools are appended after built-ins);
- `take_notices()` periodically (or after `on_change`) to show what happened, once each;
- `status_text()` for the status bar ("MCP 3/4"), `table()` for `/mcp`;
- `trust_prompt()` / `trust()` for the project's `.mcp.json` (and a server's changed
  tools; `trust_notice` is the notice that asked, for a host to take back once trusted),
  `restart(name)`; `command(argument)` answers `/mcp ...` with an event;
- `prepare_message(text)` before a turn: `@SERVER:URI` mentions attach resources;
- `prompt_commands()` / `render_prompt(command, line)` for `/mcp__SERVER__PROMPT ARGS`;
- `aclose()` when the session ends (stdio children are killed with their group).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from wyckoff_cli.core import events as ev
from wyckoff_cli.tools.mcp.extras import (
    PromptCommand,
    ResourceItem,
    attach_resources,
    format_table,
    prompt_commands,
    render_prompt,
    resource_completions,
)
from wyckoff_cli.tools.mcp.manager import EventFn, McpEvent, McpManager
from wyckoff_cli.tools.mcp.server_asks import Sampler
from wyckoff_cli.tools.registry import ToolRegistry

StartFn = Callable[[EventFn], McpManager]


class McpHost:
    def __init__(self, start: StartFn, *, results_dir: Path | None = None) -> None:
        self._start = start
        self.manager: McpManager | None = None
        self.results_dir = results_dir
        self._notices: list[tuple[str, str]] = []
        self.on_change: Callable[[], None] = lambda: None
        self.trust_notice: str | None = None  # the notice asking for trust; stale once trusted
        self._root_changes: set[asyncio.Task[None]] = set()

    def start(self) -> McpManager:
        if self.manager is None:
            self.manager = self._start(self._event)
            prompt = self.manager.trust_prompt()
            if prompt is not None:
                self.trust_notice = prompt + "\n(/mcp trust trusts it and starts them.)"
                self._notices.append(("warning", self.trust_notice))
        return self.manager

    def _event(self, event: McpEvent) -> None:
        if event.kind == "notice":
            self._notices.append(
                ("warning" if event.state in ("failed", "changed") else "info", event.message)
            )
        elif event.kind == "tools":
            self._notices.append(("info", event.message))
        self.on_change()

    def attach(self, registry: ToolRegistry, sampler: Sampler | None = None) -> None:
        """Offer the servers' tools through `registry`; their sampling requests run on
        `sampler` (the runtime's model), when given."""
        manager = self.start()
        manager.attach(registry)
        if sampler is not None:
            manager.use_model(sampler)

    async def set_root(self, root: Path) -> None:
        """The session's workspace root changed (`roots/list_changed` to the servers)."""
        if self.manager is not None:
            await self.manager.set_root(root)

    def follow_root(self, root: Path) -> None:
        """For a host building a runtime (sync): when `root` is not the root the servers
        were given, change it in the background (`set_root`)."""
        if self.manager is None or self.manager.root.resolve() == root.resolve():
            return
        task = asyncio.get_running_loop().create_task(self.set_root(root))
        self._root_changes.add(task)
        task.add_done_callback(self._root_changes.discard)

    def connecting(self) -> list[str]:
        """The servers still starting (their tools are not offered yet)."""
        if self.manager is None:
            return []
        return [s.name for s in self.manager.statuses() if s.state == "connecting"]

    async def wait_connecting(
        self, on_wait: Callable[[str], None], only: Sequence[str] | None = None
    ) -> None:
        """Wait for the servers still starting (those in `only`, when given), one after
        another, each up to its startup timeout; `on_wait(name)` says which one is
        waited for."""
        for name in self.connecting():
            if only is not None and name not in only:
                continue
            connection = self.manager.connection(name) if self.manager is not None else None
            if connection is not None:
                on_wait(name)
                await connection.wait_ready(connection.spec.startup_timeout)

    def take_notices(self) -> list[tuple[str, str]]:
        notices, self._notices = self._notices, []
        return notices

    def status_text(self) -> str:
        return self.manager.status_text() if self.manager is not None else ""

    def table(self) -> str:
        return format_table(self.start(), with_tools=True)

    def trust_prompt(self) -> str | None:
        return self.start().trust_prompt()

    def trust(self, name: str | None = None) -> str:
        """`/mcp trust [NAME]`: trust the project file (starting its servers), or accept
        a server's changed tool definitions."""
        manager = self.start()
        if name:
            if manager.connection(name) is None:
                return f"No running MCP server {name}"
            manager.accept_changes(name)
            return f"Accepted the current tools of {name}"
        if manager.trust_prompt() is None:
            return "The project's .mcp.json is already trusted (or there is none)"
        manager.trust_project_file()
        return "Trusted the project's .mcp.json; starting its servers"

    async def restart(self, name: str) -> str:
        manager = self.start()
        if manager.config.get(name) is None:
            return f"No MCP server {name} (see /mcp)"
        await manager.restart(name)
        return f"Restarting {name}"

    async def command(self, argument: str) -> ev.RuntimeEvent:
        """`/mcp`, `/mcp restart NAME`, `/mcp trust [NAME]` as the event to show."""
        action, _, name = argument.strip().partition(" ")
        name = name.strip()
        if not action:
            return ev.CommandOutput("mcp", title="MCP servers", text=self.table())
        if action == "restart" and name:
            return ev.Notice("info", await self.restart(name))
        if action == "trust":
            return ev.Notice("info", self.trust(name or None))
        return ev.Notice("warning", "Usage: /mcp, /mcp restart NAME, /mcp trust [NAME]")

    async def prepare_message(self, text: str) -> str:
        if self.manager is None or "@" not in text:
            return text
        return await attach_resources(self.manager, text, self.results_dir)

    def resources(self, prefix: str = "") -> list[ResourceItem]:
        return resource_completions(self.manager, prefix) if self.manager is not None else []

    def prompt_commands(self) -> list[PromptCommand]:
        return prompt_commands(self.manager) if self.manager is not None else []

    async def render_prompt(self, command: str, line: str) -> str:
        return await render_prompt(self.start(), command, line, self.results_dir)

    async def aclose(self) -> None:
        if self.manager is not None:
            await self.manager.aclose()
