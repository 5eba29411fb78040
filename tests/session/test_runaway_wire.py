"""The runaway guard through the real SDKs and the fake server (issue 33): a success
loop ends at the fifth repeat, in a headless parent (exit 1) and in a child, whose
parent is told in the task result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.session.subagent_support import build, child_events, make_builder, run, task_call
from wyckoff_cli.core import events as ev
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.testing.fake_server import FakeServer

KEY = "fake-key-for-the-fake-server"
GLOB = {"name": "glob", "args": {"pattern": "*.py"}}


def test_a_headless_success_loop_ends_at_the_fifth_repeat_with_exit_1(workspace: Path) -> None:
    (workspace / "lib.py").write_text("x = 1\n", encoding="utf-8")
    with FakeServer() as server:
        server.script(*[{"tool_calls": [dict(GLOB, id=f"g{i}")]} for i in range(6)], {"text": "never sent"})
        env = dict(os.environ, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
        result = subprocess.run(
            [sys.executable, "-m", "wyckoff_cli", "run", "--model", "anthropic:claude-sonnet-4-5"]
            + ["--output-format", "stream-json", "list the files"],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        requests = len(server.requests)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert events[-1]["type"] == "done" and events[-1]["reason"] == "loop"
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert any("glob was called 5 times in a row" in n for n in notices)
    assert requests == 5  # the sixth call was never asked for


async def test_a_child_that_loops_ends_and_its_parent_is_told(workspace: Path) -> None:
    (workspace / "lib.py").write_text("x = 1\n", encoding="utf-8")
    with FakeServer() as server:
        server.script(
            {"tool_calls": [task_call("explore", "Find the files", call_id="t_parent")]},
            *[{"tool_calls": [dict(GLOB, id=f"g{i}")]} for i in range(5)],
            {"text": "The helper got stuck in a loop."},
        )
        provider = build_provider(
            ModelSpec("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key=KEY)
        )
        session = build(make_builder(workspace, lambda _model: provider), "anthropic:claude-sonnet-4-5")
        events = await run(session, "find the files")
        requests = len(server.requests)
        await session.aclose()
    child_done = child_events(events, ev.TurnDone)
    assert child_done and child_done[0].reason == "loop"
    task = next(e for e in events if isinstance(e, ev.ToolSucceeded) and e.name == "task")
    assert "The agent ended in a loop" in task.result and "glob was called 5 times" in task.result
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "completed"
    assert requests == 7  # parent, five child rounds, parent
