"""The system prompt: what it contains, and that it stays byte-identical across rounds."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from tests.runtime.support import collect, make_runtime, make_tool
from wyckoff_cli.context.instructions import load_project_instructions
from wyckoff_cli.context.manager import ContextManager
from wyckoff_cli.context.memory import MemoryStore
from wyckoff_cli.context.prompt import Environment, SystemPromptBuilder, load_prompt, tool_guidance
from wyckoff_cli.core.conversation import Conversation

ENV = Environment("Linux (x86_64)", "/bin/bash", Path("/repo"), True, date(2025, 3, 14))


def test_the_prompt_has_the_base_tool_notes_environment_and_instructions(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Run tests with `make test`.", encoding="utf-8")
    builder = SystemPromptBuilder(
        ENV, ("read_file", "run_shell", "no_such_tool"), load_project_instructions(tmp_path)
    )
    prompt = builder.build()
    assert prompt.startswith(load_prompt("system"))
    assert "## read_file\n" in prompt and "## run_shell\n" in prompt
    assert "## edit_file" not in prompt  # only the tools this session has
    assert prompt.index("## read_file") < prompt.index("## run_shell")
    assert "- Workspace root: /repo\n- Git repository: yes\n- Today's date: 2025-03-14" in prompt
    assert "# Project instructions" in prompt and "## AGENTS.md\n\nRun tests with `make test`." in prompt
    assert builder.build() == prompt


def test_the_environment_has_the_date_but_not_the_time(tmp_path: Path) -> None:
    env = Environment.detect(tmp_path, today=date(2030, 1, 2))
    rendered = env.render()
    assert "2030-01-02" in rendered
    assert ":" not in rendered.split("Today's date: ")[1]
    assert "Git repository: no" in rendered or "Git repository: yes" in rendered


def test_every_builtin_tool_has_usage_notes() -> None:
    names = [
        "read_file",
        "write_file",
        "edit_file",
        "list_dir",
        "glob",
        "grep",
        "run_shell",
        "task_output",
        "task_stop",
        "todo_write",
        "remember",
    ]
    guidance = tool_guidance(names)
    for name in names:
        assert f"## {name}\n" in guidance


async def test_system_prompt_bytes_are_identical_across_rounds(workspace: Path, tmp_path: Path) -> None:
    (workspace / "AGENTS.md").write_text("Use tabs.", encoding="utf-8")
    store = MemoryStore(tmp_path / "memory.db")
    store.add("The user prefers answers in French", kind="preference", scope="user")
    manager = ContextManager(
        context_window=200_000,
        max_output=8_000,
        prompt=SystemPromptBuilder(
            Environment.detect(workspace), ("read_file",), load_project_instructions(workspace)
        ),
        memory=store,
        project_root=workspace,
    )
    rounds = [
        {"tool_calls": [{"name": "read_file", "args": {"path": "a.py"}}]},
        {"tool_calls": [{"name": "read_file", "args": {"path": "b.py"}}]},
        {"text": "Done."},
        {"text": "Voilà, en français."},
    ]
    runtime, provider = make_runtime(rounds, [make_tool("read_file")], workspace, context=manager)
    history = Conversation()
    await collect(runtime, "read a.py and b.py", history, system_prompt=manager.system_prompt)
    await collect(runtime, "answer in French please", history, system_prompt=manager.system_prompt)
    prompts = {request.system_prompt.encode("utf-8") for request in provider.requests}
    assert len(provider.requests) == 4
    assert len(prompts) == 1
    assert "Use tabs." in provider.requests[0].system_prompt
    # the per-turn memory went into the user message, not the system prompt
    assert "prefers answers in French" not in provider.requests[-1].system_prompt
    second_request = history[-2]
    assert second_request.role == "user"
    assert second_request.parts[0].text.startswith("<relevant-memories>")
    assert "prefers answers in French" in second_request.parts[0].text
    # and each request's messages extend the previous one's (the cached prefix holds)
    for before, after in zip(provider.requests, provider.requests[1:], strict=False):
        assert after.messages[: len(before.messages)] == before.messages
