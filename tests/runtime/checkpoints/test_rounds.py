"""Checkpoints taken by the runtime: edits and shell commands undone, on real repos."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.runtime.checkpoints.conftest import dot_git_state
from tests.runtime.support import collect, of_type
from wyckoff_cli.core import events as ev
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
from wyckoff_cli.runtime.checkpoints.hooks import SIDE_EFFECTS_NOTICE, CheckpointHooks, checkpoint_hooks
from wyckoff_cli.runtime.checkpoints.rewind import CheckpointCommands
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.storage.config import CheckpointsConfig
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

SESSION = "20261201-100000-abcd"


def runtime_for(repo: Path, engine: CheckpointEngine, rounds: list[dict[str, object]]) -> AgentRuntime:
    return AgentRuntime(
        ScriptedProvider(rounds),
        default_registry(),
        workspace=repo,
        policy=ApprovalPolicy(mode="yolo"),
        hooks=[CheckpointHooks(engine, SESSION)],
        results_dir=repo.parent / "results",
    )


def call(name: str, **args: object) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "args": args}]}


async def test_edit_write_and_shell_changes_are_all_undone(repo: Path, engine: CheckpointEngine) -> None:
    before_git = dot_git_state(repo)
    rounds = [
        call("read_file", path="src/app.py"),
        call("edit_file", path="src/app.py", old="return 1", new="return 2"),
        call("write_file", path="src/new.py", content="print('new')\n"),
        call("run_shell", command="rm README.md && mv src/app.py src/main.py && echo made > made.txt"),
        {"text": "Done."},
    ]
    runtime = runtime_for(repo, engine, rounds)
    events, history = await collect(runtime, "change things")
    assert not of_type(events, ev.ToolFailed), of_type(events, ev.ToolFailed)
    assert not (repo / "README.md").exists() and (repo / "src" / "main.py").exists()
    assert (repo / "made.txt").read_text() == "made\n"

    checkpoints = engine.checkpoints(SESSION)
    assert [c.calls[0]["name"] for c in checkpoints] == ["edit_file", "write_file", "run_shell"]
    user_id = history[0].id
    assert {c.message_id for c in checkpoints} == {user_id}
    assert checkpoints[1].files == ["src/app.py"]  # what changed since the previous checkpoint
    assert checkpoints[2].files == ["src/new.py"]
    assert all(c.after is not None for c in checkpoints)
    notices = [e.message for e in of_type(events, ev.Notice)]
    assert notices == [SIDE_EFFECTS_NOTICE]  # once, when the first command ran

    commands = CheckpointCommands(engine, SESSION)
    plan = commands.preview_undo()  # the shell round
    assert plan is not None
    assert {(f.path, f.action) for f in plan.files} == {
        ("README.md", "recreate"),
        ("src/app.py", "recreate"),
        ("src/main.py", "delete"),
        ("made.txt", "delete"),
    }
    assert "made.txt" in plan.diff and "-made" in plan.diff
    commands.undo(plan)
    assert (repo / "README.md").read_text() == "# Project\n"
    assert (repo / "src" / "app.py").read_text() == "def main():\n    return 2\n"
    assert not (repo / "src" / "main.py").exists() and not (repo / "made.txt").exists()

    plan = commands.preview_undo()  # the write_file round
    assert plan is not None and [(f.path, f.action) for f in plan.files] == [("src/new.py", "delete")]
    commands.undo(plan)
    assert not (repo / "src" / "new.py").exists()

    plan = commands.preview_undo()  # the edit_file round
    assert plan is not None and [(f.path, f.action) for f in plan.files] == [("src/app.py", "restore")]
    commands.undo(plan)
    assert (repo / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    assert commands.preview_undo() is None  # nothing left to undo

    # the ignored file and the staged file were never touched; the user's .git neither
    assert (repo / "debug.log").read_text() == "ignored log\n"
    assert (repo / "notes.txt").read_text() == "staged\n"
    assert dot_git_state(repo) == before_git


async def test_redo_reverses_undos_in_order(repo: Path, engine: CheckpointEngine) -> None:
    rounds = [
        call("write_file", path="one.txt", content="1\n"),
        call("run_shell", command="echo 2 > two.txt"),
        {"text": "ok"},
    ]
    await collect(runtime_for(repo, engine, rounds), "make files")
    commands = CheckpointCommands(engine, SESSION)
    for _ in range(2):
        plan = commands.preview_undo()
        assert plan is not None
        commands.undo(plan)
    assert not (repo / "one.txt").exists() and not (repo / "two.txt").exists()
    plan = commands.preview_redo()
    assert plan is not None and [(f.path, f.action) for f in plan.files] == [("one.txt", "recreate")]
    commands.redo(plan)
    assert (repo / "one.txt").exists() and not (repo / "two.txt").exists()
    plan = commands.preview_redo()
    assert plan is not None
    commands.redo(plan)
    assert (repo / "two.txt").read_text() == "2\n"
    assert commands.preview_redo() is None
    plan = commands.preview_undo()  # undo works again after the redos
    assert plan is not None and [(f.path, f.action) for f in plan.files] == [("two.txt", "delete")]


async def test_rounds_of_reads_take_no_checkpoint(repo: Path, engine: CheckpointEngine) -> None:
    rounds = [call("read_file", path="src/app.py"), call("list_dir", path="."), {"text": "ok"}]
    events, _ = await collect(runtime_for(repo, engine, rounds), "look")
    assert engine.checkpoints(SESSION) == []
    assert not of_type(events, ev.Notice)


async def test_a_command_that_changes_nothing_is_not_an_undo_step(
    repo: Path, engine: CheckpointEngine
) -> None:
    rounds = [
        call("write_file", path="a.txt", content="a\n"),
        call("run_shell", command="ls"),
        {"text": "ok"},
    ]
    await collect(runtime_for(repo, engine, rounds), "go")
    plan = CheckpointCommands(engine, SESSION).preview_undo()
    assert plan is not None and [(f.path, f.action) for f in plan.files] == [("a.txt", "delete")]


async def test_without_git_binary_dulwich_takes_the_checkpoints(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(repo / "no-such-bin"))
    hooks = checkpoint_hooks(repo, CheckpointsConfig(), SESSION)
    assert isinstance(hooks[0], CheckpointHooks) and hooks[0].engine is not None
    assert type(hooks[0].engine.repo).__name__ == "DulwichShadowRepo"
    runtime = AgentRuntime(
        ScriptedProvider([call("write_file", path="a.txt", content="a\n"), {"text": "ok"}]),
        default_registry(),
        workspace=repo,
        policy=ApprovalPolicy(mode="yolo"),
        hooks=hooks,
        results_dir=repo.parent / "results",
    )
    events, _ = await collect(runtime, "go")
    assert not [e for e in of_type(events, ev.Notice) if e.level == "warning"]
    commands = CheckpointCommands(hooks[0].engine, SESSION)
    plan = commands.preview_undo()
    assert plan is not None
    commands.undo(plan)
    assert not (repo / "a.txt").exists()


async def test_without_git_or_dulwich_the_session_runs_and_says_checkpoints_are_off(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(repo / "no-such-bin"))
    monkeypatch.setitem(sys.modules, "wyckoff_cli.runtime.checkpoints.dulwich_repo", None)  # import fails
    hooks = checkpoint_hooks(repo, CheckpointsConfig(), SESSION)
    assert isinstance(hooks[0], CheckpointHooks) and hooks[0].engine is None
    rounds = [
        call("write_file", path="a.txt", content="a\n"),
        call("edit_file", path="a.txt", old="a", new="b"),
        {"text": "ok"},
    ]
    runtime = AgentRuntime(
        ScriptedProvider(rounds),
        default_registry(),
        workspace=repo,
        policy=ApprovalPolicy(mode="yolo"),
        hooks=hooks,
        results_dir=repo.parent / "results",
    )
    events, _ = await collect(runtime, "go")
    warnings = [e.message for e in of_type(events, ev.Notice) if e.level == "warning"]
    assert len(warnings) == 1 and "Checkpoints are off" in warnings[0]
    assert "git binary or the dulwich library" in warnings[0]
    assert (repo / "a.txt").read_text() == "b\n"


def test_checkpoints_can_be_turned_off(repo: Path) -> None:
    assert checkpoint_hooks(repo, CheckpointsConfig(enabled=False), SESSION) == []


async def test_a_failing_checkpoint_never_breaks_the_turn(
    repo: Path, engine: CheckpointEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(engine, "checkpoint", broken)
    rounds = [
        call("write_file", path="a.txt", content="a\n"),
        call("write_file", path="b.txt", content="b\n"),
    ]
    events, _ = await collect(runtime_for(repo, engine, [*rounds, {"text": "ok"}]), "go")
    warnings = [e.message for e in of_type(events, ev.Notice) if e.level == "warning"]
    assert warnings == [
        "Checkpoints are off for this session (undo and rewind of code will not work): RuntimeError: disk on fire"
    ]
    assert (repo / "a.txt").exists() and (repo / "b.txt").exists()
    assert of_type(events, ev.TurnDone)[0].reason == "completed"
