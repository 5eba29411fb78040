"""Custom commands, hooks and their trust in the app (Pilot)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.runtime.hook_support import hook_command, inputs
from tests.tui.support import make_app
from tests.tui.test_chat_flows import SIZE, chat, past_pause, send, settle, shell_tool, wait_for_screen
from wyckoff_cli.tui.screens.approval import ApprovalScreen
from wyckoff_cli.tui.screens.trust import HookTrustScreen
from wyckoff_cli.tui.widgets.tool_call import ToolCallView


def claude_hooks(root: Path, command: str) -> None:
    path = root / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}
    path.write_text(json.dumps({"hooks": hooks}))


async def test_untrusted_project_hooks_ask_naming_each_command_then_run(tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "guard", code=2, stderr="not on Fridays")
    root = tmp_path / "project"
    root.mkdir()
    claude_hooks(root, command)
    ran: list[dict[str, Any]] = []
    rounds: list[Any] = [
        {"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "ls"}}]},
        {"text": "ok"},
    ]
    app, _ = make_app(root, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        trust = await wait_for_screen(pilot, HookTrustScreen)
        assert command in str(trust.query_one("#commands").children[0].render())
        await past_pause(pilot)  # past the typing pause
        await pilot.press("y")
        screen = chat(app)
        await send(pilot, "list files")
        await settle(pilot, screen)
        assert ran == []  # the trusted hook blocked it
        view = screen.query_one(ToolCallView)
        assert view.status == "error"
        lines = [line.plain for line in view.hook_lines]
        assert len(lines) == 1 and "PreToolUse hook" in lines[0] and "blocked: not on Fridays" in lines[0]
    assert len(inputs(log)) == 1


async def test_declining_trust_leaves_the_hooks_off(tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "guard", code=2, stderr="blocked")
    root = tmp_path / "project"
    root.mkdir()
    claude_hooks(root, command)
    ran: list[dict[str, Any]] = []
    rounds: list[Any] = [
        {"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "ls"}}]},
        {"text": "ok"},
    ]
    app, _ = make_app(root, rounds, [shell_tool(ran)])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_screen(pilot, HookTrustScreen)
        await past_pause(pilot)
        await pilot.press("n")
        screen = chat(app)
        await send(pilot, "list files")
        approval = await wait_for_screen(pilot, ApprovalScreen)
        await past_pause(pilot)
        approval.dismiss(None)
        await settle(pilot, screen)
        screen.run_command("hooks", "")
        await settle(pilot, screen)
        await pilot.pause()
    assert inputs(log) == []
    assert app.controller.hooks_needing_trust()


async def test_custom_commands_in_help_completion_and_as_a_turn(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "commands" / "git"
    folder.mkdir(parents=True)
    (folder / "commit.md").write_text(
        "---\ndescription: Write a commit\nargument-hint: [msg]\n---\nCommit: $ARGUMENTS"
    )
    app, provider = make_app(tmp_path, [{"text": "done"}], [])
    async with app.run_test(size=SIZE) as pilot:
        screen = chat(app)
        options = screen.completions("/git")
        assert options and options[0][0] == "/git:commit " and "Write a commit" in options[0][1]
        assert "(project (.claude))" in options[0][1]
        await send(pilot, "/help")
        await pilot.pause()
        await send(pilot, "/git:commit fix it")
        await settle(pilot, screen)
    assert provider.requests[0].messages[-1].text == "Commit: fix it"
