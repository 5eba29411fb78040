"""The built-in tool set of a coding session."""

from __future__ import annotations

from wyckoff_cli.tools.registry import ToolRegistry


def default_registry() -> ToolRegistry:
    """Every built-in tool, in a fixed order (the order is part of the prompt cache)."""
    return ToolRegistry([])
