"""Logs go to a private file with keys redacted, never to the terminal."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.storage import paths


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers, root.level = handlers, level


def test_a_crashing_tool_is_logged_to_the_file_redacted_and_not_to_stderr(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-ant-api03-" + "Z" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    script = tmp_path / "s.json"
    rounds: list[Any] = [
        {"tool_calls": [{"name": "read_file", "args": {"path": 12}}]},  # schema error, not a crash
        {"text": "ok"},
    ]
    script.write_text(json.dumps({"rounds": rounds}))
    assert main(["run", "-m", f"scripted:{script}", "--cwd", str(workspace), "hi"]) == 0
    logging.getLogger("wyckoff_cli.test").error(
        "request failed with key %s", secret, exc_info=ValueError(secret)
    )
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and secret not in captured.err
    log = paths.log_file()
    assert log.stat().st_mode & 0o777 == 0o600
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log.read_text()
    assert "request failed with key [REDACTED]" in text and secret not in text
    assert "ValueError: [REDACTED]" in text
