"""Planted secrets never reach the disk or a listing (issue 27), end to end.

One `wyckoff run` (scripted provider) gets every planted secret of
tests/storage/test_redact.py in its prompt, writes them to a file with a tool call
(so they are in the call's arguments and in `checkpoints.jsonl`'s call list), reads
them back with a shell command (the tool output), and says them in its answer. Then
none may be found in: any file under the Wyckoff home (chat log, session files,
scratchpad, checkpoints.jsonl, the log), `sessions show`, `sessions export` (Markdown
and JSON) or `sessions list --json`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.storage.test_redact import PLANTED
from wyckoff_cli.cli.main import main

Capture = pytest.CaptureFixture[str]
SECRETS = [secret for _, _, secret in PLANTED]
TEXT = "\n".join(text for _, text, _ in PLANTED)


def leaks(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


def test_no_planted_secret_is_stored_or_listed(
    tmp_path: Path,
    workspace: Path,
    isolated_environment: Path,
    capsys: Capture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = [
        {"id": "w1", "name": "write_file", "args": {"path": "notes.txt", "content": TEXT}},
        {"id": "s1", "name": "run_shell", "args": {"command": "cat notes.txt"}},
    ]
    calls += [  # one call per secret, so each is within what checkpoints.jsonl keeps of a call
        {"id": f"w{n}", "name": "write_file", "args": {"path": f"secret-{n}.txt", "content": f"x {text}"}}
        for n, (_, text, _) in enumerate(PLANTED, 2)
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rounds": [{"tool_calls": calls}, {"text": f"Here they are:\n{TEXT}"}]}))
    argv = ["run", "-m", f"scripted:{script}", "--cwd", str(workspace), "--permission-mode", "yolo"]
    assert main([*argv, "--sandbox", "off", "--output-format", "json", f"Keep these safe:\n{TEXT}"]) == 0
    session_id = json.loads(capsys.readouterr().out)["session_id"]
    assert (workspace / "notes.txt").read_text() == TEXT  # the work itself is untouched

    stored = [p for p in isolated_environment.rglob("*") if p.is_file()]
    names = {p.name for p in stored}
    assert {"chat.jsonl", "session.json", "checkpoints.jsonl"} <= names, names
    for path in stored:
        found = leaks(path.read_bytes().decode("utf-8", errors="replace"))
        assert not found, f"{path} holds {found}"
    checkpoint_calls = (next(p for p in stored if p.name == "checkpoints.jsonl")).read_text()
    assert '"write_file"' in checkpoint_calls and "[REDACTED]" in checkpoint_calls

    monkeypatch.chdir(workspace)
    for command in (
        ["sessions", "show", session_id],
        ["sessions", "show", session_id, "--expand"],
        ["sessions", "export", session_id],
        ["sessions", "export", session_id, "--format", "json"],
        ["sessions", "list", "--json"],
        ["sessions", "list"],
    ):
        assert main(command) == 0, command
        out = capsys.readouterr().out
        assert session_id in out or command[1] != "list"
        assert not leaks(out), (command, leaks(out))
