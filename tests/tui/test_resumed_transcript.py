"""A resumed session looks as it did live: thinking durations, diffs and times saved
with the messages, the "Interrupted" marker, and a compaction summary folded into one
entry that unfolds to the summary and the archived messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from tests.tui.test_app_snapshots import DIFF, app_at_rest, settle
from tests.waiting import until
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.storage.chatlog import write_archive
from wyckoff_cli.tui.replay import SummaryEntry, replay_history, widgets_for
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.thinking import ThinkingPane
from wyckoff_cli.tui.widgets.tool_call import ToolCallView, plain_text

SUMMARY = (
    "<conversation-summary>\nThe conversation so far was compacted: 6 earlier messages were replaced.\n\n"
    "The user asked to fix `parse()`; the tests were read.\n</conversation-summary>"
)


def history(archive: str | None = None) -> list[Message]:
    meta: dict[str, Any] = {"synthetic": "compaction", "replaced_messages": 6}
    if archive:
        meta["archive"] = archive
    call = ToolCallPart("call_1", "edit_file", {"path": "src/parser.py", "old": "a", "new": "b"})
    return [
        Message.user(SUMMARY, **meta),
        Message.user(
            "<system-reminder>The permission mode is now auto-edit.</system-reminder>\n\nNow add the limit"
        ),
        Message(
            "assistant",
            (ThinkingPart("The limit is never passed through."), TextPart("I'll edit the parser."), call),
            meta={"thinking_ms": 2300},
        ),
        Message.tool_result(
            "call_1",
            "edit_file",
            "Edited src/parser.py",
            elapsed_ms=40,
            display={"diff": DIFF, "path": "src/parser.py"},
        ),
        Message("assistant", (TextPart("Now I'll run the te"),), meta={"interrupted": True}),
    ]


async def test_replay_keeps_durations_diffs_interruptions_and_folds_the_summary(tmp_path: Path) -> None:
    async with app_at_rest().run_test(size=(100, 40)):
        widgets = widgets_for(history())
        assert isinstance(widgets[0], SummaryEntry)
        assert "Earlier conversation (summarised)" in plain_text(widgets[0].content)
        assert [w.text for w in widgets if isinstance(w, UserMessage)] == ["Now add the limit"]
        pane = next(w for w in widgets if isinstance(w, ThinkingPane))
        assert "Thought for 2.3s" in plain_text(pane.content)
        view = next(w for w in widgets if isinstance(w, ToolCallView))
        assert (
            view.elapsed_ms == 40
            and view.display_data
            and "+def parse(text, limit=None):" in plain_text(view.render_call())
        )
        assert isinstance(widgets[-1], NoticeLine) and widgets[-1].message == "Interrupted."


async def test_the_summary_unfolds_to_the_archived_messages(tmp_path: Path) -> None:
    archive = tmp_path / "001.jsonl"
    write_archive(
        archive,
        "s1",
        [Message.user("fix parse please").to_dict(), Message.assistant("Reading the tests.").to_dict()],
    )
    app = app_at_rest()
    async with app.run_test(size=(100, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ChatScreen)
        replay_history(screen.transcript, history(str(archive)))
        entry = await until(
            pilot, lambda: screen.query(SummaryEntry).first() if screen.query(SummaryEntry) else None
        )
        entry.open()

        def shown() -> str:
            return "\n".join(
                "\n".join(v.rendered_lines())
                for v in screen.transcript.children
                if hasattr(v, "rendered_lines")
            )

        await until(
            pilot,
            lambda: (
                "fix parse please" in [w.text for w in screen.query(UserMessage)]
                and "The user asked to fix" in shown()
            ),
            observe=shown,
        )
        users = [w.text for w in screen.query(UserMessage)]
        assert "fix parse please" in users
        assert "The user asked to fix" in shown()


def test_resumed_session_with_a_diff_thinking_and_a_summary(snap_compare: Any) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        screen = pilot.app.screen
        assert isinstance(screen, ChatScreen)
        replay_history(screen.transcript, history())
        await settle(pilot)

    assert snap_compare(app_at_rest(), terminal_size=(100, 32), run_before=run_before)
