"""Background sessions in the app: the status bar's waiting mark, `/agents`, and the
attached screen answering an approval over a real socket (issue 29)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Static

from tests.tui.support import make_app
from tests.waiting import until
from wyckoff_cli.core import events as ev
from wyckoff_cli.session.channel import ChannelServer, event_message
from wyckoff_cli.storage.running import RunningRegistry, RunningSession, now_iso, process_start, socket_path
from wyckoff_cli.tui.attach_app import AttachApp
from wyckoff_cli.tui.screens.agents import AgentsScreen
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.screens.attach import AttachScreen
from wyckoff_cli.tui.widgets.entries import NoticeLine
from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.status_bar import StatusBar

SIZE = (130, 36)


def live_entry(root: Path, session_id: str, **changes: Any) -> RunningSession:
    """An entry whose process is alive (this test's own, so `ps` believes it)."""
    entry = RunningSession(
        session_id,
        os.getpid(),
        str(root),
        str(root),
        "scripted:x",
        now_iso(),
        pid_start=process_start(os.getpid()),
    )
    for key, value in changes.items():
        setattr(entry, key, value)
    RunningRegistry().write(entry)
    return entry


def bar(app: Any) -> str:
    return str(app.screen.query_one(StatusBar).render())


def notices(screen: Any) -> str:
    return "\n".join(n.message for n in screen.query(NoticeLine))


def answer(screen: Any) -> str:
    done = screen.router.last_done
    return str(done.text) if done is not None and screen.query(MarkdownStreamView) else ""


async def test_a_session_that_starts_waiting_shows_in_the_status_bar(workspace: Path) -> None:
    app, _ = make_app(workspace, [])
    async with app.run_test(size=SIZE) as pilot:
        entry = live_entry(workspace, "bg-aaaaaa", title="tests")
        await pilot.pause()
        assert "waits" not in bar(app)
        RunningRegistry().update(entry, state="waiting", waiting_for="run_shell: pytest -q")
        await until(pilot, lambda: "⚠ bg-aaaaaa waits for run_shell: pytest -q" in bar(app))
        # the toast is a message the app handles after the bar's repaint: wait for it too
        await until(
            pilot,
            lambda: any(
                "bg-aaaaaa waits for run_shell: pytest -q" in str(n.message) for n in app._notifications
            ),
        )
        RunningRegistry().update(entry, state="running", waiting_for=None)  # answered elsewhere
        await until(pilot, lambda: "waits" not in bar(app))


async def test_a_waiting_session_of_another_project_is_not_shown(workspace: Path, tmp_path: Path) -> None:
    app, _ = make_app(workspace, [])
    async with app.run_test(size=SIZE) as pilot:
        live_entry(tmp_path / "elsewhere", "bg-bbbbbb", state="waiting", waiting_for="edit_file: x")
        mine = live_entry(workspace, "bg-cccccc", state="waiting", waiting_for="edit_file: y")
        await until(pilot, lambda: "bg-cccccc" in bar(app))
        assert "bg-bbbbbb" not in bar(app)
        RunningRegistry().update(mine, state="done", waiting_for=None)
        await until(pilot, lambda: "waits" not in bar(app))


async def test_agents_lists_sessions_and_sub_agents_and_its_keys_work(workspace: Path) -> None:
    live_entry(
        workspace,
        "bg-dddddd",
        state="waiting",
        waiting_for="run_shell: make",
        cost_usd=0.0123,
        agents=[{"id": "a1", "agent": "reviewer", "state": "running", "tool": "read_file"}],
    )
    live_entry(workspace, "bg-eeeeee", state="done", title="old work")
    app, _ = make_app(workspace, [])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"/agents", "enter")
        screen = await until(pilot, lambda: app.screen if isinstance(app.screen, AgentsScreen) else None)
        table = screen.query_one(DataTable)
        await until(pilot, lambda: table.row_count == 3)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(3)]
        assert rows[0][:2] == ["bg-dddddd", "waiting"] and rows[0][4] == "$0.0123"
        assert rows[0][5] == "waits for run_shell: make"
        assert rows[1][0] == "  └ reviewer" and rows[1][5] == "running read_file"
        assert rows[2][:2] == ["bg-eeeeee", "done"] and rows[2][5] == "old work"
        await pilot.press("m")
        note = screen.query_one("#agents-note", Static)
        await until(pilot, lambda: "no worktree" in str(note.render()))
        await pilot.press("down", "down")
        await pilot.press("enter")  # a finished session: nothing to attach to
        await until(pilot, lambda: "bg-eeeeee is done" in str(note.render()))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, AgentsScreen))
        await pilot.press("ctrl+b")  # the key shown in /help
        await until(pilot, lambda: isinstance(app.screen, AgentsScreen))


async def test_x_stops_the_selected_session_over_its_socket(workspace: Path) -> None:
    entry = live_entry(workspace, "bg-ffffff", state="running")
    got: list[dict[str, Any]] = []

    async def on_request(request: dict[str, Any], controlling: bool) -> None:
        got.append(request)

    server = ChannelServer(
        socket_path(entry.id), on_request, lambda: {"entry": entry.to_dict(), "pending": []}
    )
    await server.start()
    try:
        app, _ = make_app(workspace, [])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+b")
            await until(pilot, lambda: isinstance(app.screen, AgentsScreen))
            await pilot.press("x")
            await until(pilot, lambda: got)
            assert got == [{"kind": "stop"}]
    finally:
        await server.close()


async def _serve_waiting(entry: RunningSession) -> tuple[ChannelServer, list[dict[str, Any]]]:
    request = ev.ApprovalRequested("call-1", "run_shell", {"command": "make test"}, {"kind": "command"})
    got: list[dict[str, Any]] = []

    async def on_request(message: dict[str, Any], controlling: bool) -> None:
        got.append(message)
        if message["kind"] == "approve":  # the call resumes: output, then the turn's end
            server.broadcast(event_message(ev.TextDelta("tests pass")))
            server.broadcast(event_message(ev.TurnDone("tests pass", "completed", 2)))

    server = ChannelServer(
        socket_path(entry.id),
        on_request,
        lambda: {"entry": entry.to_dict(), "pending": [event_message(request)["event"]]},
    )
    await server.start()
    return server, got


async def test_attach_shows_the_pending_dialog_and_its_answer_resumes_the_call(workspace: Path) -> None:
    entry = live_entry(workspace, "bg-111111", state="waiting", waiting_for="run_shell: make test")
    server, got = await _serve_waiting(entry)
    try:
        app = AttachApp(entry)
        async with app.run_test(size=SIZE) as pilot:
            dialog = await until(
                pilot, lambda: app.screen if isinstance(app.screen, ApprovalScreen) else None
            )
            assert "run_shell" in str(dialog.request.name)
            await until(pilot, lambda: not dialog.paused, what="the dialog's keys to work (its typing pause)")
            await pilot.press("y")
            await until(pilot, lambda: any(m["kind"] == "approve" for m in got))
            assert got[-1]["decision"]["kind"] == "allow" and got[-1]["id"] == "call-1"
            attach = app.screen_of_session
            await until(pilot, lambda: answer(attach) == "tests pass")
            await pilot.press("ctrl+d")  # detach: the app ends, the session is not asked anything
        assert [m["kind"] for m in got] == ["approve"]
    finally:
        await server.close()


async def test_a_second_attached_app_is_view_only_and_opens_no_dialog(workspace: Path) -> None:
    entry = live_entry(workspace, "bg-222222", state="waiting", waiting_for="run_shell: make test")
    server, got = await _serve_waiting(entry)
    try:
        from wyckoff_cli.session.channel import ChannelClient

        first = await ChannelClient.connect(socket_path(entry.id), "control")
        app = AttachApp(entry)
        async with app.run_test(size=SIZE) as pilot:
            attach = app.screen_of_session
            await until(pilot, lambda: "View-only" in notices(attach))
            assert "Waits for approval of run_shell" in notices(attach)
            assert not isinstance(app.screen, ApprovalScreen)
            head = attach.query_one("#attach-head", Static)
            assert "view-only" in str(head.render())
        await first.close()
        assert got == []
    finally:
        await server.close()


async def test_enter_in_agents_attaches_in_the_app_and_detaching_comes_back(workspace: Path) -> None:
    entry = live_entry(workspace, "bg-333333", state="waiting", waiting_for="run_shell: make test")
    server, _ = await _serve_waiting(entry)
    try:
        app, _ = make_app(workspace, [])
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+b")
            await until(pilot, lambda: isinstance(app.screen, AgentsScreen))
            await pilot.press("enter")
            dialog = await until(
                pilot, lambda: app.screen if isinstance(app.screen, ApprovalScreen) else None
            )
            await until(pilot, lambda: not dialog.paused)
            await pilot.press("n", "enter")  # deny, no feedback: the dialog closes on the attached screen
            await until(pilot, lambda: isinstance(app.screen, AttachScreen))
            await pilot.press("ctrl+d")
            await until(pilot, lambda: type(app.screen).__name__ == "ChatScreen")
    finally:
        await server.close()


async def test_another_session_that_starts_waiting_shows_in_an_attached_apps_status_bar(
    workspace: Path,
) -> None:
    entry = live_entry(workspace, "bg-444444", state="waiting", waiting_for="run_shell: make test")
    server, _ = await _serve_waiting(entry)
    try:
        app = AttachApp(entry, want="view")
        async with app.run_test(size=SIZE) as pilot:
            attach = app.screen_of_session
            await until(pilot, lambda: attach.client is not None)
            other = live_entry(workspace, "bg-555555", state="running")
            RunningRegistry().update(other, state="waiting", waiting_for="edit_file: app.py")
            await until(pilot, lambda: "⚠ bg-555555 waits for edit_file: app.py" in bar(app))
            assert "bg-444444" not in bar(app)  # its own wait is its dialog, not a mark
    finally:
        await server.close()


def test_an_attached_screen_prices_calls_as_the_session_does(workspace: Path) -> None:
    """The attached app's status bar shows the session's cost (it said "cost unknown")."""
    from wyckoff_cli.tui.screens.attach import session_pricer

    price = session_pricer(workspace)
    cost = price("anthropic:claude-sonnet-4-5", ev.UsageReported("anthropic:claude-sonnet-4-5", 1_000_000, 0))
    assert cost is not None and round(cost[0], 6) == 3.0  # Sonnet: $3 per million input tokens
    screen = AttachScreen(live_entry(workspace, "bg-333333", model="anthropic:claude-sonnet-4-5"))
    assert screen.status.price is not None
