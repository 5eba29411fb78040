"""The session's language-server tool family: the file tools wrapped so the servers
see every file the agent reads or changes (and an edit's result ends with the
diagnostics it introduced), and the lsp_* tools, added to the registry once a server
runs (so they are offered only then)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.lsp.manager import LspManager
from wyckoff_cli.tools.permissions.workspace import display_path, resolve_path
from wyckoff_cli.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from wyckoff_cli.tools.lsp.rename import RenamePlans

EDITING_TOOLS = ("edit_file", "write_file")
READING_TOOLS = ("read_file",)


class LspTools:
    """Wraps a registry's file tools and adds the lsp_* tools when a server runs."""

    def __init__(self, manager: LspManager) -> None:
        self.manager = manager
        self._plans: RenamePlans | None = None
        self._tools: list[Tool] | None = None
        self._registries: list[ToolRegistry] = []
        manager.on_running.append(self._offer)

    @property
    def plans(self) -> RenamePlans:
        """lsp_rename's plans (made on first use: pygls and lsprotocol load then)."""
        if self._plans is None:
            from wyckoff_cli.tools.lsp.rename import RenamePlans

            self._plans = RenamePlans(self.manager)
        return self._plans

    @property
    def tools(self) -> list[Tool]:
        """The lsp_* tools (made on first use)."""
        if self._tools is None:
            from wyckoff_cli.tools.lsp.navigation import navigation_tools
            from wyckoff_cli.tools.lsp.rename import rename_tool

            self._tools = [*navigation_tools(self.manager), rename_tool(self.plans)]
        return self._tools

    def wrap(self, registry: ToolRegistry) -> ToolRegistry:
        """A registry like `registry` (same order) with its file tools wrapped."""
        wrapped = ToolRegistry(self._wrapped(tool) for tool in registry)
        self._registries.append(wrapped)
        if self.manager.running():
            self._offer()
        return wrapped

    def _offer(self) -> None:
        for registry in self._registries:
            for tool in self.tools:
                if tool.name not in registry:
                    registry.add(tool)

    def _wrapped(self, tool: Tool) -> Tool:
        if tool.name in EDITING_TOOLS:
            return dataclasses.replace(tool, run=self._after_edit(tool))
        if tool.name in READING_TOOLS:
            return dataclasses.replace(tool, run=self._after_read(tool))
        return tool

    def _emit_notices(self, ctx: ToolContext) -> None:
        for text in self.manager.take_notices():
            ctx.emit_event(ev.Notice("info", text))

    def _after_read(self, tool: Tool) -> Any:
        async def run(args: dict[str, Any], ctx: ToolContext) -> str | ToolOutcome:
            result = await tool.run(args, ctx)
            path = _path_of(args, ctx)
            if path is not None:
                self.manager.open_soon(path)  # starts its server early: an edit rarely waits for it
                self._emit_notices(ctx)
            return result

        return run

    def _after_edit(self, tool: Tool) -> Any:
        async def run(args: dict[str, Any], ctx: ToolContext) -> str | ToolOutcome:
            path = _path_of(args, ctx)
            before = await self.manager.before_edit(path) if path is not None else None
            result = await tool.run(args, ctx)
            if path is None:
                return result
            self._emit_notices(ctx)
            added = await self.manager.after_edit(path, before, display_path(path, ctx.workspace))
            self._emit_notices(ctx)
            if not added:
                return result
            if isinstance(result, ToolOutcome):
                return dataclasses.replace(result, text=result.text + added)
            return result + added

        return run


def _path_of(args: dict[str, Any], ctx: ToolContext) -> Path | None:
    value = args.get("path")
    if not isinstance(value, str) or not value:
        return None
    return resolve_path(ctx.workspace, value)
