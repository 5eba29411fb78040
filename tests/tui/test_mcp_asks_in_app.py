"""An MCP server's requests in the app (Pilot), through a real server (the SDK's
MCPServer, tests/tools/mcp/asking_server.py): the approval dialog offers "always for
this tool" and "always for this server" for MCP tools (saved, and shown by
`/permissions`), a sampling request is asked about with the server's name and runs on
the session's model, and a form is built from the requested schema."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual.widgets import Checkbox, Input, OptionList, Select, Static

from tests.tools.mcp.conftest import stdio_spec
from tests.tools.mcp.test_server_asks import ASKER
from tests.tui.test_approval_dialog import saved_rules
from tests.tui.test_chat_flows import SIZE, chat, past_pause, send, settle, wait_for_screen
from tests.tui.test_mcp_in_app import app_with, status_text
from tests.waiting import until
from wyckoff_cli.tools.mcp.config import McpConfig
from wyckoff_cli.tools.mcp.host import McpHost
from wyckoff_cli.tools.mcp.manager import start_mcp
from wyckoff_cli.tools.mcp.trust import TrustStore
from wyckoff_cli.tui.screens.approval import ApprovalScreen, render_preview
from wyckoff_cli.tui.screens.elicitation import ElicitationScreen

pytestmark = pytest.mark.timeout(120)


def asker_host(tmp_path: Path) -> McpHost:
    spec = stdio_spec("asker", command=sys.executable, args=(str(ASKER),))
    trust = TrustStore(tmp_path / "trust.json")
    return McpHost(
        lambda on_event: start_mcp(
            McpConfig((spec,), None),
            root=tmp_path,
            env={"PATH": os.environ.get("PATH", "")},
            trust=trust,
            on_event=on_event,
        )
    )


def last_result(provider: Any) -> str:
    return json.dumps([m.to_dict() for m in provider.requests[-1].messages])


def options(modal: ApprovalScreen) -> list[str]:
    return [str(o.id) for o in modal.query_one(OptionList).options]


@pytest.mark.parametrize(
    ("key", "rule"),
    [("t", "mcp__asker__roots"), ("5", "mcp__asker__roots"), ("s", "mcp__asker__*"), ("6", "mcp__asker__*")],
)
async def test_always_for_the_tool_or_the_server_is_a_separate_choice(
    tmp_path: Path, key: str, rule: str
) -> None:
    rounds: list[Any] = [
        {"tool_calls": [{"name": "mcp__asker__roots", "args": {}}]},
        {"text": "Listed."},
        {"tool_calls": [{"name": "mcp__asker__roots", "args": {}}]},  # asked no more
        {"text": "Again."},
    ]
    app, provider = app_with(tmp_path, rounds, asker_host(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await until(pilot, lambda: "MCP 1/1" in status_text(screen))
        await send(pilot, "roots?")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        assert options(modal) == ["allow", "always", "edit", "deny", "always_tool", "always_server"]
        shown = "\n".join(str(o.prompt) for o in modal.query_one(OptionList).options)
        assert "Always allow this tool — saves the rule mcp__asker__roots  (t)" in shown
        assert "Always allow every tool of asker — saves mcp__asker__*  (s)" in shown
        await past_pause(pilot)
        await pilot.press(key)  # a key only highlights an "always"
        await pilot.pause()
        assert pilot.app.screen is modal and saved_rules(tmp_path) == []
        await pilot.press("enter")
        await settle(pilot, screen)
        assert saved_rules(tmp_path) == [rule]
        assert tmp_path.resolve().as_uri() in last_result(provider)
        await send(pilot, "again")
        await settle(pilot, screen)
        assert len(provider.requests) == 4 and not isinstance(pilot.app.screen, ApprovalScreen)
        await send(pilot, "/permissions")

        def listed() -> str:
            return "\n".join(str(s.render()) for s in screen.query(Static).filter(".command-output"))

        await until(pilot, lambda: rule in listed(), observe=listed)


async def test_builtin_tools_offer_no_mcp_choices(tmp_path: Path) -> None:
    from tests.tui.support import make_app
    from tests.tui.test_chat_flows import shell_tool

    ran: list[dict[str, Any]] = []
    app, _ = make_app(
        tmp_path,
        [{"tool_calls": [{"name": "run_shell", "args": {"command": "ls"}}]}, {"text": "ok"}],
        [shell_tool(ran)],
    )
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "go")
        modal = await wait_for_screen(pilot, ApprovalScreen)
        assert options(modal) == ["allow", "always", "edit", "deny"]
        await past_pause(pilot)
        await pilot.press("s")  # no "server" choice here: the letter goes to the prompt
        await pilot.pause()
        assert pilot.app.screen is modal and saved_rules(tmp_path) == []
        await past_pause(pilot)
        await pilot.press("y")
        await settle(pilot, screen)


async def test_a_sampling_request_is_asked_about_and_runs_on_the_sessions_model(tmp_path: Path) -> None:
    rounds: list[Any] = [
        {"tool_calls": [{"name": "mcp__asker__ask_model", "args": {"question": "Say hello"}}]},
        {"text": "Hello from the model"},  # the server's sampling request
        {"text": "It answered."},
    ]
    app, provider = app_with(tmp_path, rounds, asker_host(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await until(pilot, lambda: "MCP 1/1" in status_text(screen))
        await send(pilot, "ask it")
        tool_dialog = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("y")
        sampling = await until(
            pilot,
            lambda: (
                pilot.app.screen
                if isinstance(pilot.app.screen, ApprovalScreen) and pilot.app.screen is not tool_dialog
                else None
            ),
            what="the sampling dialog",
        )
        title = str(sampling.query_one("#title", Static).render())
        assert title == "Let the MCP server asker use the model?"
        assert options(sampling) == ["allow", "always", "edit", "deny"]  # not an MCP tool's choices
        console = Console(width=100, record=True, file=io.StringIO())
        console.print(render_preview(sampling.request))
        preview = console.export_text()
        assert (
            "system: Be brief." in preview and "user: Say hello" in preview and "at most 64 tokens" in preview
        )
        await past_pause(pilot)
        await pilot.press("y")
        await settle(pilot, screen)
        sampled = provider.requests[1]
        assert sampled.system_prompt.startswith("Be brief.") and sampled.tools == ()
        assert [m.text for m in sampled.messages] == ["Say hello"]
        assert "said: Hello from the model" in last_result(provider)
        assert "mcp:asker" in app.controller.status.per_agent  # the server's spend


async def test_a_form_is_built_from_the_schema_and_filled_with_the_keyboard(tmp_path: Path) -> None:
    rounds: list[Any] = [{"tool_calls": [{"name": "mcp__asker__ask_user", "args": {}}]}, {"text": "Thanks."}]
    app, provider = app_with(tmp_path, rounds, asker_host(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await until(pilot, lambda: "MCP 1/1" in status_text(screen))
        await send(pilot, "ask me")
        await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("y")
        modal = await wait_for_screen(pilot, ElicitationScreen)
        assert str(modal.query_one("#message", Static).render()) == "Tell me about you"
        labels = [str(s.render()) for s in modal.query(".label")]
        assert labels[:3] == ["Your name *", "Age", "Height (m)"]
        assert modal.query_one("#field-height", Input).value == "1.8"  # the default
        assert modal.query_one("#field-subscribe", Checkbox).value is False
        assert isinstance(modal.query_one("#field-colour", Select), Select)
        await pilot.press("ctrl+s")  # required fields empty: said, nothing sent
        await pilot.pause()
        problems = str(modal.query_one("#problems", Static).render())
        assert "Your name is required" in problems and "Colour is required" in problems
        assert pilot.app.screen is modal
        await pilot.press(*"Ada", "tab", *"36", "tab", "tab", "space", "tab")  # name, age, height, subscribe
        await pilot.press("enter", "down", "down", "enter")  # open the choices, pick Green
        await until(pilot, lambda: modal.query_one("#field-colour", Select).value == "green")
        await pilot.press("ctrl+s")
        await settle(pilot, screen)
        result = last_result(provider)
        expected = {
            "action": "accept",
            "content": {"age": 36, "colour": "green", "height": 1.8, "name": "Ada", "subscribe": True},
        }
        assert json.dumps(json.dumps(expected, sort_keys=True))[1:-1] in result, result


@pytest.mark.parametrize(("key", "action"), [("escape", "cancel"), ("ctrl+d", "decline")])
async def test_a_form_declined_or_cancelled_with_a_key(tmp_path: Path, key: str, action: str) -> None:
    rounds: list[Any] = [{"tool_calls": [{"name": "mcp__asker__ask_user", "args": {}}]}, {"text": "Ok."}]
    app, provider = app_with(tmp_path, rounds, asker_host(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await until(pilot, lambda: "MCP 1/1" in status_text(screen))
        await send(pilot, "ask me")
        await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        await pilot.press("y")
        await wait_for_screen(pilot, ElicitationScreen)
        await pilot.press(key)
        await settle(pilot, screen)
        assert json.dumps(json.dumps({"action": action, "content": None}, sort_keys=True))[
            1:-1
        ] in last_result(provider)
