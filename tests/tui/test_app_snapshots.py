"""Snapshots of the main screens: chat mid-stream with the status bar, the approval
modal with a diff, and the setup screen. Update with `pytest --snapshot-update` after
looking at the new SVGs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.tui.support import make_app
from tests.tui.test_chat_flows import working
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.events import ApprovalRequested
from wyckoff_cli.tui.frame_clock import clock_of
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.screens.setup import SetupNeeds, SetupScreen
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.status_bar import StatusBar

ROOT = Path("/home/dev/project")
SIZE = (100, 32)
ANSWER = """\
I found the bug: `parse()` ignores its **limit**.

```python
def parse(text: str, limit: int | None = None) -> list[str]:
    tokens = text.split()
    return tokens[:limit]
```

Next I will run the tests"""

DIFF = """\
--- a/src/parser.py
+++ b/src/parser.py
@@ -1,3 +1,4 @@
-def parse(text):
-    return text.split()
+def parse(text, limit=None):
+    tokens = text.split()
+    return tokens[:limit]
"""


def app_at_rest() -> Any:
    app, _ = make_app(ROOT, [], [])
    return app


def at_rest(app: Any) -> bool:
    """Nothing left to draw: no frame asked for, no worker running, every answer on the
    screen flushed and laid out."""
    views = list(app.screen.query(MarkdownStreamView))
    return (
        not clock_of(app)._pending
        and not working(app)
        and all(
            not v._dirty and v._width > 0 and v.size.height == v._layout_height(v.line_count) for v in views
        )
    )


async def settle(pilot: Pilot[None]) -> None:
    await until(pilot, lambda: at_rest(pilot.app), what="the screen to have drawn everything it was given")
    await pilot.pause()


def test_chat_mid_stream_with_status_bar(snap_compare: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(StatusBar, "spin", False)  # the spinner's frame and seconds vary

    async def run_before(pilot: Pilot[None]) -> None:
        screen = pilot.app.screen
        assert isinstance(screen, ChatScreen)
        screen.add_user("Why does parse() ignore the limit?")
        router = screen.router
        router.handle(ev.ModelStart(1, "scripted:test"))
        router.handle(ev.ThinkingDelta("The limit argument is never used in parse."))
        router.handle(ev.ThinkingDone("The limit argument is never used in parse.", 1200))
        usage = ev.UsageReported("scripted:test", 12_000, 300, 9_000, 2_000)
        screen.status.observe(usage)  # the controller counts every event before the screen sees it
        router.handle(usage)
        for start in range(0, len(ANSWER), 4):
            router.handle(ev.TextDelta(ANSWER[start : start + 4]))
        await settle(pilot)

    assert snap_compare(app_at_rest(), terminal_size=SIZE, run_before=run_before)


def test_approval_modal_with_a_diff(snap_compare: Any) -> None:
    request = ApprovalRequested(
        "call_1",
        "edit_file",
        {"path": "src/parser.py", "old": "def parse(text):", "new": "def parse(text, limit=None):"},
        {"kind": "diff", "diff": DIFF, "reason": "default mode asks before editing files"},
        "edit_file(src/parser.py)",
        editable_fields=["new"],
    )

    async def run_before(pilot: Pilot[None]) -> None:
        await pilot.app.push_screen(ApprovalScreen(request, ROOT, pause=0))
        await settle(pilot)

    assert snap_compare(app_at_rest(), terminal_size=SIZE, run_before=run_before)


def test_setup_screen(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        needs = SetupNeeds(
            model="anthropic:claude-sonnet-4-5",
            provider="anthropic",
            problem="no API key for anthropic:claude-sonnet-4-5: set the environment variable ANTHROPIC_API_KEY",
            have_key=lambda provider: provider == "gemini",
            save_key=lambda provider, key: Path("/home/dev/.config/wyckoff/credentials.toml"),
            recheck=lambda: None,
        )
        screen = SetupScreen(needs)
        await pilot.app.push_screen(screen)
        await settle(pilot)

    assert snap_compare(app_at_rest(), terminal_size=SIZE, run_before=run_before)
