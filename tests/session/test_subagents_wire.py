"""A sub-agent run end to end for each provider: the real SDK clients against the
loopback fake server; the parent and its child share the model (`inherit`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.session.subagent_support import build, child_events, make_builder, run, task_call
from wyckoff_cli.core import events as ev
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.testing.fake_server import FakeServer

KEY = "fake-key-for-the-fake-server"
MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-test", "gemini": "gemini-2.5-pro"}


@pytest.mark.parametrize("vendor", sorted(MODELS))
async def test_an_explore_child_runs_end_to_end(vendor: str, workspace: Path) -> None:
    (workspace / "lib.py").write_text("def answer():\n    return 42\n", encoding="utf-8")
    with FakeServer() as server:
        server.script(
            {"tool_calls": [task_call("explore", "Where is answer defined?", call_id="t_parent")]},
            {"tool_calls": [{"name": "grep", "args": {"pattern": "def answer"}, "id": "t_child"}]},
            {"text": "answer is defined at lib.py:1", "usage": {"input_tokens": 500, "output_tokens": 20}},
            {"text": "It is in lib.py."},
        )
        spec = ModelSpec(vendor, MODELS[vendor], base_url=server.url_for(vendor), api_key=KEY)
        provider = build_provider(spec)
        session = build(make_builder(workspace, lambda _model: provider), f"{vendor}:{MODELS[vendor]}")
        events = await run(session, "find answer")
        bodies = server.bodies
        await session.aclose()
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "completed" and done.text == "It is in lib.py."
    child_results = child_events(events, ev.ToolSucceeded)
    assert child_results and "lib.py" in child_results[0].result
    result = next(e for e in events if isinstance(e, ev.ToolSucceeded) and e.name == "task")
    assert result.result.startswith("answer is defined at lib.py:1\n\n[explore-")
    assert "2 rounds, 1 tool call" in result.result
    # the child's requests carried only its own tools and the task prompt
    assert len(bodies) == 4
    child_request = json.dumps(bodies[1])
    assert "Where is answer defined?" in child_request and "find answer" not in child_request
    assert '"task"' not in child_request and '"write_file"' not in child_request
    assert '"task"' in json.dumps(bodies[0])
    # the parent's last request holds the task result, not the child's grep
    assert "lib.py:1" in json.dumps(bodies[3]) and "def answer" not in json.dumps(bodies[3]).replace(
        "Where is answer defined?", ""
    )


def _run(args: list[str], cwd: Path, server: FakeServer) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY=KEY)
    return subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "run", "--model", "anthropic:claude-sonnet-4-5", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_stream_json_shows_the_child_and_the_budget_stops_the_run(workspace: Path) -> None:
    with FakeServer() as server:
        server.script(
            {"tool_calls": [task_call("explore", "Look everywhere", call_id="t_parent")]},
            {
                "tool_calls": [{"name": "glob", "args": {"pattern": "**/*"}, "id": "t_child"}],
                "usage": {"input_tokens": 1_000_000, "output_tokens": 10},  # $3 at Sonnet's price
            },
            {"text": "never sent"},
        )
        result = _run(["--output-format", "stream-json", "--max-budget-usd", "1", "look"], workspace, server)
        requests = len(server.requests)
    assert "Traceback" not in result.stderr, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    wrapped = [e for e in events if e["type"] == "subagent"]
    assert wrapped and {e["agent"] for e in wrapped} == {"explore"}
    assert all(e["parent_call_id"] == "t_parent" and e["agent_id"].startswith("explore-") for e in wrapped)
    kinds = [e["event"]["type"] for e in wrapped]
    assert "tool_start" in kinds and "usage" in kinds and kinds[-1] == "done"
    assert wrapped[-1]["event"]["reason"] == "budget"
    assert requests == 2  # the child stopped before its second call, the parent before its second
    done = events[-1]
    assert done["type"] == "done" and done["reason"] == "budget"
    notice = events[-2]
    assert notice["type"] == "notice" and "budget of $1.00 was reached" in notice["message"]


@pytest.mark.parametrize("value", ["0", "-2", "nan", "lots"])
def test_a_bad_budget_is_a_clear_error(workspace: Path, value: str) -> None:
    with FakeServer() as server:
        result = _run(["--max-budget-usd", value, "hi"], workspace, server)
    assert result.returncode == 2 and "--max-budget-usd" in result.stderr and "Traceback" not in result.stderr
