"""A resumed session shows exactly what the person saw live (issue 28): each case is
recorded by a real turn in the app, then resumed in a new app, and the two transcripts
are compared — a `$skill` message without the skill's text, a custom command as
`/NAME ARGS` (not its expansion), a `task` as the task widget, the loop guard's retry
as its notice (not the prompt sent to the model); and `sessions list` titles a
plan-mode session with what the person typed, not the mode's `<system-reminder>`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from textual.widget import Widget

from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat, send, short_typing_pause
from tests.waiting import until
from wyckoff_cli.cli.main import main
from wyckoff_cli.session import requests as rq
from wyckoff_cli.tui.app import WyckoffApp
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.task_call import ChildTranscript, TaskCallView
from wyckoff_cli.tui.widgets.tool_call import ToolCallView

__all__ = ["short_typing_pause"]
Seen = list[tuple[str, str]]


def seen(screen: ChatScreen) -> Seen:
    """The transcript as a person reads it: each entry's kind and text (tool calls by
    widget, name and status; a task's agent transcript as `agent …` entries)."""
    return entries(screen.transcript.children)


def entries(widgets: Iterable[Widget], prefix: str = "") -> Seen:
    shown: Seen = []
    for widget in widgets:
        if isinstance(widget, ChildTranscript):
            shown.extend(entries(widget.children, "agent "))
            continue
        if isinstance(widget, UserMessage):
            shown.append(("you", widget.text))
        elif isinstance(widget, TaskCallView):
            shown.append(("task", f"{widget.agent}: {widget.description} [{widget.status}]"))
        elif isinstance(widget, ToolCallView):
            shown.append(("tool", f"{widget.tool_name} [{widget.status}]"))
        elif isinstance(widget, NoticeLine) and widget.kind in ("retry", "aborted"):
            shown.append((widget.kind, widget.message))
        elif isinstance(widget, MarkdownStreamView):
            shown.append(("answer", widget.markdown.strip()))
    return [(prefix + kind, text) for kind, text in shown]


async def live_then_resumed(
    root: Path, rounds: list[Any], typed: list[str], prepare: Callable[[WyckoffApp], None] | None = None
) -> tuple[Seen, Seen, str]:
    """Type `typed` into a live app, then resume its session in a new one: (what the
    live app showed, what the resumed one shows, the session id)."""
    app, _ = make_app(root, rounds)
    if prepare is not None:
        prepare(app)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        for text in typed:
            await send(pilot, text)
            await until(
                pilot,
                lambda: screen.turn_worker is not None and screen.turn_worker.is_finished,
                what=f"the turn {text!r}",
            )
        live = seen(screen)
        session_id = screen.controller.id
    assert session_id is not None, (screen.turn_worker.state, screen.turn_worker.error)  # type: ignore[union-attr]
    loaded = app.controller.store.load(session_id)
    resumed, _ = make_app(root, [], loaded=loaded)
    if prepare is not None:
        prepare(resumed)
    async with resumed.run_test(size=SIZE) as pilot:
        screen = chat(resumed)
        await until(pilot, lambda: bool(seen(screen)), what="the replayed transcript")
        return live, seen(screen), session_id


async def test_a_skill_mention_replays_as_typed_without_the_skills_text(workspace: Path) -> None:
    skill = workspace / ".wyckoff" / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release\ndescription: How to cut a release\n---\nSTEP ONE: bump the version.\n"
    )
    live, resumed, _ = await live_then_resumed(
        workspace, [{"text": "Bumping the version first."}], ["cut a release with $release"]
    )
    assert ("you", "cut a release with $release") in live
    assert resumed == live
    assert not any("STEP ONE" in text for _, text in resumed)


async def test_a_custom_command_replays_as_typed_not_as_its_expansion(workspace: Path) -> None:
    commands = workspace / ".wyckoff" / "commands"
    commands.mkdir(parents=True)
    # `audit`, not `review`: a custom command never replaces the built-in /review (commands.prefer)
    (commands / "audit.md").write_text("Review $ARGUMENTS carefully.\nList every problem you find.\n")
    live, resumed, _ = await live_then_resumed(workspace, [{"text": "Looks fine."}], ["/audit calc.py"])
    assert ("you", "/audit calc.py") in live
    assert resumed == live
    assert not any("carefully" in text for _, text in resumed)


async def test_a_task_call_replays_as_the_task_widget(workspace: Path) -> None:
    (workspace / "notes.md").write_text("hello\n", encoding="utf-8")
    task = {
        "name": "task",
        "args": {"agent": "explore", "description": "find the notes", "prompt": "Find them"},
    }
    rounds = [
        {"tool_calls": [task]},
        {"tool_calls": [{"name": "list_dir", "args": {"path": "."}}]},  # the child
        {"text": "The notes are in notes.md"},  # the child's answer
        {"text": "Found them."},
    ]

    def with_agents(app: WyckoffApp) -> None:
        app.controller.builder.subagents = True

    live, resumed, _ = await live_then_resumed(workspace, rounds, ["where are the notes?"], with_agents)
    assert ("task", "explore: find the notes [ok]") in live
    assert ("agent tool", "list_dir [ok]") in live and ("agent answer", "The notes are in notes.md") in live
    assert resumed == live
    assert not any(kind == "tool" and text.startswith("task ") for kind, text in resumed)


async def test_the_loop_guard_retry_replays_as_its_notice(workspace: Path) -> None:
    (workspace / "app.py").write_text("print(1)\n")
    rounds = [
        {"text": "It prints 1."},
        {"tool_calls": [{"name": "read_file", "args": {"path": "app.py"}}]},
        {"text": "It prints 1 (checked)."},
    ]
    live, resumed, _ = await live_then_resumed(workspace, rounds, ["What does @app.py print?"])
    retry = ("retry", "Reminded the model to call read_file (retry 1 of 2)")
    assert retry in live
    assert resumed == live
    assert not any("Before you answer" in text for _, text in resumed)


async def test_a_plan_mode_session_is_listed_by_what_was_typed(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def plan(app: WyckoffApp) -> None:
        app.controller.handle_now(rq.SetMode("plan"))

    live, resumed, session_id = await live_then_resumed(
        workspace, [{"text": "Here is the plan."}], ["plan the refactor"], plan
    )
    assert ("you", "plan the refactor") in live and ("you", "plan the refactor") in resumed
    capsys.readouterr()
    assert main(["sessions", "list", "--cwd", str(workspace), "--json"]) == 0
    listed = {item["id"]: item for item in json.loads(capsys.readouterr().out)}
    assert listed[session_id]["title"] == "plan the refactor"
    assert main(["sessions", "list", "--cwd", str(workspace)]) == 0
    table = capsys.readouterr().out
    assert "plan the refactor" in table and "system-reminder" not in table


async def test_a_truthful_answer_retry_says_what_was_sent_live_and_resumed(workspace: Path) -> None:
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    edit = {"name": "edit_file", "args": {"path": "calc.py", "old": "a - b", "new": "a + b"}}
    rounds = [
        {"tool_calls": [edit]},
        {"text": "Sure."},
        {"text": "Plan mode keeps files read-only: apply a + b."},
    ]

    def plan(app: WyckoffApp) -> None:
        app.controller.handle_now(rq.SetMode("plan"))

    live, resumed, _ = await live_then_resumed(workspace, rounds, ["fix add()"], plan)
    retries = [text for kind, text in live if kind == "retry"]
    assert len(retries) == 1 and retries[0].startswith(
        "Asked the model to answer again, truthfully: edit_file("
    )
    assert "call edit" not in retries[0]
    assert resumed == live
