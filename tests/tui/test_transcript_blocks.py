"""The streaming Markdown block splitter (pure) and the block renderer."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from rich.console import Console
from rich.segment import Segment
from rich.style import Style

from wyckoff_cli.tui.markdown_blocks import BlockSplitter, split_blocks
from wyckoff_cli.tui.widgets.markdown_render import _is_blank
from wyckoff_cli.tui.widgets.markdown_stream import render_markdown

# -- examples ------------------------------------------------------------------


def test_paragraphs_split_at_blank_lines_and_blank_runs_are_separators() -> None:
    assert split_blocks("one\ntwo\n\n\n\nthree\n") == ["one\ntwo", "three"]


def test_a_fence_keeps_blank_lines_and_closes_only_on_a_matching_fence() -> None:
    text = "```python\na = 1\n\n\nb = 2\n~~~\n``\n````\nafter fence\n\nnext\n"
    assert split_blocks(text) == ["```python\na = 1\n\n\nb = 2\n~~~\n``\n````\nafter fence", "next"]


def test_tilde_fences_and_a_longer_opening_fence() -> None:
    text = "~~~~\nx\n\n```\n\ny\n~~~~\n\nz"
    assert split_blocks(text) == ["~~~~\nx\n\n```\n\ny\n~~~~", "z"]


def test_backticks_in_the_info_string_are_not_a_fence() -> None:
    assert split_blocks("```a`b\n\nnext") == ["```a`b", "next"]


def test_a_list_stays_one_block_across_blank_lines_until_something_else_starts() -> None:
    text = "- a\n\n- b\n\n  continued\n\n  ```sh\n  ls\n\n  ```\n1. other list\n\nParagraph\n"
    assert split_blocks(text) == [
        "- a\n\n- b\n\n  continued\n\n  ```sh\n  ls\n\n  ```\n1. other list",
        "Paragraph",
    ]


def test_a_list_interrupting_a_paragraph_continues_across_blank_lines() -> None:
    assert split_blocks("Steps:\n- a\n\n- b\n\nDone.") == ["Steps:\n- a\n\n- b", "Done."]


def test_indented_code_stays_together() -> None:
    assert split_blocks("    a\n\n    b\n\nc") == ["    a\n\n    b", "c"]


def test_headings_are_blocks_of_their_own() -> None:
    assert split_blocks("# Title\nintro\n## Sub\n- item\n  # not a heading\n# Next") == [
        "# Title",
        "intro",
        "## Sub",
        "- item\n  # not a heading",
        "# Next",
    ]
    assert split_blocks("#hashtag\ntext") == ["#hashtag\ntext"]


def test_a_table_is_one_block() -> None:
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |"
    assert split_blocks(f"{table}\n\nafter") == [table, "after"]


def test_tail_is_the_open_block_including_the_unterminated_line() -> None:
    splitter = BlockSplitter()
    splitter.feed("para")
    assert splitter.tail == "para" and splitter.finished == []
    splitter.feed("graph\nmore\n\nnext par")
    assert splitter.finished == ["paragraph\nmore"]
    assert splitter.tail == "next par"
    splitter.feed("\n\n- item\n\n")
    assert splitter.tail == "- item"  # a list waits for the next line after a blank
    splitter.feed("  tail")
    assert splitter.tail == "- item\n\n  tail"
    splitter.feed("\n\n```\ncode\n\n")
    assert splitter.in_fence
    assert splitter.finished[-1] == "- item\n\n  tail"
    assert splitter.close() == 1
    assert splitter.finished[-1] == "```\ncode\n"  # inside an open fence a blank line is content
    assert splitter.tail == "" and splitter.closed


def test_close_is_idempotent_and_feeding_after_close_fails() -> None:
    splitter = BlockSplitter()
    splitter.feed("x")
    assert splitter.close() == 1
    assert splitter.close() == 0
    with pytest.raises(RuntimeError):
        splitter.feed("y")


def test_crlf_line_endings() -> None:
    assert split_blocks("a\r\nb\r\n\r\nc\r\n") == ["a\nb", "c"]


def test_whitespace_only_text_has_no_blocks() -> None:
    assert split_blocks("\n\n   \n") == []
    splitter = BlockSplitter()
    splitter.feed("   ")
    assert splitter.tail == ""


# -- properties ----------------------------------------------------------------

_WORDS = st.sampled_from(
    ["alpha", "**bold**", "`code`", "*it*", "[link](http://x.y)", "beta", "gamma", "x_y"]
)
_LINE = st.lists(_WORDS, min_size=1, max_size=8).map(" ".join)


@st.composite
def _piece(draw: st.DrawFn) -> str:
    kind = draw(
        st.sampled_from(["para", "heading", "list", "olist", "fence", "tilde", "table", "quote", "rule"])
    )
    if kind == "para":
        return "\n".join(draw(st.lists(_LINE, min_size=1, max_size=3)))
    if kind == "heading":
        return "#" * draw(st.integers(1, 4)) + " " + draw(_LINE)
    if kind in ("list", "olist"):
        items = []
        for n in range(draw(st.integers(1, 4))):
            marker = "-" if kind == "list" else f"{n + 1}."
            item = f"{marker} {draw(_LINE)}"
            if draw(st.booleans()):
                item += f"\n   - {draw(_LINE)}"
            if draw(st.integers(0, 5)) == 0:
                item += "\n\n   ```\n   nested\n\n   code\n   ```"
            items.append(item)
        joiner = "\n\n" if draw(st.booleans()) else "\n"
        return joiner.join(items)
    if kind in ("fence", "tilde"):
        fence = "```" if kind == "fence" else "~~~"
        body = draw(
            st.lists(st.sampled_from(["x = 1", "", "# comment", "  y = [", "]", "```py"]), max_size=5)
        )
        if fence == "```":
            body = [line for line in body if not line.startswith("```")]
        return f"{fence}python\n" + "\n".join(body) + f"\n{fence}"
    if kind == "table":
        rows = draw(st.integers(1, 3))
        return "| a | b |\n|---|---|\n" + "\n".join(f"| {n} | {draw(_WORDS)} |" for n in range(rows))
    if kind == "quote":
        return "> " + draw(_LINE)
    return "---"


@st.composite
def _document(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(_piece(), min_size=1, max_size=8))
    out = pieces[0]
    for piece in pieces[1:]:
        out += "\n" * draw(st.integers(2, 4)) + piece
    return out + draw(st.sampled_from(["", "\n", "\n\n"]))


@st.composite
def _chunked(draw: st.DrawFn) -> tuple[str, list[str]]:
    text = draw(_document())
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=40))))
    bounds = [0, *cuts, len(text)]
    return text, [text[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


@settings(max_examples=200, deadline=None)
@given(_chunked())
def test_blocks_do_not_depend_on_how_the_stream_was_chunked(case: tuple[str, list[str]]) -> None:
    text, chunks = case
    splitter = BlockSplitter()
    seen: list[str] = []
    for chunk in chunks:
        splitter.feed(chunk)
        # finished blocks are final: later text never changes them
        assert splitter.finished[: len(seen)] == seen
        seen = list(splitter.finished)
    splitter.close()
    assert splitter.finished == split_blocks(text)


def _tokens(text: str) -> list[tuple[object, ...]]:
    parser = MarkdownIt().enable("strikethrough").enable("table")
    return [
        (token.type, token.tag, token.nesting, token.content, token.info, token.hidden, token.markup)
        for token in parser.parse(text)
    ]


@settings(max_examples=200, deadline=None)
@given(_document())
def test_blocks_joined_parse_like_the_whole_text(text: str) -> None:
    assert _tokens("\n\n".join(split_blocks(text))) == _tokens(text)


def _collapse_blank_runs(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return out


def _render_blocks(text: str, console: Console, width: int) -> list[str]:
    lines: list[str] = []
    for index, block in enumerate(split_blocks(text)):
        if index:
            lines.append("")
        lines.extend(strip.text.rstrip() for strip in render_markdown(block, width, console))
    return lines


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_document())
def test_rendering_block_by_block_shows_what_rendering_the_whole_text_shows(text: str) -> None:
    console = Console(width=60, color_system=None, force_terminal=False)
    whole = [strip.text.rstrip() for strip in render_markdown(text, 60, console)]
    # Rich puts two blank lines around a table when it renders a whole document; the
    # transcript always puts one between blocks. Everything else must match.
    assert _collapse_blank_runs(_render_blocks(text, console, 60)) == _collapse_blank_runs(whole)


def test_the_reference_answer_renders_block_by_block_like_the_whole() -> None:
    from bench.stream_render import REFERENCE, generated_answer

    text = REFERENCE.read_text(encoding="utf-8") if REFERENCE.exists() else generated_answer()
    console = Console(width=100, color_system=None, force_terminal=False)
    whole = [strip.text.rstrip() for strip in render_markdown(text, 100, console)]
    assert _collapse_blank_runs(_render_blocks(text, console, 100)) == _collapse_blank_runs(whole)


def test_only_lines_without_text_or_background_are_trimmed_from_a_block() -> None:
    assert _is_blank([Segment("   "), Segment(" ", Style(bold=True))])
    assert not _is_blank([Segment("   ", Style(bgcolor="red"))])  # an empty line of code
    assert not _is_blank([Segment(" x ")])
    console = Console(width=30, color_system="truecolor", force_terminal=True)
    strips = render_markdown("- a\n- b", 30, console)
    assert [strip.text.rstrip() for strip in strips] == [" • a", " • b"]  # Rich's leading blank trimmed


def test_the_shared_parser_markdown_sets_what_rich_markdown_sets() -> None:
    from rich.markdown import Markdown

    from wyckoff_cli.tui.widgets.markdown_render import _Markdown

    # _Markdown skips Markdown.__init__ (which builds a parser per instance); if Rich
    # adds an attribute there, this fails instead of the renderer.
    assert set(vars(_Markdown("x"))) == set(vars(Markdown("x")))
