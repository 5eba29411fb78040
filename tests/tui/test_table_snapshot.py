"""Snapshots of an answer with a wide table and links at 80 columns: the grid with
wrapped and folded cells, a table stacked as records, and links shown as `text (url)`."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.pilot import Pilot

from tests.waiting import until
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.transcript import Transcript

ANSWER = """\
See [the configuration guide](https://example.com/docs/config#ui) and https://example.org/faq.

| Setting | What it does | Default | Type | Since | Notes | Example |
|---|---|---|---|---|---|---|
| hyperlinks | Whether links are emitted as OSC 8 escape sequences | auto | string | 0.4.0 | Inside tmux this needs terminal-features | `hyperlinks = "on"` |
| notifications | How the app tells you a turn finished | auto | string | 0.4.0 | bell is the fallback | `notifications = "bell"` |

| c1 | c2 | c3 | c4 | c5 | c6 | c7 | c8 | c9 | c10 | c11 | c12 |
|---|---|---|---|---|---|---|---|---|---|---|---|
| alpha-one | bravo-two | charlie-three | delta-four | echo-five | foxtrot-six | golf-seven | hotel-eight | india-nine | juliet-ten | kilo-eleven | lima-twelve |
"""


class TableApp(App[None]):
    CSS = "MarkdownStreamView { padding: 0 1; }"
    hyperlinks = False  # links as `text (url)`, which a snapshot can show

    def compose(self) -> ComposeResult:
        view = MarkdownStreamView(ANSWER)
        view.finish()
        yield Transcript(view)


async def _settled(pilot: Pilot[Any]) -> None:
    view = pilot.app.query_one(MarkdownStreamView)
    await until(pilot, lambda: view.is_settled and view.size.height == view.line_count)
    pilot.app.query_one(Transcript).scroll_home(animate=False)
    await pilot.pause()


def test_wide_table_and_links_at_80_columns(snap_compare: Any) -> None:
    assert snap_compare(TableApp(), terminal_size=(80, 50), run_before=_settled)
