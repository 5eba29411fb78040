"""The model knows the mode: a note when it changes, only the tools the mode allows,
and `exit_plan` to present a plan for approval."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import make_app, make_controller
from tests.tui.test_chat_flows import chat, past_pause, send, settle, wait_for_screen
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.session import requests as rq
from wyckoff_cli.tools.plan import EXIT_PLAN, mode_note
from wyckoff_cli.tui import typing_guard
from wyckoff_cli.tui.screens.plan_approval import PlanApprovalScreen
from wyckoff_cli.tui.widgets.entries import UserMessage

SIZE = (100, 40)
PLAN = "1. Add `limit` to `parse()`.\n2. Run the tests."


@pytest.fixture(autouse=True)
def short_typing_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(typing_guard, "PAUSE_SECONDS", 0.3)


async def run(controller: object, text: str) -> list[ev.RuntimeEvent]:
    return [event async for event in controller.handle(rq.Turn(text))]  # type: ignore[attr-defined]


def names(tools: tuple[object, ...]) -> set[str]:
    return {t.name for t in tools}  # type: ignore[attr-defined]


async def test_each_mode_offers_only_what_it_allows_and_is_announced_once(tmp_path: Path) -> None:
    controller, provider = make_controller(
        tmp_path, [{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "d"}]
    )
    await run(controller, "first")
    default_tools = names(provider.requests[0].tools)
    assert {"edit_file", "write_file", "run_shell"} <= default_tools and EXIT_PLAN not in default_tools
    assert provider.requests[0].messages[-1].text == "first"  # default mode needs no note
    controller.handle_now(rq.SetMode("plan"))
    await run(controller, "second")
    plan_tools = names(provider.requests[1].tools)
    assert not plan_tools & {"edit_file", "write_file", "run_shell"}
    assert {"read_file", "grep", "glob", EXIT_PLAN} <= plan_tools
    sent = provider.requests[1].messages[-1].text
    assert sent == f"{mode_note('plan')}\n\nsecond" and "exit_plan" in sent
    await run(controller, "third")
    assert provider.requests[2].messages[-1].text == "third"  # told once
    # the earlier messages are sent unchanged, so the cached prefix holds
    assert [m.text for m in provider.requests[2].messages[:3]] == [
        m.text for m in provider.requests[1].messages
    ]
    assert provider.requests[2].system_prompt == provider.requests[0].system_prompt
    controller.handle_now(rq.SetMode("auto-edit"))
    await run(controller, "fourth")
    assert provider.requests[3].messages[-1].text.startswith(mode_note("auto-edit"))
    assert "edit_file" in names(provider.requests[3].tools)


async def test_approving_the_plan_switches_the_mode_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    rounds = [
        {"tool_calls": [{"name": EXIT_PLAN, "args": {"plan": PLAN}}]},
        {"tool_calls": [{"name": "edit_file", "args": {"path": "a.txt", "old": "old", "new": "new"}}]},
        {"text": "Done."},
    ]
    app, provider = make_app(tmp_path, rounds)
    app.controller.handle_now(rq.SetMode("plan"))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "plan the change")
        dialog = await wait_for_screen(pilot, PlanApprovalScreen)
        assert "Add" in str(dialog.request.args["plan"])
        await past_pause(pilot)
        await pilot.press("1")
        await settle(pilot, screen)
        assert app.controller.mode == "auto-edit" and screen.status.mode == "auto-edit"
        result = provider.requests[1].messages[-1]
        assert "approved" in result.text and "auto-edit" in result.text
        assert "edit_file" in names(provider.requests[1].tools)  # offered from the next round
        assert (tmp_path / "a.txt").read_text() == "new\n"  # auto-edit: ran without asking
        # the transcript shows what the person typed, never the note
        assert [u.text for u in screen.query(UserMessage)] == ["plan the change"]


async def test_rejecting_the_plan_with_notes_stays_in_plan_mode(tmp_path: Path) -> None:
    rounds = [{"tool_calls": [{"name": EXIT_PLAN, "args": {"plan": PLAN}}]}, {"text": "Revised."}]
    app, provider = make_app(tmp_path, rounds)
    app.controller.handle_now(rq.SetMode("plan"))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "plan it")
        await wait_for_screen(pilot, PlanApprovalScreen)
        await past_pause(pilot)
        await pilot.press("n", *"add a test first", "enter")
        await settle(pilot, screen)
        assert app.controller.mode == "plan"
        answer = provider.requests[1].messages[-1]
        assert answer.is_error and "add a test first" in answer.text
        assert "edit_file" not in names(provider.requests[1].tools)


async def test_the_plan_dialog_renders_tables_and_links_like_the_transcript(tmp_path: Path) -> None:
    from collections import Counter

    from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView

    cells = ["storage/ui_config.py", "notifications-and-hyperlinks", "allow-passthrough-in-tmux"]
    plan = (
        "1. Change these files:\n\n| file | what | why it matters for every user |\n|---|---|---|\n"
        f"| {' | '.join(cells)} |\n\nSee [the guide](https://example.com/guide)."
    )
    rounds = [{"tool_calls": [{"name": EXIT_PLAN, "args": {"plan": plan}}]}, {"text": "ok"}]
    app, _ = make_app(tmp_path, rounds)
    app.controller.handle_now(rq.SetMode("plan"))
    async with app.run_test(size=(60, 30)) as pilot:
        await send(pilot, "plan it")
        dialog = await wait_for_screen(pilot, PlanApprovalScreen)
        view = dialog.query_one(MarkdownStreamView)
        await until(pilot, lambda: view.is_settled, what="the plan to be rendered")
        shown = "".join("".join(line.split()) for line in view.rendered_lines())
        # wrapped in a narrow dialog (cells continue on the next lines), never cut with "…"
        assert Counter(shown) >= Counter("".join(cells)) and "…" not in shown
        assert "storage/ui_con" in shown and "allow-passthrou" in shown
        assert "(https://example.com/guide)" in shown  # hyperlinks are off in the tests: URL shown
