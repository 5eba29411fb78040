"""Regression: `finish()` must repaint the last line of the answer.

When the final text only changed the last line of the growing block (e.g. the closing
"." of a sentence, or the rest of a code block), the view computed its repaint region
from the old growing block against itself and repainted nothing, so the answer's last
characters never reached the screen."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.geometry import Region

from tests.waiting import until
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView


class OneAnswer(App[None]):
    def compose(self) -> ComposeResult:
        yield MarkdownStreamView()


async def test_finish_repaints_the_changed_last_line() -> None:
    app = OneAnswer()
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(MarkdownStreamView)
        view.append("Everything is Finished")
        await until(pilot, lambda: view.flushes)
        regions: list[Region] = []
        original = view.refresh

        def spy(*regions_: Region, **kwargs: Any) -> Any:
            regions.extend(regions_)
            return original(*regions_, **kwargs)

        view.refresh = spy  # type: ignore[method-assign]
        view.append(".")
        view.finish()
        last_line = view.line_count - 1
        assert view.rendered_lines()[last_line].rstrip() == "Everything is Finished."
        assert any(r.y <= last_line < r.y + r.height for r in regions), regions
