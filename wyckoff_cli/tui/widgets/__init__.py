"""Widgets of the chat app.

The transcript's text entries are line-API widgets (see docs/TUI-RENDERING.md):
`Transcript` is the scrolling column, `MarkdownStreamView` one streamed answer,
`RenderableView` one Rich renderable (a user message, a notice).
"""

from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.transcript import BlockLinesView, RenderableView, Transcript

__all__ = ["BlockLinesView", "MarkdownStreamView", "RenderableView", "Transcript"]
