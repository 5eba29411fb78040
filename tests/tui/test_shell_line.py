"""`!command` at the start of the prompt: the real `run_shell` tool through the same
policy as the model's calls, shown as a tool widget, its output sent with the next
message (and kept for a resumed transcript)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import make_app
from tests.tui.test_chat_flows import chat, past_pause, send, settle, wait_for_screen
from tests.waiting import until
from wyckoff_cli.session import requests as rq
from wyckoff_cli.storage.project_grants import allow_grant, trust_grants
from wyckoff_cli.tui import typing_guard
from wyckoff_cli.tui.replay import widgets_for
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.screens.chat import ChatScreen
from wyckoff_cli.tui.shell_line import shell_line
from wyckoff_cli.tui.widgets.entries import NoticeLine, UserMessage
from wyckoff_cli.tui.widgets.tool_call import ToolCallView

SIZE = (100, 40)


@pytest.fixture(autouse=True)
def short_typing_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(typing_guard, "PAUSE_SECONDS", 0.3)


def project(tmp_path: Path, *, allow: tuple[str, ...] = (), deny: tuple[str, ...] = ()) -> Path:
    root = tmp_path / "project"
    (root / ".wyckoff").mkdir(parents=True)
    rules = f"[permissions]\nallow = {list(allow)!r}\ndeny = {list(deny)!r}\n".replace("'", '"')
    (root / ".wyckoff" / "config.toml").write_text(rules + '[shell]\nsandbox = "off"\n')
    grant = allow_grant(root)
    if grant is not None:  # the project's allow rules apply once trusted (issue 27)
        trust_grants([grant])
    return root


def notices(screen: ChatScreen) -> list[str]:
    return [n.message for n in screen.query(NoticeLine)]


@pytest.mark.parametrize(
    ("text", "command"),
    [
        ("!ls", "ls"),
        ("!  git status ", "git status"),
        ("! ", None),
        ("!", None),
        ("ls !x", None),
        ("/x", None),
    ],
)
def test_only_a_leading_bang_with_a_command_is_a_shell_line(text: str, command: str | None) -> None:
    assert shell_line(text) == command


async def test_a_typed_command_asks_first_and_its_output_goes_with_the_next_message(tmp_path: Path) -> None:
    root = project(tmp_path)
    app, provider = make_app(root, [{"text": "It printed hello."}])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "!echo hello-from-the-shell")
        modal = await wait_for_screen(pilot, ApprovalScreen)  # typing it is not an approval
        assert modal.request.name == "run_shell" and modal.request.args == {
            "command": "echo hello-from-the-shell"
        }
        await past_pause(pilot)
        await pilot.press("y")
        await settle(pilot, screen)
        view = screen.query_one(ToolCallView)
        assert view.status == "ok" and "hello-from-the-shell" in view.output + view.result
        assert not provider.requests  # nothing was sent to the model yet
        queued = str(screen.query_one("#queued").render())
        assert "goes with your next message: `echo hello-from-the-shell` (1 line, exit 0)" in queued
        await send(pilot, "what did it print?")
        await settle(pilot, screen)
        sent = provider.requests[0].messages[-1].text
        assert "<user-shell-command>" in sent and "hello-from-the-shell" in sent
        assert sent.endswith("what did it print?")
        shown = [w.text for w in screen.query(UserMessage)]
        assert shown == ["! echo hello-from-the-shell", "what did it print?"]  # not the attached block
        assert not screen.controller.shell_runs  # sent once
        assert not screen.query_one("#queued").display  # and the line above the prompt is gone
        session_id = screen.controller.id
    assert session_id is not None
    loaded = app.controller.store.load(session_id)
    async with app_at(root, loaded).run_test(size=SIZE):
        widgets = widgets_for(loaded.history)
        assert [w.text for w in widgets if isinstance(w, UserMessage)] == [
            "! echo hello-from-the-shell",
            "what did it print?",
        ]
        replayed = next(w for w in widgets if isinstance(w, ToolCallView))
        assert replayed.tool_name == "run_shell" and "hello-from-the-shell" in replayed.result


def app_at(root: Path, loaded: object) -> object:
    app, _ = make_app(root, [], loaded=loaded)
    return app


DENIED = [
    "rm -rf victim",
    "bash -c 'rm -rf victim'",
    'sh -c "rm -rf victim"',
    "echo ok && rm -rf victim",
    "true; rm -rf victim",
    "env rm -rf victim",
    "command rm -rf victim",
    "/bin/rm -rf victim",
]


@pytest.mark.parametrize("command", DENIED)
async def test_a_deny_rule_refuses_a_typed_command_in_every_form(tmp_path: Path, command: str) -> None:
    root = project(tmp_path, allow=("run_shell",), deny=("Bash(rm:*)",))
    (root / "victim").mkdir()
    app, provider = make_app(root, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, f"!{command}")
        await settle(pilot, screen)
        assert not isinstance(app.screen, ApprovalScreen)
        assert any("was refused" in n for n in notices(screen))
        assert not screen.query(ToolCallView) and not screen.controller.shell_runs
    assert (root / "victim").is_dir() and not provider.requests


async def test_an_allowed_command_runs_without_a_dialog_and_plan_mode_refuses_it(tmp_path: Path) -> None:
    root = project(tmp_path, allow=("run_shell(printf:*)",))
    app, _ = make_app(root, [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "!printf 'a\\nb\\n'")
        await settle(pilot, screen)
        assert screen.query_one(ToolCallView).status == "ok"
        assert len(screen.controller.shell_runs) == 1
        for event in screen.controller.handle_now(rq.SetMode("plan")):
            screen.router.handle(event)
        await send(pilot, "!printf plan")
        await settle(pilot, screen)
        assert any("commands never run in plan mode" in n for n in notices(screen))
        assert len(screen.query(ToolCallView)) == 1 and len(screen.controller.shell_runs) == 1


async def test_esc_interrupts_a_typed_command_and_backspace_drops_an_attached_output(tmp_path: Path) -> None:
    root = project(tmp_path, allow=("run_shell",))
    app, provider = make_app(root, [{"text": "ok"}])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "!echo first")
        await settle(pilot, screen)
        assert len(screen.controller.shell_runs) == 1
        await send(pilot, "!sleep 30")
        await until(
            pilot,
            lambda: (
                len(screen.query(ToolCallView)) == 2 and screen.query(ToolCallView)[1].status == "running"
            ),
        )
        await send(pilot, "typed while it ran")  # queued
        await pilot.press("escape")
        await settle(pilot, screen)
        assert screen.query(ToolCallView)[1].status == "error"
        assert any("was interrupted" in n for n in notices(screen))
        assert len(screen.controller.shell_runs) == 1  # an interrupted command attaches nothing
        assert screen.queued == ["typed while it ran"] and screen.queue_held and not provider.requests
        screen.queued.clear()
        screen.queue_held = False
        await pilot.press("backspace")  # on the empty prompt: the attached output is dropped
        await pilot.pause()
        assert not screen.controller.shell_runs
        assert any("The output of `echo first` will not be sent" in n for n in notices(screen))
        await send(pilot, "hi")
        await settle(pilot, screen)
        assert provider.requests[0].messages[-1].text == "hi"


async def test_clear_and_resume_drop_output_waiting_for_the_next_message(tmp_path: Path) -> None:
    from tests.tui.support import make_controller

    root = project(tmp_path, allow=("run_shell",))
    controller, _ = make_controller(root, [{"text": "ok"}])
    async for _ in controller.handle(rq.Turn("start a session")):
        pass
    earlier = controller.id
    assert earlier is not None
    for switch in ("clear", "resume"):
        async for _ in controller.handle(rq.Shell("echo pending")):
            pass
        assert [run.command for run in controller.shell_runs] == ["echo pending"]
        if switch == "clear":
            [_ async for _ in controller.handle(rq.Clear())]
        else:
            [_ async for _ in controller.handle(rq.Resume(earlier))]
        assert controller.shell_runs == [], switch
