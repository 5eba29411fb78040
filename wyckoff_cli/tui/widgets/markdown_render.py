"""Markdown to strips with Rich: the renderer behind `MarkdownStreamView`.

Kept apart from markdown_stream.py because its imports (markdown-it, Rich's Markdown
elements, Pygments) cost ~30 ms: markdown_stream imports this module on its first
render, after the app's first paint.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import ClassVar

from markdown_it import MarkdownIt
from markdown_it.token import Token
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

__all__ = ["CodeLines", "render_code_head", "render_code_line", "render_markdown"]

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


CodeLines = tuple[tuple[tuple[object, str], ...], ...]
"""A code block's lexed tokens, line by line: each line's (token type, text) pairs."""


class _Lexed(Lexer):
    """Gives back the tokens already made for `text`, so Syntax does not lex it again."""

    def __init__(self, lexer: Lexer, text: str, tokens: list[tuple[object, str]]) -> None:
        super().__init__()
        self._lexer, self._text, self._tokens = lexer, text, tokens

    def get_tokens(self, text: str, unfiltered: bool = False) -> Iterator[tuple[object, str]]:
        if text == self._text:
            return iter(self._tokens)
        return self._lexer.get_tokens(text, unfiltered)  # type: ignore[no-any-return]


def _by_line(tokens: list[tuple[object, str]]) -> CodeLines:
    lines: list[tuple[tuple[object, str], ...]] = []
    line: list[tuple[object, str]] = []
    for kind, text in tokens:
        *ended, rest = text.split("\n")
        for piece in ended:
            line.append((kind, piece))
            lines.append(tuple(line))
            line = []
        if rest:
            line.append((kind, rest))
    if line:
        lines.append(tuple(line))
    return tuple(lines)


class _CodeBlock(CodeBlock):
    """Rich's code block with cached lexers and theme, and no vertical padding.

    For a block that streams in (`_Markdown.code_from`), only the lines from that one on
    are drawn, highlighted in the context of the whole block. That is what drawing it
    whole would show only while the lines before it are lexed as they were when drawn:
    their tokens (`code_lines`) are compared, and the whole block is drawn when they
    changed (a string opened on one line and closed on a later one)."""

    markdown: _Markdown | None = None

    @classmethod
    def create(cls, markdown: Markdown, token: Token) -> _CodeBlock:
        block = super().create(markdown, token)
        assert isinstance(block, _CodeBlock)  # Rich's create() makes a `cls`
        if isinstance(markdown, _Markdown):
            block.markdown = markdown
        return block

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        code = str(self.text).rstrip()
        lexer = _lexer(self.lexer_name) or _lexer("text")
        line_range = None
        owner = self.markdown
        if owner is not None and owner.code_lines is not None and lexer is not None:
            text = code + "\n"  # what Syntax lexes
            tokens = list(lexer.get_tokens(text))
            lines = _by_line(tokens)
            first = owner.code_from
            if first and lines[:first] == owner.code_lines[:first] and len(owner.code_lines) >= first:
                line_range = (first + 1, None)
            else:
                owner.code_from = 0
            owner.code_lines = lines
            lexer = _Lexed(lexer, text, tokens)
        yield Syntax(
            code,
            lexer or "text",
            theme=_syntax_theme(self.theme),
            word_wrap=True,
            padding=(0, 1),
            line_range=line_range,
        )


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

    code_from = 0
    """A code block streaming in: its lines before this one are drawn already (0: none)."""
    code_lines: CodeLines | None = None
    """A code block streaming in: its lines' tokens, as drawn before (`code_from`), and
    as drawn now; None: not such a block."""

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
    return _render(_Markdown(source, code_theme, hyperlinks), width, console)


def render_code_head(
    source: str,
    width: int,
    console: Console,
    code_theme: str = DEFAULT_CODE_THEME,
    drawn: tuple[int, CodeLines] | None = None,
) -> tuple[list[Strip], CodeLines, bool]:
    """A fenced code block still streaming in (`source`: its fence and whole lines).
    `drawn`: how many of its lines were drawn before, and their tokens then. Returns
    the lines drawn now, the tokens of the block's lines, and whether the lines drawn
    follow those drawn before (True) or are the whole block (its earlier lines lexed
    otherwise now, or `drawn` None). A code block that streams in so draws each new
    line once, not every line again (markdown_stream.py)."""
    markdown = _Markdown(source, code_theme)
    markdown.code_from, markdown.code_lines = drawn if drawn is not None else (0, ())
    strips = _render(markdown, width, console)
    return strips, markdown.code_lines or (), markdown.code_from > 0


def _render(markdown: _Markdown, width: int, console: Console) -> list[Strip]:
    options = console.options.update(
        width=width, min_width=width, max_width=width, height=None, highlight=False
    )
    lines = console.render_lines(markdown, options, pad=True)
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
