"""The command table and the request union: every slash command maps to a request,
every host that offers a command can handle what it maps to, and the controller
answers every request of the union (its `match` ends in `assert_never`; this checks
it at run time too, through a real session)."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path
from typing import Any

import pytest

from tests.tui.support import make_controller
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.runtime.checkpoints.rewind import RewindChoice
from wyckoff_cli.session import commands
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.commands import ACP, APP, COMMANDS, HEADLESS, HOSTS, offered_by, parse

SESSION_TYPES = typing.get_args(rq.SessionRequest)
VIEW_TYPES = typing.get_args(rq.ViewRequest)
ARGUMENTS = {"find": "text", "resume": "", "rewind": "2 code", "permissions": "remove Bash(x)"}


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_every_command_in_the_table_maps_to_a_request(command: commands.SlashCommand) -> None:
    for text in (f"/{command.name}", f"/{command.name} {ARGUMENTS.get(command.name, 'x')}".rstrip()):
        request = parse(text)
        assert isinstance(request, SESSION_TYPES + VIEW_TYPES), text
    assert command.hosts and command.hosts <= set(HOSTS)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_acp_and_headless_offer_only_what_the_controller_handles(command: commands.SlashCommand) -> None:
    """The app's own requests (help, scrolling, find, quit) are offered by the app alone."""
    request = parse(f"/{command.name}")
    if isinstance(request, VIEW_TYPES):
        assert command.hosts == {APP}
    else:
        assert isinstance(request, SESSION_TYPES)


def test_parsing_arguments_and_bad_ones() -> None:
    assert parse("/rewind") == rq.Rewind(None, RewindChoice.BOTH)
    assert parse("/rewind 2 code") == rq.Rewind(2, RewindChoice.CODE)
    assert parse("/rewind conversation") == rq.Rewind(None, RewindChoice.CONVERSATION)
    assert parse("/model") == rq.SetModel(None) and parse("/model openai:gpt-5") == rq.SetModel(
        "openai:gpt-5"
    )
    assert parse("/MODE plan") == rq.SetMode("plan")
    assert parse("/permissions remove Bash(x)") == rq.Permissions(remove="Bash(x)")
    assert parse("/permissions trust") == rq.Permissions(trust=True)
    assert parse("/compact the tests") == rq.Compact("the tests")
    assert parse("/init") == rq.PromptCommand("init")
    assert parse("/review this", prompt_commands={"review"}) == rq.PromptCommand("review", "this")
    assert parse("/cost", prompt_commands={"cost"}) == rq.PromptCommand("cost")  # commands.prefer
    for text in ("hello", "/", "/ x", "/tmp/file.txt is it", "/nosuch"):
        assert parse(text) is None, text
    for text, needle in (
        ("/rewind 0", "/rewind [N]"),
        ("/rewind two", "/rewind [N]"),
        ("/undo now", "takes no argument"),
        ("/permissions drop x", "remove RULE` or `trust"),
    ):
        bad = parse(text)
        assert isinstance(bad, rq.Invalid) and needle in bad.message, text


def test_hosts_offer_what_the_table_says() -> None:
    assert [c.name for c in offered_by(APP)] == [c.name for c in COMMANDS]
    assert {"undo", "redo", "diff", "rewind", "cost", "init"} <= {c.name for c in offered_by(ACP)}
    assert {"quit", "help", "clear", "resume", "top", "bottom", "find"}.isdisjoint(
        c.name for c in offered_by(ACP)
    )
    assert {"undo", "redo", "diff", "rewind", "cost", "export"} <= {c.name for c in offered_by(HEADLESS)}
    assert {"model", "mode", "mcp"}.isdisjoint(c.name for c in offered_by(HEADLESS))


def example(cls: type) -> Any:
    """One instance of a request type, with plain arguments."""
    values: dict[type, Any] = {
        rq.Turn: rq.Turn("hello"),
        rq.PromptCommand: rq.PromptCommand("init"),
        rq.Shell: rq.Shell("echo hi"),
        rq.SetMode: rq.SetMode("plan"),
        rq.ApprovePlan: rq.ApprovePlan("auto-edit"),
        rq.SetModel: rq.SetModel(None),
        rq.TrustHooks: rq.TrustHooks((), False),
        rq.RejectAlways: rq.RejectAlways("run_shell(rm *)"),
        rq.Resume: rq.Resume("no-such-session"),
        rq.Invalid: rq.Invalid("undo", "/undo takes no argument"),
    }
    if cls in values:
        return values[cls]
    assert all(f.default is not dataclasses.MISSING for f in dataclasses.fields(cls)), cls
    return cls()


async def test_the_controller_answers_every_request_of_the_union(tmp_path: Path) -> None:
    controller, _ = make_controller(
        tmp_path, [{"text": "ok", "usage": {"input_tokens": 9, "output_tokens": 2}}] * 4
    )
    answered: dict[str, list[ev.RuntimeEvent]] = {}
    try:
        for cls in SESSION_TYPES:
            events = []
            async for event in controller.handle(example(cls)):
                events.append(event)
                if isinstance(event, ev.ApprovalRequested):  # `!echo hi` asks in the default mode
                    event.respond(ApprovalDecision.deny(None))
                elif isinstance(event, ev.ConfirmRequested):
                    event.respond(True)
            answered[cls.__name__] = events
            for event in events:
                text = getattr(event, "message", "")
                assert "not a command" not in text and "Unknown command" not in text, (cls, text)
    finally:
        await controller.aclose()
    silent = {name for name, events in answered.items() if not events}
    assert silent == {
        "Interrupt",
        "RejectAlways",
        "DropShellOutput",
    }  # nothing running or waiting; a rule saved
    assert any(isinstance(e, ev.TurnDone) for e in answered["Turn"] + answered["PromptCommand"])
    assert isinstance(answered["SetMode"][0], ev.ModeChanged)
    assert isinstance(answered["Clear"][0], ev.SessionChanged)
    assert answered["Cost"] == [ev.Notice("info", "No model calls in this session yet")]  # after Clear


async def test_interrupt_stops_the_running_turn(tmp_path: Path) -> None:
    controller, _ = make_controller(tmp_path, [[{"text": "Partial "}, {"sleep": 30}, {"text": "never"}]])
    reasons = []
    try:
        async for event in controller.handle(rq.Turn("go")):
            if isinstance(event, ev.TextDelta) and controller.running:
                controller.handle_now(rq.Interrupt())
            if isinstance(event, ev.TurnDone):
                reasons.append(event.reason)
    finally:
        await controller.aclose()
    assert reasons == ["aborted"] and controller.interrupted and not controller.running


async def test_rewind_past_the_first_message_says_how_many_there_are(tmp_path: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    controller, _ = make_controller(tmp_path, [{"text": "ok"}])
    try:
        [_ async for _ in controller.handle(rq.Turn("hello"))]
        events = [e async for e in controller.handle(rq.Rewind(3))]
        assert len(controller.conversation) == 2  # nothing changed
    finally:
        await controller.aclose()
    assert events == [
        ev.Notice("warning", "/rewind 3: this session has only 1 message of yours to go back to.")
    ]
