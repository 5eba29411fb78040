"""Snapshot of the transcript mid-stream: a user message, then an answer whose
fenced code block is still arriving (its last line not yet highlighted)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from tests.waiting import until
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.transcript import RenderableView, Transcript

PARTIAL_ANSWER = """\
## Fix the parser

The function **parse** now accepts an optional `limit`, and the caller passes it through:

- read the config once
- cache the result
  - invalidate on change

```python
def parse(text: str, limit: int | None = None) -> list[str]:
    \"\"\"Split text into tokens.\"\"\"
    tokens = [t for t in text.split() if t]
    if limit is not None:
        tokens = tok"""


class MidStreamApp(App[None]):
    CSS = """
    RenderableView { background: $boost; padding: 0 1; margin-bottom: 1; }
    MarkdownStreamView { padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        yield Transcript(
            RenderableView(Text("Make parse() take a limit.", style="bold")),
            MarkdownStreamView(PARTIAL_ANSWER),
        )


async def _wait_for_first_flush(pilot: Pilot[Any]) -> None:
    view = pilot.app.query_one(MarkdownStreamView)
    await until(pilot, lambda: view.flushes and view.size.height == view.line_count)
    await pilot.pause()


def test_mid_stream_answer_with_a_code_block(snap_compare: Any) -> None:
    assert snap_compare(MidStreamApp(), terminal_size=(80, 24), run_before=_wait_for_first_flush)
