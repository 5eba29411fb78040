"""A bullet list that streams in renders its finished items once (issue 36: a growing
list was drawn whole every frame, longer with every item). What it shows after every
flush is what rendering the list so far whole shows, and the finished list is rendered
whole."""

from __future__ import annotations

from typing import Any

import pytest
from textual.strip import Strip

from tests.tui.test_transcript_widget import TranscriptApp, _new_view
from tests.waiting import until
from wyckoff_cli.tui.markdown_blocks import last_list_item
from wyckoff_cli.tui.widgets import markdown_stream
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView, render_markdown

LISTS = {
    "tight": "- read the config file once at start-up\n- cache the parsed result in `_cache_1`\n- log a warning\n",
    "nested": "- one\n  - invalidate it when the file's mtime changes\n  - keep at most 128 entries\n- two\n"
    "  1. first\n  2. second\n- three\n",
    "loose, with paragraphs": "- a\n\n  a second paragraph of a\n\n- b\n\n- c **bold** and *em*\n",
    "long items that wrap": "".join(f"- item {n} " + "words that wrap " * 9 + "\n" for n in range(4)),
    "links and code": "- see [the docs](https://example.com/docs) and `x = 1`\n- ~~struck~~ text\n"
    "- a fence inside:\n\n  ```python\n  def f():\n      return 1\n  ```\n- after the fence\n",
    "stars": "* one\n* two\n* three\n",
    "plus, empty item": "+ one\n+\n+ three\n",
}

NOT_ONE_LIST = {
    "a paragraph first": "Some text\n- a\n- b",
    "two bullets, two lists": "- a\n* b",
    "a lazy line": "- a\nlazy\n- b",
    "a thematic break": "- a\n- - -\n- b",
    "one item": "- a\n  - b",
}


@pytest.mark.parametrize("name", list(NOT_ONE_LIST))
def test_only_one_bullet_list_of_items_is_split(name: str) -> None:
    assert last_list_item(NOT_ONE_LIST[name]) == 0


def _cells(strips: list[Strip]) -> list[list[tuple[str, object]]]:
    return [[(char, segment.style) for segment in strip for char in segment.text] for strip in strips]


@pytest.mark.parametrize("name", list(LISTS))
@pytest.mark.parametrize("chunk", [3, 11])
async def test_a_streaming_list_shows_what_rendering_it_whole_shows(
    name: str, chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = LISTS[name]
    app = TranscriptApp()
    async with app.run_test(size=(60, 30)) as pilot:
        view = await _new_view(app, pilot, MarkdownStreamView("Before the list.\n\n"))
        heads: list[str] = []  # the finished items asked for, each frame
        rendered: list[str] = []  # those rendered
        original_head, original_render = view._render_list_head, markdown_stream.render_markdown

        def head_of(head: str, width: int) -> Any:
            heads.append(head)
            monkeypatch.setattr(markdown_stream, "render_markdown", render)
            try:
                return original_head(head, width)
            finally:
                monkeypatch.setattr(markdown_stream, "render_markdown", original_render)

        def render(source: str, *args: Any) -> Any:
            rendered.append(source)
            return original_render(source, *args)

        view._render_list_head = head_of  # type: ignore[method-assign]
        for start in range(0, len(text), chunk):
            view.append(text[start : start + chunk])
            view._flush()  # as the next frame would (waiting for frames made this slow)
            tail = view._tail
            assert tail is not None
            shown = tail.strips[view._width]
            whole = render_markdown(view._splitter.tail, view._width, app.console)
            assert [s.text for s in shown] == [s.text for s in whole], repr(text[: start + chunk])
            assert _cells(shown) == _cells(whole), f"the styles differ after {text[: start + chunk]!r}"
        assert heads, "the items before the last were never rendered apart"
        # each set of finished items was rendered once, however many frames the next one took
        assert sorted(rendered) == sorted(set(heads)), rendered
        renders = view.block_renders
        view.finish()
        await until(pilot, lambda: view.is_settled, what="the answer to settle")
        assert view.block_renders > renders  # the finished list is rendered whole
        final = view._blocks[-1].strips[view._width]
        assert _cells(final) == _cells(render_markdown(text.rstrip("\n"), view._width, app.console))
