"""The checkpoint engine on real repositories: what a snapshot holds, previews, restores."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.runtime.checkpoints.conftest import dot_git_state, git
from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
from wyckoff_cli.runtime.checkpoints.shadow import CheckpointError, GitMissing, ShadowRepo
from wyckoff_cli.storage.config import CheckpointsConfig

S = "20261201-100000-abcd"


def agent_round(engine: CheckpointEngine, change: object, message_id: str = "m1") -> object:
    """A round as the hooks make it: checkpoint, the tools' change, the end state."""
    checkpoint = engine.checkpoint(
        S, message_id, [{"id": "c1", "name": "run_shell", "args": {"command": "x"}}]
    )
    change()  # type: ignore[operator]
    engine.record_after(checkpoint)
    return checkpoint


def test_the_shadow_repository_lives_under_the_data_dir(
    engine: CheckpointEngine, repo: Path, backend: str
) -> None:
    assert type(engine.repo).__name__ == {"git": "ShadowRepo", "dulwich": "DulwichShadowRepo"}[backend]
    engine.snapshot()
    home = Path(os.environ["WYCKOFF_HOME"])
    assert engine.repo.git_dir.is_relative_to(home / "data" / "checkpoints")
    assert not any(p.name == "wyckoff-index" for p in repo.rglob("*"))


def test_snapshot_holds_untracked_files_but_not_ignored_excluded_or_oversized(
    repo: Path, backend: str
) -> None:
    (repo / "untracked.py").write_text("x = 1\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("ignored by .gitignore\n")
    (repo / "secret.env").write_text("KEY=1\n")
    (repo / "big.dat").write_bytes(b"0" * 2048)
    engine = CheckpointEngine(repo, CheckpointsConfig(exclude=["*.env"], max_file_size=1024), backend=backend)
    snap = engine.snapshot()
    files = engine.repo.files(snap.commit)
    assert {"untracked.py", "notes.txt", "src/app.py", "README.md", ".gitignore"} <= files
    assert not files & {"debug.log", "build/out.bin", "secret.env", "big.dat"}
    assert snap.skipped == ("big.dat",)


def test_ignored_and_oversized_files_are_left_alone_by_a_restore(
    repo: Path, engine: CheckpointEngine
) -> None:
    (repo / "grows.dat").write_bytes(b"small")
    checkpoint = agent_round(engine, lambda: (repo / "src" / "app.py").write_text("changed\n"))
    (repo / "debug.log").write_text("new log\n")
    (repo / "grows.dat").write_bytes(b"1" * 4096)  # now over max_file_size
    plan = engine.plan(checkpoint)  # type: ignore[arg-type]
    assert [(f.path, f.action) for f in plan.files] == [("src/app.py", "restore")]
    assert "grows.dat" in plan.left_alone
    engine.apply(plan, S)
    assert (repo / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    assert (repo / "debug.log").read_text() == "new log\n"
    assert (repo / "grows.dat").read_bytes() == b"1" * 4096
    assert "Left alone" in plan.preview_text() and "grows.dat" in plan.preview_text()


def test_a_change_by_hand_after_the_agent_is_shown_in_the_preview(
    repo: Path, engine: CheckpointEngine
) -> None:
    checkpoint = agent_round(engine, lambda: (repo / "src" / "app.py").write_text("agent\n"))
    (repo / "src" / "app.py").write_text("agent\nand the user's own line\n")
    (repo / "README.md").write_text("user only\n")
    plan = engine.plan(checkpoint)  # type: ignore[arg-type]
    assert sorted(plan.user_changed) == ["README.md", "src/app.py"]
    text = plan.preview_text()
    assert "src/app.py  ! changed by you after the agent" in text
    assert "2 of these files were changed by hand" in text and "restoring loses those changes" in text


def test_changes_by_hand_between_rounds_count_too(repo: Path, engine: CheckpointEngine) -> None:
    first = agent_round(engine, lambda: (repo / "a.txt").write_text("agent 1\n"))
    (repo / "hand.txt").write_text("by hand between rounds\n")
    agent_round(engine, lambda: (repo / "b.txt").write_text("agent 2\n"))
    plan = engine.plan(first)  # type: ignore[arg-type]
    marks = {f.path: f.by_user for f in plan.files}
    assert marks == {"a.txt": False, "b.txt": False, "hand.txt": True}


def test_every_restore_can_be_undone(repo: Path, engine: CheckpointEngine) -> None:
    checkpoint = agent_round(engine, lambda: (repo / "src" / "app.py").write_text("agent\n"))
    (repo / "mine.txt").write_text("mine\n")
    saved = engine.apply(engine.plan(checkpoint), S)  # type: ignore[arg-type]
    assert saved.type == "restore" and saved.restore_of == checkpoint.id  # type: ignore[attr-defined]
    assert not (repo / "mine.txt").exists()
    plan = engine.plan(saved)
    assert {(f.path, f.action) for f in plan.files} == {("mine.txt", "recreate"), ("src/app.py", "restore")}
    engine.apply(plan, S)
    assert (repo / "mine.txt").read_text() == "mine\n" and (repo / "src" / "app.py").read_text() == "agent\n"


def test_a_restore_refuses_when_the_tree_changed_after_the_preview(
    repo: Path, engine: CheckpointEngine
) -> None:
    checkpoint = agent_round(engine, lambda: (repo / "a.txt").write_text("a\n"))
    plan = engine.plan(checkpoint)  # type: ignore[arg-type]
    (repo / "late.txt").write_text("typed while the preview was open\n")
    with pytest.raises(CheckpointError, match="changed since the preview"):
        engine.apply(plan, S)
    assert (repo / "a.txt").exists() and (repo / "late.txt").exists()


def test_restores_keep_modes_symlinks_and_remove_emptied_folders(
    repo: Path, engine: CheckpointEngine
) -> None:
    script = repo / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    (repo / "link").symlink_to("README.md")

    def change() -> None:
        script.unlink()
        (repo / "link").unlink()
        (repo / "deep" / "er").mkdir(parents=True)
        (repo / "deep" / "er" / "file.txt").write_text("x\n")

    checkpoint = agent_round(engine, change)
    engine.apply(engine.plan(checkpoint), S)  # type: ignore[arg-type]
    assert script.stat().st_mode & 0o111 and (repo / "link").is_symlink()
    assert os.readlink(repo / "link") == "README.md"
    assert not (repo / "deep").exists()


def test_the_users_git_is_untouched_byte_for_byte(repo: Path, engine: CheckpointEngine) -> None:
    state = dot_git_state(repo)
    head, stash, branches = git(repo, "rev-parse", "HEAD"), git(repo, "stash", "list"), git(repo, "branch")
    state = dot_git_state(repo)  # after our own reads
    checkpoint = agent_round(engine, lambda: (repo / "src" / "app.py").unlink())
    engine.apply(engine.plan(checkpoint), S)  # type: ignore[arg-type]
    engine.prune(keep_days=0)
    assert dot_git_state(repo) == state
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "stash", "list") == stash and git(repo, "branch") == branches
    assert git(repo, "diff", "--cached", "--name-only") == "notes.txt\n"


def test_pruning_removes_old_checkpoints_and_their_objects(repo: Path, backend: str) -> None:
    now = [datetime(2026, 11, 1, tzinfo=UTC)]
    engine = CheckpointEngine(repo, CheckpointsConfig(keep_days=14), clock=lambda: now[0], backend=backend)
    (repo / "old.bin").write_text("old content only in the first checkpoint\n")
    old = agent_round(engine, lambda: (repo / "old.bin").unlink())
    now[0] += timedelta(days=10)
    kept = agent_round(engine, lambda: (repo / "b.txt").write_text("b\n"))
    now[0] += timedelta(days=5)  # the first is 15 days old, the second 5
    blob = engine.repo.blob_id(old.commit, "old.bin")  # type: ignore[attr-defined]
    assert engine.repo.has_object(blob)
    removed = CheckpointEngine.open(
        repo, CheckpointsConfig(keep_days=14), clock=lambda: now[0], backend=backend
    ).prune()
    assert removed == []  # open() already pruned
    assert [c.id for c in engine.checkpoints()] == [kept.id]  # type: ignore[attr-defined]
    refs = engine.repo.refs()
    assert f"refs/wyckoff/{kept.id}" in refs and not [r for r in refs if old.id in r]  # type: ignore[attr-defined]
    assert not engine.repo.has_object(blob)  # gone from the shadow repository's disk
    assert engine.disk_use() > 0


def test_a_checkpoint_id_is_found_by_prefix_with_clear_errors(engine: CheckpointEngine) -> None:
    checkpoint = engine.checkpoint(S, "m1")
    assert engine.find(checkpoint.id[:4]).id == checkpoint.id
    with pytest.raises(CheckpointError, match="no checkpoint 'zzzz'"):
        engine.find("zzzz")


def test_without_git_checkpoints_say_so(repo: Path, tmp_path: Path) -> None:
    with pytest.raises(GitMissing, match="need the git binary"):
        ShadowRepo(repo, tmp_path / "shadow", git="")


def test_tool_arguments_are_shortened_and_redacted(repo: Path) -> None:
    engine = CheckpointEngine(
        repo, backend="git", redact=lambda text: text.replace("sk-secret", "[REDACTED]")
    )
    checkpoint = engine.checkpoint(
        S,
        "m1",
        [{"id": "1", "name": "run_shell", "args": {"command": "curl -H sk-secret", "content": "x" * 500}}],
    )
    args = engine.find(checkpoint.id).calls[0]["args"]
    assert args["command"] == "curl -H [REDACTED]"
    assert len(args["content"]) == 201


def test_a_folder_where_a_file_comes_back_is_replaced_when_it_holds_only_new_files(
    repo: Path, engine: CheckpointEngine
) -> None:
    def change() -> None:
        (repo / "README.md").unlink()
        (repo / "README.md").mkdir()
        (repo / "README.md" / "inner.txt").write_text("x\n")

    checkpoint = agent_round(engine, change)
    plan = engine.plan(checkpoint)  # type: ignore[arg-type]
    assert {(f.path, f.action) for f in plan.files} == {
        ("README.md", "recreate"),
        ("README.md/inner.txt", "delete"),
    }
    engine.apply(plan, S)
    assert (repo / "README.md").read_text() == "# Project\n"


def test_a_folder_with_ignored_files_where_a_file_comes_back_is_left_alone(
    repo: Path, engine: CheckpointEngine
) -> None:
    def change() -> None:
        (repo / "README.md").unlink()
        (repo / "README.md").mkdir()
        (repo / "README.md" / "keep.log").write_text("ignored\n")

    checkpoint = agent_round(engine, change)
    plan = engine.plan(checkpoint)  # type: ignore[arg-type]
    assert plan.files == [] and plan.left_alone == ["README.md"]
    engine.apply(plan, S)
    assert (repo / "README.md" / "keep.log").read_text() == "ignored\n"


@pytest.mark.parametrize("form", ["folder symlink", "file symlink", "symlink chain"])
def test_a_restore_never_writes_through_a_symlink_out_of_the_workspace(
    repo: Path, engine: CheckpointEngine, tmp_path: Path, form: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "app.py").write_text("outside, must not change\n")
    (outside / "README.md").write_text("outside, must not change\n")

    def change() -> None:
        if form == "folder symlink":  # src/ becomes a link to a folder outside
            (repo / "src" / "app.py").unlink()
            (repo / "src").rmdir()
            (repo / "src").symlink_to(outside)
        elif form == "file symlink":  # README.md becomes a link to a file outside
            (repo / "README.md").unlink()
            (repo / "README.md").symlink_to(outside / "README.md")
        else:  # src/ -> hop -> outside
            (repo / "src" / "app.py").unlink()
            (repo / "src").rmdir()
            (repo / "hop").symlink_to(outside)
            (repo / "src").symlink_to(repo / "hop")

    checkpoint = agent_round(engine, change)
    engine.apply(engine.plan(checkpoint), S)  # type: ignore[arg-type]
    assert (outside / "app.py").read_text() == "outside, must not change\n"
    assert (outside / "README.md").read_text() == "outside, must not change\n"
    assert (
        not (repo / "src").is_symlink()
        and (repo / "src" / "app.py").read_text() == "def main():\n    return 1\n"
    )
    assert not (repo / "README.md").is_symlink() and (repo / "README.md").read_text() == "# Project\n"
    assert not (repo / "hop").exists()


def test_a_huge_diff_is_cut_in_the_preview(repo: Path, monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    import wyckoff_cli.runtime.checkpoints.engine as engine_module

    monkeypatch.setattr(engine_module, "MAX_PREVIEW_DIFF", 500)
    engine = CheckpointEngine(repo, backend=backend)
    checkpoint = agent_round(engine, lambda: (repo / "long.txt").write_text("line\n" * 1000))
    plan = engine.plan(checkpoint)  # type: ignore[arg-type]
    assert len(plan.diff) < 700 and f"wyckoff checkpoints diff {checkpoint.id}" in plan.diff  # type: ignore[attr-defined]


def test_git_runs_with_a_scrubbed_environment(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))  # a hook's leftover must not redirect us
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / ".git" / "index"))
    engine = CheckpointEngine(repo, backend="git")
    env = engine.repo._env()  # type: ignore[attr-defined]
    assert "ANTHROPIC_API_KEY" not in env and "GITHUB_TOKEN" not in env
    assert env["GIT_DIR"] == str(engine.repo.git_dir) and env["GIT_CONFIG_GLOBAL"] == os.devnull
    state = dot_git_state(repo)
    agent_round(engine, lambda: (repo / "x.txt").write_text("x\n"))
    assert dot_git_state(repo) == state


def test_restoring_the_state_an_undo_saved_puts_the_undo_steps_back(
    repo: Path, engine: CheckpointEngine
) -> None:
    first = agent_round(engine, lambda: (repo / "one.txt").write_text("1\n"))
    second = agent_round(engine, lambda: (repo / "two.txt").write_text("2\n"))
    plan = engine.plan_undo(S)
    assert plan is not None and plan.target.id == second.id  # type: ignore[attr-defined]
    saved = engine.apply(plan, S, action="undo")
    assert not (repo / "two.txt").exists()
    engine.apply(engine.plan(saved), S)  # a plain restore of what the undo saved (not /redo)
    assert (repo / "two.txt").exists()
    plan = engine.plan_undo(S)
    assert plan is not None and plan.target.id == second.id  # type: ignore[attr-defined]
    engine.apply(engine.plan(first), S)  # back before the first round: nothing left to undo
    assert engine.plan_undo(S) is None and engine.plan_redo(S) is None


def test_a_folder_that_is_not_a_git_repository_works_too(tmp_path: Path, backend: str) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "notes.md").write_text("notes\n")
    (root / ".gitignore").write_text("cache/\n")
    (root / "cache").mkdir()
    (root / "cache" / "big.tmp").write_text("ignored\n")
    engine = CheckpointEngine(root, backend=backend)
    checkpoint = agent_round(engine, lambda: (root / "notes.md").unlink())
    assert "cache/big.tmp" not in engine.repo.files(checkpoint.commit)  # type: ignore[attr-defined]
    engine.apply(engine.plan(checkpoint), S)  # type: ignore[arg-type]
    assert (root / "notes.md").read_text() == "notes\n" and not (root / ".git").exists()


def test_everything_under_the_checkpoints_folder_is_private(repo: Path, backend: str) -> None:
    old = os.umask(0o022)
    try:
        engine = CheckpointEngine(repo, backend=backend)
        checkpoint = agent_round(engine, lambda: (repo / "new.txt").write_text("x\n"))
        engine.apply(engine.plan(checkpoint), S)  # type: ignore[arg-type]
        engine.prune(keep_days=0)
        agent_round(engine, lambda: (repo / "again.txt").write_text("y\n"))
    finally:
        os.umask(old)
    root = Path(os.environ["WYCKOFF_HOME"]) / "data" / "checkpoints"
    wrong = []
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            if (Path(folder) / name).stat().st_mode & 0o777 != 0o700:
                wrong.append(f"{folder}/{name}")
        for name in files:
            if (Path(folder) / name).stat().st_mode & 0o777 not in (0o600, 0o400):
                wrong.append(f"{folder}/{name}")
    assert wrong == []
    assert (root.stat().st_mode & 0o777) == 0o700
