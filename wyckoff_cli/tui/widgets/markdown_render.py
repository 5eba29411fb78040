"""Markdown to strips with Rich: the renderer behind `MarkdownStreamView`.

Kept apart from markdown_stream.py because its imports (markdown-it, Rich's Markdown
elements, Pygments) cost ~30 ms: markdown_stream imports this module on its first
render, after the app's first paint.
"""

from __future__ import annotations

from functools import lru_cache
from typing import ClassVar

from markdown_it import MarkdownIt
from pygments.lexer import Lexer  # type: ignore[import-untyped]
from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
from pygments.util import ClassNotFound  # type: ignore[import-untyped]
from rich.console import Console, ConsoleOptions, JustifyMethod, RenderResult
from rich.markdown import CodeBlock, Heading, Markdown, MarkdownElement
from rich.segment import Segment
from rich.syntax import Syntax, SyntaxTheme
from textual.strip import Strip

from wyckoff_cli.tui.literal import visible
from wyckoff_cli.tui.widgets.code_theme import DEFAULT_CODE_THEME
from wyckoff_cli.tui.widgets.markdown_links import LINK_TEXT, LINK_URL, may_hold_links, show_links
from wyckoff_cli.tui.widgets.markdown_table import WrappingTable

__all__ = ["render_code_line", "render_markdown"]

_PARSER = MarkdownIt().enable("strikethrough").enable("table")


@lru_cache(maxsize=64)
def _lexer(name: str) -> Lexer | None:
    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return None


@lru_cache(maxsize=8)
def _syntax_theme(name: str) -> SyntaxTheme:
    return Syntax.get_theme(name)  # one instance per name, so its style cache is shared


class _CodeBlock(CodeBlock):
    """Rich's code block with cached lexers and theme, and no vertical padding."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        lexer = _lexer(self.lexer_name) or "text"
        yield Syntax(code, lexer, theme=_syntax_theme(self.theme), word_wrap=True, padding=(0, 1))


class _Heading(Heading):
    """Every heading left-aligned: this is a transcript, not a document."""

    LEVEL_ALIGN: ClassVar[dict[str, JustifyMethod]] = dict.fromkeys(
        ("h1", "h2", "h3", "h4", "h5", "h6"), "left"
    )


class _Markdown(Markdown):
    """Rich's `Markdown`, parsed with one shared parser (building one costs ~0.5 ms),
    with tables that keep every cell (markdown_table.py) and links that are OSC 8
    hyperlinks (`hyperlinks`) or show their URL as text (markdown_links.py)."""

    elements: ClassVar[dict[str, type[MarkdownElement]]] = {
        **Markdown.elements,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
        "heading_open": _Heading,
        "table_open": WrappingTable,
    }
    inlines = {*Markdown.inlines, LINK_TEXT, LINK_URL}

    def __init__(self, markup: str, code_theme: str = DEFAULT_CODE_THEME, hyperlinks: bool = True) -> None:
        # Same attributes as Markdown.__init__ (rich 15), without a parser per instance.
        markup = visible(markup)  # an escape sequence in the text is shown, never obeyed
        self.markup = markup
        self.parsed = _PARSER.parse(markup)
        if may_hold_links(markup):
            show_links(self.parsed, hyperlinks)
        self.code_theme = code_theme
        self.justify = None
        self.style = "none"
        self.hyperlinks = hyperlinks
        self.inline_code_lexer = None
        self.inline_code_theme = code_theme


def render_markdown(
    source: str,
    width: int,
    console: Console,
    code_theme: str = DEFAULT_CODE_THEME,
    hyperlinks: bool = True,
) -> list[Strip]:
    """Render one Markdown block into strips `width` cells wide (the transcript's hot path).
    `hyperlinks`: links as OSC 8 hyperlinks, else as `text (url)`."""
    options = console.options.update(
        width=width, min_width=width, max_width=width, height=None, highlight=False
    )
    lines = console.render_lines(_Markdown(source, code_theme, hyperlinks), options, pad=True)
    # Rich opens a list or quote with a blank line and may end a block with one; the
    # view puts exactly one blank line between blocks, as Rich does between elements.
    first, last = 0, len(lines)
    while first < last and _is_blank(lines[first]):
        first += 1
    while last > first and _is_blank(lines[last - 1]):
        last -= 1
    return [Strip(line, width) for line in lines[first:last]]


def render_code_line(
    line: str, width: int, console: Console, code_theme: str = DEFAULT_CODE_THEME
) -> list[Strip]:
    """One line of code as the code block shows it, without highlighting (cheap)."""
    lexer = _lexer("text") or "text"  # an instance: Syntax looks a name up on every render
    syntax = Syntax(visible(line), lexer, theme=_syntax_theme(code_theme), word_wrap=True, padding=(0, 1))
    options = console.options.update(width=width, min_width=width, max_width=width, height=None)
    return [Strip(segments, width) for segments in console.render_lines(syntax, options, pad=True)]


def _is_blank(line: list[Segment]) -> bool:
    """No text and no background (an empty line of a code block has a background)."""
    return all(
        not segment.text.strip() and (segment.style is None or segment.style.bgcolor is None)
        for segment in line
    )
