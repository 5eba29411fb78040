"""A fenced code block that streams in is highlighted a line at a time, each new line
in the context of the lines before it (issue 36: every line drawn again on every new
line was a third of the answer's own rendering at 50 deltas a second). What it shows
after every flush is what rendering the block so far whole shows."""

from __future__ import annotations

from typing import Any

import pytest
from textual.strip import Strip

from tests.tui.test_transcript_widget import TranscriptApp, _new_view
from tests.waiting import until
from wyckoff_cli.tui.widgets import markdown_stream
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView, render_code_line, render_markdown

BLOCKS = {
    "python": '```python\ndef parse(text: str) -> list[str]:\n    """Split text.\n\n    Keeps `limit`.\n    """\n'
    "    tokens = [t for t in text.split() if t]\n\n\n    if limit is not None:  \n"
    "        tokens = tokens[:limit]\n\treturn tokens  # done\n" + "x = '" + "long " * 40 + "'\n```\n",
    "javascript": "```js\nconst a = `multi\nline ${x}\ntemplate`;\n/* a comment\n   over lines */\nfunction f(y) {\n  return y * 2;\n}\n```\n",
    "bash": "```bash\nfor f in *.py; do\n  echo \"$f\" | sed 's/a/b/'\ndone <<EOF\nheredoc text\nEOF\n```\n",
    "json": '```json\n{\n  "a": [1, 2,\n    3],\n  "b": {"c": null}\n}\n```\n',
    "diff": "```diff\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-old line\n+new line\n context\n```\n",
    "rust": '```rust\nfn main() {\n    let s = r#"raw\nstring"#;\n    println!("{}", s);\n}\n```\n',
    "unknown language": "```not-a-language\nsome text\n  indented\n\nafter a blank\n```\n",
    "no language, tilde fence": "~~~\nplain\n   text   \nmore\n~~~\n",
}


REDRAWN = {"javascript", "rust"}
"""Blocks with a string opened on one line and closed on a later one: the lines before
are lexed otherwise once it closes, and the whole block is drawn again."""


def _whole(view: MarkdownStreamView, console: object) -> list[Strip]:
    """The growing block rendered whole, as the view would without drawing a line at a
    time: an open code block's complete lines, then the line still arriving plain."""
    source, width = view._splitter.tail, view._width
    if not (view._splitter.in_fence and source.startswith(("```", "~~~"))):
        return render_markdown(source, width, console)  # type: ignore[arg-type]
    head, _, partial = source.rpartition("\n")
    if not head:
        return []  # only the opening fence
    strips = render_markdown(head, width, console) if "\n" in head else []  # type: ignore[arg-type]
    if partial:
        strips += render_code_line(partial, width, console)  # type: ignore[arg-type]
    return strips


def _cells(strips: list[Strip]) -> list[list[tuple[str, object]]]:
    """Each cell's character and style (how Rich splits a line into segments may differ)."""
    return [[(char, segment.style) for segment in strip for char in segment.text] for strip in strips]


@pytest.mark.parametrize("name", list(BLOCKS))
@pytest.mark.parametrize("chunk", [0, 5])
async def test_a_streaming_code_block_shows_what_rendering_it_whole_shows(name: str, chunk: int) -> None:
    """`chunk` 0: a line at a time; else that many characters at a time."""
    block = BLOCKS[name]
    body = block[: block.rstrip("\n").rfind("\n") + 1]  # all but the closing fence
    if chunk:
        pieces = [body[i : i + chunk] for i in range(0, len(body), chunk)]
    else:
        pieces = body.splitlines(keepends=True)
    app = TranscriptApp()
    async with app.run_test(size=(60, 30)) as pilot:
        view = await _new_view(app, pilot, MarkdownStreamView("Before the code.\n\n"))
        follows: list[bool] = []
        original = markdown_stream.render_code_head

        def counted(*args: Any) -> Any:
            result = original(*args)
            follows.append(result[2])
            return result

        markdown_stream.render_code_head = counted  # type: ignore[assignment]
        try:
            sent = ""
            for piece in pieces:
                view.append(piece)
                sent += piece
                view._flush()  # as the next frame would (waiting for frames made this slow)
                tail = view._tail
                assert tail is not None
                shown = tail.strips[view._width]
                expected = _whole(view, app.console)
                assert [s.text for s in shown] == [s.text for s in expected], repr(sent)
                assert _cells(shown) == _cells(expected), f"the colours differ after {sent!r}"
        finally:
            markdown_stream.render_code_head = original  # type: ignore[assignment]
        assert any(follows), "no line was drawn on its own"
        if name in REDRAWN:
            assert not all(follows[1:]), "a line lexed otherwise later was not drawn again"
        view.append(block[len(body) :])
        view.finish()
        await until(pilot, lambda: view.is_settled, what="the answer to settle")
        assert view._blocks[-1].strips[view._width] == render_markdown(
            block.rstrip("\n"), view._width, app.console, markdown_stream.DEFAULT_CODE_THEME
        )
