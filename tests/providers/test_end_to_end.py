"""`wyckoff run` end to end against the fake server, one subprocess per vendor.

The base URL comes from the SDK's environment variable and a fake key is given to the
subprocess only: exactly how a person tries Wyckoff offline (docs/PROVIDERS.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wyckoff_cli.testing.fake_server import FakeServer

CASES = [
    ("anthropic:claude-sonnet-4-5", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", False),
    ("openai:gpt-5", "OPENAI_BASE_URL", "OPENAI_API_KEY", True),
    ("gemini:gemini-2.5-pro", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", False),
]


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(("model", "url_variable", "key_variable", "openai_path"), CASES)
def test_wyckoff_run_against_the_fake_server(
    server: FakeServer, workspace: Path, model: str, url_variable: str, key_variable: str, openai_path: bool
) -> None:
    server.script(
        {
            "text": "Hello from the wire.",
            "chunk_size": 4,
            "usage": {"input_tokens": 1200, "output_tokens": 7, "cache_read_tokens": 1000},
        }
    )
    env = dict(os.environ)
    env[url_variable] = server.openai_url if openai_path else server.url
    env[key_variable] = "fake-key-for-the-fake-server"
    result = _run(["--model", model, "--output-format", "json", "Say hello"], workspace, env)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["text"] == "Hello from the wire."
    assert data["reason"] == "completed"
    assert data["usage"]["input_tokens"] == 1200
    assert data["usage"]["cache_read_tokens"] == 1000
    assert len(server.requests) == 1
    assert "fake-key-for-the-fake-server" not in result.stdout + result.stderr


def test_a_missing_key_is_a_one_line_error_before_any_request(server: FakeServer, workspace: Path) -> None:
    env = dict(os.environ)
    env["ANTHROPIC_BASE_URL"] = server.url
    result = _run(["--model", "anthropic:claude-sonnet-4-5", "hi"], workspace, env)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "wyckoff: no API key for anthropic:claude-sonnet-4-5: set the environment variable ANTHROPIC_API_KEY"
    )
    assert server.requests == []


def test_a_provider_error_is_reported_with_its_kind(server: FakeServer, workspace: Path) -> None:
    server.script({"status": 401})
    env = dict(os.environ)
    env["OPENAI_BASE_URL"] = server.openai_url
    env["OPENAI_API_KEY"] = "wrong"
    result = _run(["--model", "openai:gpt-5", "hi"], workspace, env)
    assert result.returncode == 1
    assert "wyckoff: auth: openai:gpt-5: authentication failed" in result.stderr
