"""The background host's approvals: they wait for an answer, however it arrives."""

from __future__ import annotations

import asyncio

from tests.waiting import eventually
from wyckoff_cli.core import events as ev
from wyckoff_cli.session.background_host import BackgroundHost, waiting_text
from wyckoff_cli.storage.running import RunningRegistry, RunningSession, now_iso, socket_path

REQUEST = ev.ApprovalRequested("c1", "run_shell", {"command": "pytest -q"})


def host(session_id: str) -> BackgroundHost:
    registry = RunningRegistry()
    entry = RunningSession(session_id, 0, "/p", "/p", "m", now_iso())
    return BackgroundHost(registry, entry, socket_path(session_id))


async def test_an_approval_waits_and_an_answer_that_came_first_is_kept() -> None:
    bg = host("bg-host01")
    await bg.start()
    try:
        await bg._request({"kind": "approve", "id": "c1", "decision": {"kind": "allow"}}, True)
        assert (await bg.approve(REQUEST)).kind == "allow"  # answered before it was asked: not lost
        waiting = asyncio.ensure_future(bg.approve(REQUEST))
        await eventually(lambda: bg.entry.state == "waiting")
        assert bg.entry.waiting_for == "run_shell: pytest -q" and not waiting.done()
        await bg._request(
            {"kind": "approve", "id": "c1", "decision": {"kind": "deny", "feedback": "no"}}, True
        )
        decision = await waiting
        assert (decision.kind, decision.feedback) == ("deny", "no")
        assert bg.entry.state == "running" and bg.entry.waiting_for is None
    finally:
        await bg.close("done")
    assert RunningRegistry().read("bg-host01").state == "done"


async def test_stop_ends_waiting_for_turns_and_aborts_the_turn() -> None:
    bg = host("bg-host02")
    await bg.start()
    aborted: list[bool] = []
    bg.on_abort = lambda: aborted.append(True)  # the controller's interrupt, in the real host
    await bg._request({"kind": "stop"}, False)
    assert aborted == [True] and bg.stopping
    assert await bg.next_turn() is None
    await bg.close("stopped")


def test_waiting_text_names_the_call_and_a_sub_agent() -> None:
    assert waiting_text(REQUEST) == "run_shell: pytest -q"
    edit = ev.ApprovalRequested("c2", "edit_file", {"path": "src/app.py"})
    assert waiting_text(edit, "reviewer") == "reviewer · edit_file: src/app.py"
    assert waiting_text(ev.ApprovalRequested("c3", "task", {})) == "task"
