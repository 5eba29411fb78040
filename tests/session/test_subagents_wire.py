"""A sub-agent run end to end for each provider: the real SDK clients against the
loopback fake server; the parent and its child share the model (`inherit`)."""

from __future__ import annotations

import json
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
