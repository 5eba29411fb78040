"""What a new user found in the app (issue 28), each as a Pilot test that failed before
the fix: typing with the focus in the transcript, the first turn's "idle" while an MCP
server starts, a thinking block interrupted mid-thought, the two trust dialogs at start
and the MCP notice that outlived the trust."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import DEMO, stdio_spec
from tests.tui.support import make_controller
from tests.tui.test_chat_flows import SIZE, chat, send, settle
from tests.waiting import until
from wyckoff_cli.runtime.hook_config import HookFile
from wyckoff_cli.tools.mcp.config import McpConfig, read_project_file
from wyckoff_cli.tools.mcp.host import McpHost
from wyckoff_cli.tools.mcp.manager import start_mcp
from wyckoff_cli.tools.mcp.trust import TrustStore
from wyckoff_cli.tui.app import WyckoffApp
from wyckoff_cli.tui.screens.mcp_trust import McpTrustScreen
from wyckoff_cli.tui.screens.trust import HookTrustScreen
from wyckoff_cli.tui.widgets.entries import NoticeLine
from wyckoff_cli.tui.widgets.prompt_input import PromptInput
from wyckoff_cli.tui.widgets.thinking import ThinkingPane
from wyckoff_cli.tui.widgets.tool_call import ToolCallView

pytestmark = pytest.mark.timeout(120)


def app_for(root: Path, rounds: list[Any], host: McpHost | None = None) -> tuple[WyckoffApp, Any]:
    controller, provider = make_controller(root, rounds, [])
    if host is not None:
        controller.builder.mcp = host
    return WyckoffApp(controller), provider


def host_for(root: Path, config: McpConfig) -> McpHost:
    trust = TrustStore(root / "trust.json")
    return McpHost(
        lambda on_event: start_mcp(
            config, root=root, env={"PATH": os.environ.get("PATH", "")}, trust=trust, on_event=on_event
        )
    )


# ---------------------------------------------------------------------- focus


async def test_typing_with_the_focus_in_the_transcript_goes_to_the_prompt(tmp_path: Path) -> None:
    rounds: list[Any] = [{"tool_calls": [{"name": "todo_write", "args": {"todos": []}}]}, {"text": "done"}]
    controller, _ = make_controller(tmp_path, rounds)
    app = WyckoffApp(controller)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "plan it")
        await settle(pilot, screen)
        prompt = screen.query_one(PromptInput)
        await pilot.press("tab")
        await until(pilot, lambda: in_transcript(screen), what="Tab to move the focus into the transcript")
        await pilot.press("h", "i")
        assert screen.focused is prompt and prompt.text == "hi"  # nothing typed is lost

        for _ in range(3):  # onto the tool call itself
            await pilot.press("tab")
            if isinstance(screen.focused, ToolCallView):
                break
        assert isinstance(screen.focused, ToolCallView)
        await pilot.press("!")
        assert screen.focused is prompt and prompt.text == "hi!"
        await pilot.press("tab")
        await until(pilot, lambda: in_transcript(screen), what="Tab to leave the prompt")
        await pilot.press("escape")
        assert screen.focused is prompt and prompt.text == "hi!"


def in_transcript(screen: Any) -> bool:
    return screen.focused is not None and screen.transcript in screen.focused.ancestors_with_self


# ---------------------------------------------------------------------- the first turn's wait

SLOW_SERVER = """\
import pathlib, runpy, sys, time
flag = pathlib.Path(sys.argv[1])
while not flag.exists():  # starts only when the test says so
    time.sleep(0.02)
sys.argv = [sys.argv[2], "stdio"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


async def test_the_first_turn_says_it_waits_for_a_starting_mcp_server(tmp_path: Path) -> None:
    script, flag = tmp_path / "slow_server.py", tmp_path / "go"
    script.write_text(SLOW_SERVER)
    spec = stdio_spec("slowpoke", args=(str(script), str(flag), str(DEMO)), startup_timeout=60.0)
    host = host_for(tmp_path, McpConfig((spec,), None))
    app, provider = app_for(tmp_path, [{"text": "hello"}], host)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "hi, ask slowpoke to echo")  # it names the server: it waits (issue 36)
        await until(
            pilot, lambda: screen.status.state == "starting MCP server slowpoke…", what="the waiting state"
        )
        assert "starting MCP server slowpoke…" in str(screen.query_one("#status").render())
        assert not provider.requests  # the model waits with the turn
        flag.write_text("go")
        await until(pilot, lambda: provider.requests and not screen.busy, what="the turn")
        assert "mcp__slowpoke__echo" in [t.name for t in provider.requests[0].tools]
        assert screen.status.state == "idle"


async def test_a_message_that_does_not_need_a_starting_server_goes_at_once_and_says_so(
    tmp_path: Path,
) -> None:
    script, flag = tmp_path / "slow_server.py", tmp_path / "go"
    script.write_text(SLOW_SERVER)
    spec = stdio_spec("slowpoke", args=(str(script), str(flag), str(DEMO)), startup_timeout=60.0)
    host = host_for(tmp_path, McpConfig((spec,), None))
    app, provider = app_for(tmp_path, [{"text": "hello"}, {"text": "again"}], host)
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "hi")
        await until(pilot, lambda: provider.requests and not screen.busy, what="the turn, without the server")
        assert "mcp__slowpoke__echo" not in [t.name for t in provider.requests[0].tools]
        assert host.connecting() == ["slowpoke"]  # it is still starting
        notices = [n.message for n in screen.query(NoticeLine)]
        assert any("slowpoke still starting: this message is sent without its tools" in n for n in notices)
        flag.write_text("go")
        await until(pilot, lambda: not host.connecting(), what="the server to be ready")
        await send(pilot, "and now?")
        await until(pilot, lambda: len(provider.requests) == 2 and not screen.busy, what="the second turn")
        assert "mcp__slowpoke__echo" in [t.name for t in provider.requests[1].tools]


async def test_esc_stops_the_wait_for_a_starting_server(tmp_path: Path) -> None:
    script, flag = tmp_path / "slow_server.py", tmp_path / "go"
    script.write_text(SLOW_SERVER)
    spec = stdio_spec("slowpoke", args=(str(script), str(flag), str(DEMO)), startup_timeout=60.0)
    app, provider = app_for(tmp_path, [{"text": "hello"}], host_for(tmp_path, McpConfig((spec,), None)))
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "hi slowpoke")
        await until(
            pilot, lambda: screen.status.state.startswith("starting MCP server"), what="the waiting state"
        )
        await pilot.press("escape")
        await until(pilot, lambda: not screen.busy, what="the turn to end")
        assert screen.router.last_done is not None and screen.router.last_done.reason == "aborted"
        assert not provider.requests and screen.status.state == "idle"
        flag.write_text("go")  # let the server start, so it closes cleanly


# ---------------------------------------------------------------------- thinking interrupted


async def test_an_interrupted_thinking_block_stops_saying_thinking(tmp_path: Path) -> None:
    app, _ = app_for(tmp_path, [[{"thinking": "First I will look at the parser"}, {"sleep": 30}]])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        await send(pilot, "think")
        await until(
            pilot, lambda: screen.query(ThinkingPane) and screen.query_one(ThinkingPane).text, what="thinking"
        )
        await pilot.press("escape")
        await settle(pilot, screen)
        pane = screen.query_one(ThinkingPane)
        shown = str(pane.render())
        assert not pane.live and "Thinking…" not in shown and "Interrupted" in shown, shown
        pane.set_expanded(True)
        assert "First I will look at the parser" in str(pane.render())  # what was thought stays


# ---------------------------------------------------------------------- trust dialogs


def hooked_project(root: Path) -> None:
    path = root / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo checked"}]}]}
    path.write_text(json.dumps({"hooks": hooks}))


async def test_trust_dialogs_come_one_after_the_other_and_the_mcp_notice_goes(tmp_path: Path) -> None:
    hooked_project(tmp_path)
    path = tmp_path / ".mcp.json"
    path.write_text(
        json.dumps({"mcpServers": {"proj": {"command": sys.executable, "args": [str(DEMO), "stdio"]}}})
    )
    host = host_for(tmp_path, McpConfig(tuple(read_project_file(path)), path))
    app, _ = app_for(tmp_path, [{"text": "hi"}], host)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HookTrustScreen), what="the hook trust dialog")
        screen = app.chat
        assert screen is not None
        assert not any(isinstance(s, McpTrustScreen) for s in app.screen_stack)  # not stacked beneath
        assert isinstance(app.screen, HookTrustScreen)
        files: list[HookFile] = app.screen.files
        assert files
        app.screen.guard.opened -= 60  # past its typing pause
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, McpTrustScreen), what="the MCP trust dialog next")
        assert sum(isinstance(s, HookTrustScreen | McpTrustScreen) for s in app.screen_stack) == 1

        def trust_notices() -> list[NoticeLine]:
            return [n for n in screen.query(NoticeLine) if "wants to start these MCP servers" in n.message]

        assert trust_notices()
        app.screen.opened -= 60  # past its grace period
        await pilot.press("y")
        await until(pilot, lambda: not trust_notices(), what="the stale trust notice to go")
        assert any("Trusted the project's .mcp.json" in n.message for n in screen.query(NoticeLine))
