"""The session's language-server tool family: the file tools wrapped so the servers
see every file the agent reads or changes (and an edit's result ends with the
diagnostics it introduced), and the lsp_* tools, added to the registry once a server
runs (so they are offered only then).

Any other tool that may change files and names them — an MCP server's `write_file`,
`edit_file` or `move_file` (arguments `path`, `file_path`, `filePath`, `destination`,
`paths`, ...) — is wrapped the same way for each named file inside the workspace, and
tools added later (MCP servers connect mid-session) are wrapped as they arrive."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.lsp.manager import LspManager
from wyckoff_cli.tools.paths import is_within
from wyckoff_cli.tools.permissions.workspace import display_path, resolve_path
from wyckoff_cli.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from wyckoff_cli.tools.lsp.rename import RenamePlans

EDITING_TOOLS = ("edit_file", "write_file")
READING_TOOLS = ("read_file",)
CHANGING_KINDS = ("external", "edit", "other")  # kinds of tools that may change the files they name
PATH_KEYS = ("path", "file_path", "filePath", "filename", "destination", "target", "paths", "files")
MAX_FILES = 10  # files of one call checked for diagnostics


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
        wrapped = ToolRegistry(registry, wrap=self._wrapped)
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
        if getattr(tool.run, "lsp_wrapped", False):  # a wrapped tool copied into a child's registry
            return tool
        if tool.name in EDITING_TOOLS:
            run = self._after_edit(tool)
        elif tool.name in READING_TOOLS:
            run = self._after_read(tool)
        elif tool.kind in CHANGING_KINDS and not tool.name.startswith("lsp_"):
            run = self._after_change(tool)
        else:
            return tool
        run.lsp_wrapped = True
        return dataclasses.replace(tool, run=run)

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
            return _with_text(result, added)

        return run

    def _after_change(self, tool: Tool) -> Any:
        async def run(args: dict[str, Any], ctx: ToolContext) -> str | ToolOutcome:
            paths = [p for p in _paths_named(args, ctx) if self.manager.meet(p) is not None]
            before = {p: await self.manager.before_edit(p) for p in paths}
            result = await tool.run(args, ctx)
            added = ""
            for path, snapshot in before.items():
                added += await self.manager.after_edit(path, snapshot, display_path(path, ctx.workspace))
            self._emit_notices(ctx)
            return _with_text(result, added)

        return run


def _with_text(result: str | ToolOutcome, added: str) -> str | ToolOutcome:
    """A tool's result with the diagnostics `added` at its end."""
    if not added:
        return result
    if isinstance(result, ToolOutcome):
        return dataclasses.replace(result, text=result.text + added)
    return result + added


def _paths_named(args: dict[str, Any], ctx: ToolContext) -> list[Path]:
    """The files inside the workspace that a call's arguments name (at most `MAX_FILES`)."""
    found: list[Path] = []
    for key in PATH_KEYS:
        value = args.get(key)
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, str) or not item or len(item) > 4096:
                continue
            try:
                path = resolve_path(ctx.workspace, item.removeprefix("file://"))
            except ToolError:
                continue
            if not is_within(path, resolve_path(ctx.workspace, ".")):
                continue  # outside the workspace: not ours to check
            if path not in found:
                found.append(path)
    return found[:MAX_FILES]


def _path_of(args: dict[str, Any], ctx: ToolContext) -> Path | None:
    value = args.get("path")
    if not isinstance(value, str) or not value:
        return None
    return resolve_path(ctx.workspace, value)
