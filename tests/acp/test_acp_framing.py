"""`wyckoff acp` answers batches and malformed lines per JSON-RPC 2.0 and stays up
(issue 27): a real subprocess gets raw lines on stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.acp.framing import INVALID_REQUEST, PARSE_ERROR, answers_for

INITIALIZE = '{"jsonrpc":"2.0","id":99,"method":"initialize","params":{"protocolVersion":1}}'

# (line, the answers expected: (id, code) each; a list for a batch answer; None: no answer)
LINES: list[tuple[str, Any]] = [
    ("[]", (None, INVALID_REQUEST)),
    (
        '[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}]',
        [(1, INVALID_REQUEST)],
    ),
    (
        '[{"jsonrpc":"2.0","id":"a","method":"x"},{"jsonrpc":"2.0","method":"note"},1,{"id":[1]}]',
        [("a", INVALID_REQUEST), (None, INVALID_REQUEST), (None, INVALID_REQUEST)],
    ),
    ('[{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"x"}}]', None),  # notifications only
    ("[[]]", [(None, INVALID_REQUEST)]),
    ("null", (None, INVALID_REQUEST)),
    ("42", (None, INVALID_REQUEST)),
    ('"initialize"', (None, INVALID_REQUEST)),
    ("true", (None, INVALID_REQUEST)),
    ("{not json", (None, PARSE_ERROR)),
    ("[" * 100_000 + "]" * 100_000, (None, PARSE_ERROR)),  # deeper than the parser goes
    ('{"jsonrpc":"2.0"}', (None, INVALID_REQUEST)),
    ('{"jsonrpc":"2.0","id":7,"method":5}', (7, INVALID_REQUEST)),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}', (None, INVALID_REQUEST)),
    ('{"jsonrpc":"2.0","id":[1],"result":{}}', (None, INVALID_REQUEST)),
]


def codes(answer: Any) -> Any:
    if answer is None:
        return None
    if isinstance(answer, list):
        return [(a["id"], a["error"]["code"]) for a in answer]
    return (answer["id"], answer["error"]["code"])


@pytest.mark.parametrize(("line", "expected"), LINES[:9] + LINES[11:], ids=range(len(LINES) - 2))
def test_each_malformed_value_gets_its_answer(line: str, expected: Any) -> None:
    assert codes(answers_for(json.loads(line))) == expected


def test_requests_notifications_and_responses_pass_on() -> None:
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize"},
        {"jsonrpc": "2.0", "id": "x", "method": "session/new", "params": {}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
        {"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "no"}},
    ):
        assert answers_for(message) is None


def test_the_agent_answers_every_bad_line_and_stays_up(workspace: Path) -> None:
    lines = [line for line, _ in LINES]
    done = subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "acp"],
        input=("\n".join([*lines, INITIALIZE]) + "\n").encode(),
        capture_output=True,
        cwd=workspace,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    expected = [e for _, e in LINES if e is not None]
    assert [codes(a) for a in answers[: len(expected)]] == expected
    last = answers[len(expected) :]
    assert len(last) == 1 and last[0]["id"] == 99 and "result" in last[0]  # the connection stayed up
