"""The app in a worktree says so in its transcript, and after a turn that changed its
files, how to review and merge them (issue 29). Real git; the scripted provider."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.tui.support import make_app
from tests.tui.test_chat_flows import keys_work
from tests.waiting import until
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.widgets.entries import NoticeLine
from wyckoff_cli.tui.widgets.prompt_input import PromptInput

SIZE = (150, 36)
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=T"]


def notices(screen: Any) -> list[str]:
    return [n.message for n in screen.query(NoticeLine)]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=root, check=True)
    (root / "calc.py").write_text("x = 1\n")
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "first"], cwd=root, check=True)
    return root


WRITE = {
    "text": "Writing.",
    "tool_calls": [{"name": "write_file", "args": {"path": "new.txt", "content": "n\n"}}],
}


async def send(pilot: Any, text: str) -> None:
    prompt = pilot.app.screen.query_one(PromptInput)
    prompt.load_text(text)
    prompt.focus()
    await pilot.press("enter")


def answered(chat: Any, text: str) -> bool:
    done = chat.router.last_done
    return done is not None and done.text == text


async def test_the_start_line_and_after_a_changing_turn_the_review_line(repo: Path) -> None:
    from wyckoff_cli.runtime.worktrees import create_worktree

    made = create_worktree(repo, "ui")
    app, _ = make_app(
        made.path, [{"text": "Nothing changed."}, WRITE, {"text": "Wrote it."}, {"text": "Again."}]
    )
    async with app.run_test(size=SIZE) as pilot:
        chat = app.screen
        start = f"Working in worktree ui ({made.path}) on the branch wyckoff/ui; your files in {repo} are not touched"
        await until(pilot, lambda: start in notices(chat), what="the start line")

        await send(pilot, "look")
        await until(pilot, lambda: answered(chat, "Nothing changed."), what="the first answer")
        await pilot.pause()
        assert not [n for n in notices(chat) if n.startswith("Worktree ui:")]  # nothing to review yet

        await send(pilot, "write new.txt")
        await until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval dialog")
        await until(pilot, lambda: keys_work(app), what="the dialog past its typing pause")
        await pilot.press("y")
        review = (
            f"Worktree ui: 1 file changed on wyckoff/ui. Review: /worktree diff ui; merge, from {repo}: "
            "wyckoff worktree merge ui"
        )
        await until(pilot, lambda: review in notices(chat), what="the review line")
        assert (made.path / "new.txt").exists() and not (repo / "new.txt").exists()

        await send(pilot, "again")
        await until(pilot, lambda: answered(chat, "Again."), what="the third answer")
        await until(
            pilot, lambda: not [w for w in app.workers if w.group == "worktree-review" and not w.is_finished]
        )
        assert notices(chat).count(review) == 1  # the same changes: said once


async def test_outside_a_worktree_there_is_no_worktree_line(workspace: Path) -> None:
    app, _ = make_app(workspace, [])
    async with app.run_test(size=SIZE) as pilot:
        chat = app.screen
        await until(pilot, lambda: any(n.startswith("Wyckoff ·") for n in notices(chat)), what="the greeting")
        assert not [n for n in notices(chat) if n.startswith(("Working in worktree", "Worktree "))]
