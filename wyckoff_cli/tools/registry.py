"""The set of tools a run may use, by name."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from wyckoff_cli.core.messages import ToolSpec
from wyckoff_cli.tools.base import Tool


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool] = (), *, wrap: Callable[[Tool], Tool] | None = None) -> None:
        """`wrap` is applied to every tool added, now and later (an MCP server's tools
        arriving mid-session): the language servers' wrapper (tools/lsp/family.py)."""
        self._tools: dict[str, Tool] = {}
        self._wrap = wrap
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} is registered twice")
        self._tools[tool.name] = self._wrap(tool) if self._wrap is not None else tool

    def remove(self, name: str) -> None:
        """Drop a tool (an MCP server's tools when it goes away or changes)."""
        self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        """Tool specs in registration order (stable, so the prompt cache holds)."""
        return [tool.spec() for tool in self._tools.values()]

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools
