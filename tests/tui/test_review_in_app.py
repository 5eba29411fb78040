"""`/review` in the app: the review runs in the command worker and its findings show
as Markdown in the transcript."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Markdown

from tests.runtime.review.support import finding, make_repo, plant_bug
from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat, send, settle
from tests.waiting import until


async def test_review_shows_the_confirmed_findings(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    plant_bug(root)
    rounds = [
        {"tool_calls": [{"name": "report_finding", "args": finding()}]},  # the reviewer
        {"text": "Reported 1 finding."},
        {"tool_calls": [{"name": "confirm_finding", "args": {"reason": "line 3 divides by len - 1"}}]},
    ]
    app, provider = make_app(root, rounds)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "/review")
        shown = await until(
            pilot,
            lambda: [w for w in screen.query(Markdown) if "review-output" in w.classes],
            what="the review",
        )
        await settle(pilot, screen)
        assert "`calc.py:3` average divides by len - 1" in shown[0].source
        assert "1 finding (1 high)" in shown[0].source
    assert provider.remaining == 0
    tools_offered = {spec.name for spec in provider.requests[0].tools}
    assert tools_offered == {"read_file", "list_dir", "glob", "grep", "changed_file", "report_finding"}
