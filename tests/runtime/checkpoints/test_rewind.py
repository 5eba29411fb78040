"""Rewind: conversation only, code only, or both; the chat log reproduces it on resume."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.runtime.checkpoints.test_rounds import call
from wyckoff_cli.core.messages import Message
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
from wyckoff_cli.runtime.checkpoints.hooks import CheckpointHooks
from wyckoff_cli.runtime.checkpoints.rewind import CHOICES, CheckpointCommands, RewindChoice
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.storage.chatlog import read_chat
from wyckoff_cli.storage.recorder import SessionRecorder
from wyckoff_cli.storage.sessions import SessionStore
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy


async def two_turns(
    repo: Path, engine: CheckpointEngine, tmp_path: Path
) -> tuple[SessionStore, SessionRecorder]:
    store = SessionStore(tmp_path / "sessions")
    recorder = store.create(repo, model="scripted:test")
    rounds = [
        call("write_file", path="a.txt", content="a\n"),
        {"text": "wrote a"},
        call("run_shell", command="echo b > b.txt && rm README.md"),
        {"text": "made b"},
    ]
    runtime = AgentRuntime(
        ScriptedProvider(rounds),
        default_registry(),
        workspace=repo,
        hooks=[CheckpointHooks(engine, recorder.id)],
        results_dir=recorder.results_dir,
        policy=ApprovalPolicy(mode="yolo"),
    )
    for prompt in ("first: write a", "second: make b"):
        async for event in runtime.run_stream(recorder.conversation, prompt):
            recorder.record(event)
    return store, recorder


def user_texts(history: Sequence[Message]) -> list[str]:
    return [m.text for m in history if m.role == "user"]


async def test_the_picker_lists_user_messages_newest_first_with_files_changed_after(
    repo: Path, engine: CheckpointEngine, tmp_path: Path
) -> None:
    _, recorder = await two_turns(repo, engine, tmp_path)
    points = CheckpointCommands(engine, recorder.id).rewind_points(recorder.conversation)
    assert [p.text for p in points] == ["second: make b", "first: write a"]
    assert sorted(points[0].files) == ["README.md", "b.txt"]
    assert sorted(points[1].files) == ["README.md", "a.txt", "b.txt"]
    assert "3 files changed" in points[1].label
    assert [c.label for c in CHOICES] == ["Code and conversation", "Conversation only", "Code only"]


async def test_rewind_conversation_only(repo: Path, engine: CheckpointEngine, tmp_path: Path) -> None:
    store, recorder = await two_turns(repo, engine, tmp_path)
    commands = CheckpointCommands(engine, recorder.id)
    point = commands.rewind_points(recorder.conversation)[0]
    preview = commands.preview_rewind(point, RewindChoice.CONVERSATION, recorder.conversation)
    assert preview.plan is None and "Code: left as it is." in preview.text()
    result = commands.apply_rewind(preview, recorder.conversation)
    assert result.input_text == "second: make b"
    assert user_texts(recorder.conversation) == ["first: write a"]
    assert (repo / "b.txt").exists() and (repo / "a.txt").exists()  # code untouched
    recorder.close()
    assert user_texts(read_chat(recorder.directory / "chat.jsonl").history) == ["first: write a"]
    resumed = store.load(recorder.id)
    assert [m.id for m in resumed.history] == [m.id for m in recorder.conversation]


async def test_rewind_code_only(repo: Path, engine: CheckpointEngine, tmp_path: Path) -> None:
    _, recorder = await two_turns(repo, engine, tmp_path)
    commands = CheckpointCommands(engine, recorder.id)
    before = recorder.conversation.messages
    point = commands.rewind_points(recorder.conversation)[1]  # before "first"
    preview = commands.preview_rewind(point, RewindChoice.CODE, recorder.conversation)
    assert preview.plan is not None
    assert {(f.path, f.action) for f in preview.plan.files} == {
        ("a.txt", "delete"),
        ("b.txt", "delete"),
        ("README.md", "recreate"),
    }
    assert "Conversation: kept as it is." in preview.text() and "+# Project" in preview.text()
    result = commands.apply_rewind(preview, recorder.conversation)
    assert result.input_text is None and result.saved is not None
    assert not (repo / "a.txt").exists() and not (repo / "b.txt").exists()
    assert (repo / "README.md").read_text() == "# Project\n"
    assert recorder.conversation.messages == before


async def test_rewind_code_and_conversation(repo: Path, engine: CheckpointEngine, tmp_path: Path) -> None:
    store, recorder = await two_turns(repo, engine, tmp_path)
    commands = CheckpointCommands(engine, recorder.id)
    point = commands.rewind_points(recorder.conversation)[0]  # before "second"
    preview = commands.preview_rewind(point, RewindChoice.BOTH, recorder.conversation)
    assert preview.messages_removed == 4  # the second turn: its message, call, result, answer
    result = commands.apply_rewind(preview, recorder.conversation)
    assert result.input_text == "second: make b"
    assert (repo / "a.txt").exists() and not (repo / "b.txt").exists()
    assert (repo / "README.md").exists()
    assert user_texts(recorder.conversation) == ["first: write a"]
    recorder.close()
    assert user_texts(store.load(recorder.id).history) == ["first: write a"]
    # and the code restore itself can be undone
    plan = engine.plan(result.saved)  # type: ignore[arg-type]
    assert {(f.path, f.action) for f in plan.files} == {("b.txt", "recreate"), ("README.md", "delete")}


@pytest.mark.parametrize("choice", list(RewindChoice))
async def test_a_message_without_later_file_changes_restores_no_code(
    repo: Path, engine: CheckpointEngine, tmp_path: Path, choice: RewindChoice
) -> None:
    _, recorder = await two_turns(repo, engine, tmp_path)
    commands = CheckpointCommands(engine, recorder.id)
    recorder.conversation.append(Message.user("third: just a question"))
    point = commands.rewind_points(recorder.conversation)[0]
    assert point.files == () and point.checkpoint is None
    preview = commands.preview_rewind(point, choice, recorder.conversation)
    assert preview.plan is None
