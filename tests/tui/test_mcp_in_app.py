"""MCP in the app (Pilot): servers connect in the background, the status bar counts
them, `/mcp` shows the table, tools reach the model, `@SERVER:URI` attaches a resource,
a server's prompt is a slash command, and the app asks before a project's servers start."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from tests.tools.mcp.conftest import DEMO, stdio_spec
from tests.tui.support import make_controller
from tests.tui.test_chat_flows import SIZE, chat, send, settle
from tests.waiting import until
from wyckoff_cli.tools.mcp.config import McpConfig, read_project_file
from wyckoff_cli.tools.mcp.host import McpHost
from wyckoff_cli.tools.mcp.manager import start_mcp
from wyckoff_cli.tools.mcp.trust import TrustStore
from wyckoff_cli.tui.app import WyckoffApp
from wyckoff_cli.tui.screens.mcp_trust import GRACE_SECONDS, McpTrustScreen
from wyckoff_cli.tui.widgets.entries import NoticeLine
from wyckoff_cli.tui.widgets.status_bar import StatusBar

pytestmark = pytest.mark.timeout(90)


def host_for(tmp_path: Path, config: McpConfig) -> McpHost:
    trust = TrustStore(tmp_path / "trust.json")
    return McpHost(
        lambda on_event: start_mcp(
            config, root=tmp_path, env={"PATH": os.environ.get("PATH", "")}, trust=trust, on_event=on_event
        )
    )


def app_with(root: Path, rounds: list[Any], host: McpHost) -> tuple[WyckoffApp, Any]:
    controller, provider = make_controller(root, rounds, [])
    controller.builder.mcp = host
    return WyckoffApp(controller), provider


def status_text(screen: Any) -> str:
    return str(screen.query_one(StatusBar).render())


async def test_mcp_tools_status_table_resources_and_prompts(tmp_path: Path) -> None:
    host = host_for(tmp_path, McpConfig((stdio_spec(),), None))
    rounds: list[Any] = [
        {"tool_calls": [{"name": "mcp__demo__echo", "args": {"text": "from the app"}}]},
        {"text": "Echoed."},
        {"text": "Read it."},
        {"text": "Reviewed."},
    ]
    app, provider = app_with(tmp_path, rounds, host)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await until(pilot, lambda: "MCP 1/1" in status_text(screen))
        await send(pilot, "/mcp")

        def shown_output() -> str:
            return "\n".join(str(s.render()) for s in screen.query(Static).filter(".command-output"))

        await until(pilot, lambda: "mcp__demo__echo" in shown_output(), observe=shown_output)
        shown = shown_output()
        assert "demo" in shown and "connected" in shown and "mcp__demo__echo" in shown

        completions = screen.completions
        assert ("@demo:demo://readme ", "@demo:demo://readme  readme") in completions("@demo")
        assert any(value == "/mcp__demo__review " for value, _ in completions("/mcp__"))

        await send(pilot, "echo something")
        await until(pilot, lambda: len(provider.requests) == 2 and not screen.busy)
        assert "mcp__demo__echo" in [t.name for t in provider.requests[0].tools]
        assert "echo: from the app" in json.dumps([m.to_dict() for m in provider.requests[1].messages])

        await send(pilot, "summarise @demo:demo://readme")
        await until(pilot, lambda: len(provider.requests) == 3 and not screen.busy)
        assert "This is the demo resource." in provider.requests[2].messages[-1].text

        await send(pilot, "/mcp__demo__review app.py style")
        await until(pilot, lambda: len(provider.requests) == 4 and not screen.busy)
        assert provider.requests[3].messages[-1].text == "Please review app.py, looking for style."
        await settle(pilot, screen)


async def test_project_servers_wait_for_trust_in_the_app(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    entry = {"command": sys.executable, "args": [str(DEMO), "stdio"], "startup_timeout": 20}
    path.write_text(json.dumps({"mcpServers": {"proj": entry}}))
    host = host_for(tmp_path, McpConfig(tuple(read_project_file(path)), path))
    app, _provider = app_with(tmp_path, [{"text": "hi"}], host)
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(pilot, lambda: app.chat)
        assert screen is not None
        await until(
            pilot,
            lambda: any("wants to start these MCP servers" in n.message for n in screen.query(NoticeLine)),
        )
        text = next(n.message for n in screen.query(NoticeLine) if "wants to start" in n.message)
        assert f"proj: {sys.executable} {DEMO} stdio" in text and "/mcp trust" in text
        assert "MCP 0/1" in status_text(screen)
        await until(pilot, lambda: isinstance(app.screen, McpTrustScreen))
        assert f"proj: {sys.executable} {DEMO} stdio" in app.screen.question
        trust_screen = app.screen
        await until(
            pilot, lambda: time.monotonic() - trust_screen.opened >= GRACE_SECONDS
        )  # past the grace period
        await pilot.press("y")
        await until(pilot, lambda: "MCP 1/1" in status_text(screen))
        assert not isinstance(app.screen, McpTrustScreen)
        await send(pilot, "/mcp restart proj")
        await until(pilot, lambda: any("Restarting proj" in n.message for n in screen.query(NoticeLine)))
        await until(pilot, lambda: "MCP 1/1" in status_text(screen))


async def test_declining_leaves_project_servers_stopped(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    entry = {"command": sys.executable, "args": [str(DEMO), "stdio"]}
    path.write_text(json.dumps({"mcpServers": {"proj": entry}}))
    host = host_for(tmp_path, McpConfig(tuple(read_project_file(path)), path))
    app, _provider = app_with(tmp_path, [{"text": "hi"}], host)
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(pilot, lambda: app.chat)
        assert screen is not None
        await until(pilot, lambda: isinstance(app.screen, McpTrustScreen))
        modal = app.screen
        assert isinstance(modal, McpTrustScreen)
        modal.opened = time.monotonic() + 60  # still inside the grace period, however slow the machine
        await pilot.press("y")  # typed ahead: ignored
        assert app.screen is modal
        modal.opened = 0.0  # the grace period is over
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, McpTrustScreen))
        assert not isinstance(app.screen, McpTrustScreen)
        assert "MCP 0/1" in status_text(screen)
        assert host.manager is not None and host.manager.statuses()[0].state == "needs_trust"


async def test_tools_stay_after_a_model_switch_and_clear(tmp_path: Path) -> None:
    host = host_for(tmp_path, McpConfig((stdio_spec(),), None))
    app, provider = app_with(tmp_path, [{"text": "one"}, {"text": "two"}, {"text": "three"}], host)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await until(pilot, lambda: "MCP 1/1" in status_text(screen))
        await send(pilot, "first")
        await until(pilot, lambda: len(provider.requests) == 1 and not screen.busy)
        await send(pilot, "/model scripted:other")
        await until(pilot, lambda: screen.status.model == "scripted:other")
        await send(pilot, "second")
        await until(pilot, lambda: len(provider.requests) == 2 and not screen.busy)
        await send(pilot, "/clear")
        await settle(pilot, screen)  # the session swap
        await send(pilot, "third")
        await until(pilot, lambda: len(provider.requests) == 3 and not screen.busy)
        for request in provider.requests:
            assert "mcp__demo__echo" in [t.name for t in request.tools]
        connection = host.manager.connection("demo") if host.manager else None
        assert connection is not None and connection.state == "connected"  # one server all along
