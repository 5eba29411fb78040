"""Fixtures for the TUI tests of checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.checkpoints.conftest import git
from wyckoff_cli.core.messages import Message
from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
from wyckoff_cli.runtime.checkpoints.rewind import CheckpointCommands

SESSION = "20261201-100000-abcd"


@pytest.fixture
def checkpoint_session(tmp_path: Path) -> tuple[CheckpointCommands, list[Message], Path]:
    """Two user messages; the agent wrote a.txt after the first and b.txt after the second."""
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q")
    (root / "keep.txt").write_text("keep\n")
    engine = CheckpointEngine(root)
    first, second = Message.user("first: write a"), Message.user("second: write b")
    history = [first, Message.assistant("ok"), second, Message.assistant("ok")]
    for message, name in ((first, "a.txt"), (second, "b.txt")):
        checkpoint = engine.checkpoint(SESSION, message.id, [{"id": "1", "name": "write_file", "args": {}}])
        (root / name).write_text(f"{name}\n")
        engine.record_after(checkpoint)
    return CheckpointCommands(engine, SESSION), history, root
