"""A long live session folds its oldest rounds into "↑ N earlier messages" (issue 36),
and expanding them brings every message back, in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tests.tui.support import make_app
from tests.tui.test_chat_flows import chat, send, settle
from tests.waiting import until
from wyckoff_cli.tui import entry_batch, transcript_fold
from wyckoff_cli.tui.replay import LoadEarlier
from wyckoff_cli.tui.widgets.entries import UserMessage
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.tool_call import ToolCallView
from wyckoff_cli.tui.widgets.transcript import Transcript

SIZE = (100, 40)
ROUNDS = 40
FINAL = "All **forty** files are read; the last one was `f39.txt`."


@pytest.fixture(autouse=True)
def small_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transcript_fold, "FOLD_AT", 30)
    monkeypatch.setattr(transcript_fold, "KEEP", 8)
    # a batch of entries every frame, not every MOUNT_INTERVAL: about a round's entries
    # a batch, as the bounds below count (tests/tui/test_entry_batch.py folds with
    # batches of the default size)
    monkeypatch.setattr(entry_batch, "MOUNT_INTERVAL", 0.0)


def script(rounds: int) -> list[Any]:
    calls = [
        {"text": f"Reading file {n}.", "tool_calls": [{"name": "read_file", "args": {"path": f"f{n}.txt"}}]}
        for n in range(rounds)
    ]
    return [*calls, {"text": FINAL, "chunk_size": 5}]


def project(tmp_path: Path, rounds: int) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".wyckoff").mkdir()
    (root / ".wyckoff" / "config.toml").write_text(f"max_tool_rounds = {rounds + 1}\n", encoding="utf-8")
    for n in range(rounds):
        (root / f"f{n}.txt").write_text(f"content of file {n}\n", encoding="utf-8")
    return root


def entries(transcript: Transcript) -> list[tuple[str, str]]:
    """What the transcript shows, entry by entry: (kind, text)."""
    shown: list[tuple[str, str]] = []
    for child in transcript.children:
        if isinstance(child, ToolCallView):
            shown.append(("call", f"{child.tool_name} {child.args.get('path')} {child.status}"))
        elif isinstance(child, MarkdownStreamView):
            shown.append(("answer", child.markdown))
        elif isinstance(child, UserMessage):
            shown.append(("user", child.text))
        elif isinstance(child, LoadEarlier):
            shown.append(("earlier", str(len(child.messages))))
    return shown


async def expand_all(pilot: Pilot[None], transcript: Transcript) -> None:
    while earlier := list(transcript.query(LoadEarlier)):
        earlier[0].show_earlier()
        await until(pilot, lambda: not earlier[0].is_attached, what="the earlier messages to be shown")
    await pilot.pause()


async def test_a_long_turn_folds_old_rounds_and_expanding_shows_every_message(tmp_path: Path) -> None:
    app, _ = make_app(project(tmp_path, ROUNDS), script(ROUNDS))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "read every file")
        await settle(pilot, chat(app))
        screen = chat(app)
        transcript = screen.transcript
        assert screen.fold.folds >= 2
        shown = entries(transcript)
        # bounded: never more than FOLD_AT entries besides the fold itself (and the
        # entries kept fill more than the screen: nothing on screen was folded)
        assert len(transcript.children) <= transcript_fold.FOLD_AT + 2
        assert transcript.virtual_size.height > transcript.size.height
        assert shown[0][0] == "earlier"
        assert shown[-1] == ("answer", FINAL)
        assert not screen.router.tools or all(view.is_attached for view in screen.router.tools.values())
        # the newest rounds are the live entries, completed
        assert ("call", f"read_file f{ROUNDS - 1}.txt ok") in shown

        await expand_all(pilot, transcript)
        shown = entries(transcript)
        expected: list[tuple[str, str]] = [("user", "read every file")]
        for n in range(ROUNDS):
            expected += [("answer", f"Reading file {n}."), ("call", f"read_file f{n}.txt ok")]
        expected.append(("answer", FINAL))
        assert shown == expected
        first_call = transcript.children[2]
        assert isinstance(first_call, ToolCallView)
        assert "content of file 0" in first_call.result


async def test_no_fold_while_the_person_reads_above(tmp_path: Path) -> None:
    rounds = script(ROUNDS)
    long_text = "\n\n".join(f"Paragraph {n} of a long first answer." for n in range(40))
    # the first round shows a screenful, then the model takes its time: the person scrolls up
    rounds[0] = [{"text": long_text}, {"sleep": 3.0}, *[{"tool_call": c} for c in rounds[0]["tool_calls"]]]
    app, _ = make_app(project(tmp_path, ROUNDS), rounds)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        transcript = screen.transcript
        await send(pilot, "read every file")
        await until(pilot, lambda: transcript.max_scroll_y > 10, what="a screenful of the first round")
        transcript.scroll_home(animate=False)
        await until(pilot, lambda: not transcript.following, what="the transcript to stop following")
        assert not screen.router.tools  # still in the first round's model call
        await settle(pilot, screen)
        assert not transcript.following
        assert screen.fold.folds == 0
        assert not transcript.query(LoadEarlier)
        assert [kind for kind, _ in entries(transcript)].count("call") == ROUNDS


async def test_a_short_session_never_folds(tmp_path: Path) -> None:
    app, _ = make_app(project(tmp_path, 5), script(5))
    async with app.run_test(size=SIZE) as pilot:
        await send(pilot, "read every file")
        await settle(pilot, chat(app))
        assert chat(app).fold.folds == 0
        assert entries(chat(app).transcript)[-1] == ("answer", FINAL)
