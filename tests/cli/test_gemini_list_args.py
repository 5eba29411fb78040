"""Gemini `functionCall.args` sent as a list: the raw-SSE adapter passes the call on, and
the runtime answers it with a tool error the model can act on (issue 23)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from wyckoff_cli.testing.fake_server import FakeServer

LIST_ARGS = (
    'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":'
    '{"name":"read_file","args":["a","b"]}}]},"finishReason":"STOP"}],'
    '"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2}}\r\n\r\n'
)


def test_list_arguments_from_gemini_become_a_tool_error(workspace: Path, tmp_path: Path) -> None:
    sse = tmp_path / "list_args.sse"
    sse.write_text(LIST_ARGS, encoding="utf-8")
    with FakeServer() as server:
        server.script({"sse_file": str(sse)}, {"text": "Sorry, one object it is."})
        env = dict(os.environ, GOOGLE_GEMINI_BASE_URL=server.url, GEMINI_API_KEY="fake-key")
        done = subprocess.run(
            [sys.executable, "-m", "wyckoff_cli", "run", "--model", "gemini:gemini-2.5-pro"]
            + ["--no-session", "--output-format", "json", "go"],
            env=env,
            capture_output=True,
            text=True,
            cwd=workspace,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["reason"] == "completed" and result["error"] is None
    (error,) = [e["error"] for e in result["events"] if e["type"] == "tool_error"]
    assert error.startswith(
        "Invalid arguments for read_file: tool arguments must be a JSON object, got an array"
    )
