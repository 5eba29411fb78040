"""Whole turns through `wyckoff run`: a model (the fake vendor server, through each real
SDK) calls MCP tools of a real stdio server; the result reaches the next request, and
rules and approval behave as for the built-ins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import DEMO
from wyckoff_cli.testing.fake_server import FakeServer

pytestmark = pytest.mark.timeout(120)

CASES = [
    ("anthropic:claude-sonnet-4-5", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "anthropic"),
    ("openai:gpt-5", "OPENAI_BASE_URL", "OPENAI_API_KEY", "openai"),
    ("gemini:gemini-2.5-pro", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "gemini"),
]


@pytest.fixture
def server() -> Any:
    with FakeServer() as fake:
        yield fake


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".wyckoff").mkdir(parents=True)
    entry = {"command": sys.executable, "args": [str(DEMO), "stdio"], "startup_timeout": 30}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": entry}}))
    return root


def wyckoff_run(root: Path, server: FakeServer, case: tuple[str, str, str, str], *args: str) -> Any:
    model, url_variable, key_variable, vendor = case
    env = dict(os.environ)
    env[url_variable] = server.url_for(vendor)
    env[key_variable] = "fake-key"
    return subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "run", "--model", model, "--output-format", "json", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )


def tool_names(vendor: str, body: dict[str, Any]) -> list[str]:
    if vendor == "anthropic":
        return [t["name"] for t in body["tools"]]
    if vendor == "openai":
        return [t["function"]["name"] for t in body["tools"]]
    return [d["name"] for t in body["tools"] for d in t["functionDeclarations"]]


def tool_schema(vendor: str, body: dict[str, Any], name: str) -> dict[str, Any]:
    if vendor == "anthropic":
        return next(t["input_schema"] for t in body["tools"] if t["name"] == name)
    if vendor == "openai":
        return next(t["function"]["parameters"] for t in body["tools"] if t["function"]["name"] == name)
    return next(
        d.get("parametersJsonSchema") or d.get("parameters_json_schema")
        for t in body["tools"]
        for d in t["functionDeclarations"]
        if d["name"] == name
    )


@pytest.mark.parametrize("case", CASES, ids=[c[3] for c in CASES])
def test_model_calls_an_mcp_tool_and_sees_the_result(server: FakeServer, tmp_path: Path, case: Any) -> None:
    vendor = case[3]
    root = project(tmp_path)
    server.script(
        {"tool_calls": [{"name": "mcp__demo__add", "args": {"a": 20, "b": 22}}]},
        {"text": "The sum is 42."},
    )
    result = wyckoff_run(root, server, case, "--trust-mcp", "--allow", "mcp__demo__*", "Add 20 and 22")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["text"] == "The sum is 42."
    first, second = (r.body for r in server.requests)
    names = tool_names(vendor, first)
    assert "mcp__demo__add" in names and "mcp__demo__broken" not in names
    assert names.index("read_file") < names.index("mcp__demo__echo")  # appended after the built-ins
    schema = tool_schema(vendor, first, "mcp__demo__weird")
    if vendor != "anthropic":
        assert "$defs" not in json.dumps(schema) and "$ref" not in json.dumps(schema)
    assert '\\"sum\\": 42' in json.dumps(second) or '"sum": 42' in json.dumps(second)
    results = [e for e in data["events"] if e["type"] == "tool_result"]
    assert results and results[0]["name"] == "mcp__demo__add"


@pytest.mark.parametrize("case", CASES, ids=[c[3] for c in CASES])
def test_an_image_result_reaches_a_model_that_takes_images(
    server: FakeServer, tmp_path: Path, case: Any
) -> None:
    import base64

    from tests.tools.mcp.demo_server import PNG

    vendor = case[3]
    root = project(tmp_path)
    server.script({"tool_calls": [{"name": "mcp__demo__image", "args": {}}]}, {"text": "A tiny image."})
    result = wyckoff_run(root, server, case, "--trust-mcp", "--allow", "mcp__demo__*", "Show me the image")
    assert result.returncode == 0, result.stderr
    second = server.requests[1].body
    text = json.dumps(second)
    data = base64.b64encode(PNG).decode()
    assert data in text and "image/png" in text
    assert "[image image/png, 67 bytes, saved to " in text  # the description is there too
    if vendor == "anthropic":
        (block,) = [
            b
            for m in second["messages"]
            for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        assert block["content"][1] == {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": data},
        }
    elif vendor == "openai":
        assert second["messages"][-1]["role"] == "user"
        assert second["messages"][-1]["content"][1]["image_url"]["url"] == f"data:image/png;base64,{data}"
        assert second["messages"][-2]["role"] == "tool"
    else:
        parts = second["contents"][-1]["parts"]
        assert "functionResponse" in parts[0], parts
        blob = parts[1]["inlineData"]  # protobuf JSON: either spelling of the field name
        assert (blob.get("mimeType") or blob.get("mime_type"), blob["data"]) == ("image/png", data)


@pytest.mark.parametrize("case", CASES[:1], ids=["anthropic"])
def test_without_a_rule_headless_refuses_and_read_only_runs(
    server: FakeServer, tmp_path: Path, case: Any
) -> None:
    root = project(tmp_path)
    server.script(
        {
            "tool_calls": [
                {"name": "mcp__demo__add", "args": {"a": 1, "b": 2}},
                {"name": "mcp__demo__echo", "args": {"text": "free"}},
            ]
        },
        {"text": "ok"},
    )
    result = wyckoff_run(root, server, case, "--trust-mcp", "hi")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    errors = [e for e in data["events"] if e["type"] == "tool_error"]
    results = [e for e in data["events"] if e["type"] == "tool_result"]
    assert [e["name"] for e in errors] == ["mcp__demo__add"]
    assert [e["name"] for e in results] == ["mcp__demo__echo"]
    second = json.dumps(server.requests[1].body)
    assert "echo: free" in second


@pytest.mark.parametrize("case", CASES[:1], ids=["anthropic"])
def test_deny_rule_wins_and_plan_mode_refuses(server: FakeServer, tmp_path: Path, case: Any) -> None:
    root = project(tmp_path)
    (root / ".wyckoff" / "config.toml").write_text('[permissions]\ndeny = ["mcp__demo__add(*\\"a\\":1*)"]\n')
    server.script(
        {"tool_calls": [{"name": "mcp__demo__add", "args": {"a": 1, "b": 2}}]},
        {"tool_calls": [{"name": "mcp__demo__add", "args": {"a": 5, "b": 2}}]},
        {"text": "done"},
    )
    result = wyckoff_run(root, server, case, "--trust-mcp", "--allow", "mcp__demo__*", "hi")
    data = json.loads(result.stdout.strip().splitlines()[-1])
    outcome = [(e["type"], e["name"]) for e in data["events"] if e["type"] in ("tool_error", "tool_result")]
    assert outcome == [("tool_error", "mcp__demo__add"), ("tool_result", "mcp__demo__add")]
    assert "deny rule" in json.dumps(server.requests[1].body)

    server.script({"tool_calls": [{"name": "mcp__demo__add", "args": {"a": 5, "b": 2}}]}, {"text": "planned"})
    result = wyckoff_run(
        root, server, case, "--trust-mcp", "--permission-mode", "plan", "--allow", "mcp__demo__*", "hi"
    )
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert [e["type"] for e in data["events"] if e["type"].startswith("tool_")][-1] == "tool_error"
    assert "plan mode" in json.dumps(server.requests[-1].body)


def test_untrusted_project_servers_do_not_start_headless(server: FakeServer, tmp_path: Path) -> None:
    root = project(tmp_path)
    server.script({"text": "no tools"})
    result = wyckoff_run(root, server, CASES[0], "hi")
    assert result.returncode == 0, result.stderr
    assert "not started (the project's .mcp.json is not trusted): demo" in result.stderr
    assert "--trust-mcp" in result.stderr
    assert not any(n.startswith("mcp__") for n in tool_names("anthropic", server.requests[0].body))


def test_images_in_the_responses_api_input(tmp_path: Path) -> None:
    from wyckoff_cli.core.messages import ImagePart, Message, ToolCallPart
    from wyckoff_cli.providers.openai_responses import convert_input

    (tmp_path / "abc.png").write_bytes(b"abc")
    image = ImagePart("image/png", 1, 1, "ba7816bf", str(tmp_path / "abc.png"), 3)
    call = ToolCallPart("c1", "mcp__demo__image", {})
    messages = [
        Message.user("show it"),
        Message("assistant", (call,)),
        Message.tool_result(
            "c1",
            "mcp__demo__image",
            "[image image/png, 3 bytes]",
            images=[image],
        ),
    ]
    items = convert_input(messages)
    assert items[-2] == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": "[image image/png, 3 bytes]",
    }
    assert items[-1]["content"][1] == {"type": "input_image", "image_url": "data:image/png;base64,YWJj"}
