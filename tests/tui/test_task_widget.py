"""The app shows a `task` as one widget: the agent and description, a live line of
what the child does, the child's own transcript when expanded, its approvals in the
dialog naming the agent, and its cost in the status bar and `/cost`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.tui.support import make_app
from tests.tui.test_chat_flows import (
    SIZE,
    chat,
    past_pause,
    send,
    settle,
    shell_tool,
    short_typing_pause,
    wait_for_screen,
)
from tests.waiting import until
from wyckoff_cli.session import requests as rq
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.task_call import TaskCallView
from wyckoff_cli.tui.widgets.tool_call import ToolCallView, plain_text

USAGE = {"input_tokens": 2000, "output_tokens": 100}
__all__ = ["short_typing_pause"]  # the chat tests' shorter typing pause, for these tests too


def task(agent: str, prompt: str, description: str) -> dict[str, Any]:
    return {"name": "task", "args": {"agent": agent, "description": description, "prompt": prompt}}


async def test_a_task_widget_shows_the_child_live_and_expanded(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hello\n", encoding="utf-8")
    rounds = [
        {"tool_calls": [task("explore", "Find the notes", "find the notes")], "usage": USAGE},
        {"tool_calls": [{"name": "list_dir", "args": {"path": "."}}], "usage": USAGE},  # the child
        {"text": "The notes are in notes.md:1", "usage": USAGE, "delay": 0.1, "chunk_size": 3},
        {"text": "Found them.", "usage": USAGE},
    ]
    app, _ = make_app(tmp_path, rounds)
    app.controller.builder.subagents = True
    app.controller.price = lambda model, usage: (usage.input_tokens / 1e6, 0.0)  # type: ignore[method-assign]
    app.controller.status.price = app.controller.price
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "where are the notes?")
        lines: list[str] = []

        def live_line_seen() -> bool:
            found = screen.query(TaskCallView)
            if found and found.first().status == "running":
                lines.append(found.first().live_line())
            return any(line.startswith("explore: ") for line in lines)

        await until(
            pilot, live_line_seen, what="the task's live line naming the agent", observe=lambda: lines[-3:]
        )
        await settle(pilot, screen)
        found = screen.query(TaskCallView)
        view: TaskCallView | None = found.first() if found else None
        assert view is not None and view.status == "ok"
        assert any(line.startswith("explore: ") for line in lines)
        header = plain_text(view.render_call())
        assert "task · explore" in header and "find the notes" in header
        assert "The notes are in notes.md:1" in header and "[explore-" in header
        # the child's transcript, hidden until expanded, with the same widgets
        assert view.box.has_class("-hidden")
        inner_tools = list(view.box.query(ToolCallView))
        assert [t.tool_name for t in inner_tools] == ["list_dir"] and inner_tools[0].status == "ok"
        assert view.box.query(MarkdownStreamView)
        view.focus()
        await pilot.press("enter")
        assert not view.box.has_class("-hidden")
        # costs: the session's total includes the child, the bar shows its share
        status = app.controller.status
        assert status.input_tokens == 8000 and status.per_agent["explore"].input_tokens == 4000
        assert dict(status.segments())["agents"] == "main $0.0040 · explore $0.0040"
        cost = [e async for e in app.controller.handle(rq.Cost())][0]
        rows = {row[0]: row for row in cost.rows}  # type: ignore[attr-defined]
        assert rows["agent explore"][2] == "4,000" and rows["total"][2] == "8,000"
        assert all(len(row) == len(cost.columns) for row in cost.rows)  # type: ignore[attr-defined]


async def test_a_childs_approval_opens_the_dialog_naming_the_agent(tmp_path: Path) -> None:
    ran: list[dict[str, Any]] = []
    rounds = [
        {"tool_calls": [task("general", "Run make", "run the build")]},
        {"tool_calls": [{"name": "run_shell", "args": {"command": "make"}}]},  # the child
        {"text": "built"},
        {"text": "done"},
    ]
    app, _ = make_app(tmp_path, rounds, [shell_tool(ran)])
    app.controller.builder.subagents = True
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "build it")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        assert modal.agent == "general" and modal.request.name == "run_shell"
        title = modal.query_one("#title")
        assert "asked by the general agent" in str(title.render())
        await past_pause(pilot)
        await pilot.press("y")
        await settle(pilot, screen)
        assert ran == [{"command": "make"}]
        view = screen.query_one(TaskCallView)
        assert view.status == "ok" and view.result.startswith("built")
