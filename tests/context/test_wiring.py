"""The composition root builds the context manager from config, files and model facts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.models.facts import resolve_model_facts
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.session.builder import SessionBuilder, open_workspace


def test_build_context_uses_facts_config_instructions_and_memory(
    workspace: Path, isolated_environment: Path
) -> None:
    (workspace / "AGENTS.md").write_text("Project rule.", encoding="utf-8")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "AGENTS.md").write_text("Sub rule.", encoding="utf-8")
    user_dir = isolated_environment / "config"
    user_dir.mkdir(exist_ok=True)
    (user_dir / "AGENTS.md").write_text("User rule.", encoding="utf-8")
    (workspace / ".wyckoff" / "config.toml").write_text("[context]\nreserve_tokens = 10000\n")
    ws = open_workspace(workspace / "sub")
    builder = SessionBuilder(ws, cwd=workspace / "sub", provider_factory=lambda _model: ScriptedProvider([]))
    session = builder.build(model="scripted:test", mode="default")
    manager = session.context
    assert manager is not None
    facts = resolve_model_facts("scripted:test")
    assert (manager.context_window, manager.max_output) == (facts.context_window, facts.max_output)
    assert manager.threshold == manager.context_window - 10_000
    prompt = manager.system_prompt
    assert prompt.index("Project rule.") < prompt.index("Sub rule.") < prompt.index("User rule.")
    assert "## remember\n" in prompt
    assert manager.memory is not None
    assert manager.memory.path == isolated_environment / "data" / "memory.db"
    assert not manager.memory.path.exists()  # opened on first use only
    runtime = session.runtime
    assert "remember" in runtime.tools and runtime.context is manager
    # the prompt lists the tools of the registry the runtime really uses
    assert all(f"## {name}\n" in prompt for name in runtime.tools.names() if f"## {name}" in prompt)
    assert session.registry is runtime.tools


def test_memory_can_be_turned_off(workspace: Path) -> None:
    (workspace / ".wyckoff" / "config.toml").write_text("[context]\nmemory = false\n")
    builder = SessionBuilder(open_workspace(workspace), provider_factory=lambda _model: ScriptedProvider([]))
    manager = builder.build(model="scripted:test", mode="default").context
    assert manager is not None
    assert manager.memory is None and manager.tools() == []
    assert "## remember" not in manager.system_prompt


def test_wyckoff_run_recalls_memories(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["memory", "add", "The deploy script lives in ops/deploy.sh", "--cwd", str(workspace)]) == 0
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rounds": [{"text": "Use ops/deploy.sh."}]}))
    capsys.readouterr()
    code = main(
        [
            "run",
            "-m",
            f"scripted:{script}",
            "--cwd",
            str(workspace),
            "--output-format",
            "stream-json",
            "--no-session",
            "where is the deploy script?",
        ]
    )
    assert code == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    first = events[0]
    assert first["type"] == "message"
    parts = first["message"]["parts"]
    assert parts[0]["text"].startswith("<relevant-memories>") and "ops/deploy.sh" in parts[0]["text"]
    assert parts[-1]["text"] == "where is the deploy script?"
