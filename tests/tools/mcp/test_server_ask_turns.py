"""Whole `wyckoff run` turns where an MCP server (asking_server.py) asks for the model
and the user during its tool call: the sampling request runs on the session's model
(the fake vendor server, through the real SDK) only when a rule allows it, and its
usage counts as the server's; forms get the server's unattended answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.test_server_asks import ASKER
from tests.tools.mcp.test_turns import CASES, wyckoff_run
from wyckoff_cli.testing.fake_server import FakeServer

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def server() -> Any:
    with FakeServer() as fake:
        yield fake


def project(tmp_path: Path, **entry: Any) -> Path:
    root = tmp_path / "project"
    (root / ".wyckoff").mkdir(parents=True)
    server = {"command": sys.executable, "args": [str(ASKER)], "startup_timeout": 30, **entry}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"asker": server}}))
    return root


def tool_result_text(vendor: str, body: dict[str, Any]) -> str:
    return json.dumps(body["messages"][-1] if vendor != "gemini" else body["contents"][-1])


@pytest.mark.parametrize("case", CASES[:2], ids=[c[3] for c in CASES[:2]])
def test_an_allowed_sampling_request_runs_on_the_sessions_model(
    server: FakeServer, tmp_path: Path, case: Any
) -> None:
    vendor = case[3]
    root = project(tmp_path)
    server.script(
        {"tool_calls": [{"name": "mcp__asker__ask_model", "args": {"question": "Say hello"}}]},
        {"text": "Hello there!"},  # the sampling request's answer
        {"text": "Done."},
    )
    result = wyckoff_run(
        root,
        server,
        case,
        "--trust-mcp",
        "--allow",
        "mcp__asker__*",
        "--allow",
        "McpSampling(asker)",
        "Ask it",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1])["text"] == "Done."
    first, sampling, last = (r.body for r in server.requests)
    text = json.dumps(sampling)
    assert "Be brief." in text and "Answer in at most 64 tokens." in text and "Say hello" in text
    offered = json.dumps(sampling.get("tools") or [])  # the vendor's own search may be on (as for titles)
    assert "mcp__" not in offered and "read_file" not in offered  # no tools of the session
    assert "Ask it" not in text  # nothing of the session's conversation
    assert "said: Hello there!" in tool_result_text(vendor, last)
    usage = [u for u in recorded_usage() if u.get("purpose") == "mcp_sampling"]
    assert len(usage) == 1 and usage[0]["source"] == "asker"  # paid for, and the server's
    by_agent = subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "usage", "--by", "agent", "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert by_agent.returncode == 0, by_agent.stderr
    assert "mcp:asker" in by_agent.stdout and "main" in by_agent.stdout


def recorded_usage() -> list[dict[str, Any]]:
    """Every usage event the session's log recorded (under the test's WYCKOFF_HOME)."""
    found = []
    for log in Path(os.environ["WYCKOFF_HOME"]).rglob("*.jsonl"):
        for line in log.read_text(encoding="utf-8").splitlines():
            if '"usage"' in line:
                data = json.loads(line)
                found += (
                    [data]
                    if data.get("type") == "usage"
                    else [v for v in data.values() if isinstance(v, dict) and v.get("type") == "usage"]
                )
    return found


@pytest.mark.parametrize("case", CASES[:1], ids=[c[3] for c in CASES[:1]])
def test_headless_runs_refuse_sampling_without_a_rule(server: FakeServer, tmp_path: Path, case: Any) -> None:
    root = project(tmp_path)
    server.script(
        {"tool_calls": [{"name": "mcp__asker__ask_model", "args": {"question": "Say hello"}}]},
        {"text": "Done."},
    )
    result = wyckoff_run(root, server, case, "--trust-mcp", "--allow", "mcp__asker__*", "Ask it")
    assert result.returncode == 0, result.stderr
    assert len(server.requests) == 2  # the model was never asked on the server's behalf
    said = tool_result_text("anthropic", server.requests[1].body)
    assert "refused: the user did not allow asker to use the model" in said
    assert "McpSampling(asker)" in said  # how to allow it


@pytest.mark.parametrize(("entry", "action"), [({}, "decline"), ({"elicitation": "cancel"}, "cancel")])
def test_headless_runs_answer_forms_with_the_servers_setting(
    server: FakeServer, tmp_path: Path, entry: dict[str, str], action: str
) -> None:
    root = project(tmp_path, **entry)
    server.script({"tool_calls": [{"name": "mcp__asker__ask_user", "args": {}}]}, {"text": "Done."})
    result = wyckoff_run(root, server, CASES[0], "--trust-mcp", "--allow", "mcp__asker__*", "Ask me")
    assert result.returncode == 0, result.stderr
    said = tool_result_text("anthropic", server.requests[1].body)
    assert f'\\"action\\": \\"{action}\\"' in said
