"""The worktree plumbing (runtime/worktrees) with real git: names, the ignore file,
`.worktreeinclude`, the parent's state for sub-agents, merges that never half-apply,
remove's refusal, the owning process and prune after kill -9."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import until_sync
from wyckoff_cli.runtime import worktrees as wt
from wyckoff_cli.runtime.worktrees.store import ensure_ignored, generate_name, process_alive, process_started


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.com")
    (root / "app.py").write_text("x = 1\ny = 2\n")
    (root / ".gitignore").write_text(".env\nbuild/\n*.log\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root


@pytest.mark.parametrize(
    "name",
    [
        "has space", "a..b", "x.lock", "-dash", ".hidden", "semi;colon", "back\\slash", "a/b", "tab\tname",
        "star*", "what?", "brace{x}", "tilde~1", "caret^", "colon:x", "at@{", "ends.", "x.json", "",
        "é", "a" * 65, "$(touch pwned)", "`id`",
    ],
)  # fmt: skip
def test_bad_names_are_refused_with_one_line(repo: Path, name: str) -> None:
    with pytest.raises(wt.WorktreeError) as raised:
        wt.create_worktree(repo, name)
    assert "not a valid" in raised.value.message and "\n" not in raised.value.message
    assert not (repo / "pwned").exists()
    assert "wyckoff/" not in git(repo, "branch")


def test_a_generated_name_is_readable_and_free(repo: Path) -> None:
    first = wt.create_worktree(repo)
    assert first.name.count("-") == 1 and first.name.replace("-", "").isalpha()
    rng = random.Random(7)
    taken = generate_name(wt.open_repository(repo), random.Random(7))
    (repo / ".wyckoff/worktrees" / taken).mkdir()
    assert generate_name(wt.open_repository(repo), rng) != taken


def test_the_worktree_branches_from_head_and_the_main_status_stays_clean(repo: Path) -> None:
    made = wt.create_worktree(repo, "one")
    assert made.path == repo / ".wyckoff/worktrees/one"
    assert made.record.branch == "wyckoff/one" and made.record.base == git(repo, "rev-parse", "HEAD").strip()
    assert git(made.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "wyckoff/one"
    assert git(repo, "status", "--porcelain") == ""
    record = json.loads((repo / ".wyckoff/worktrees/one.json").read_text())
    assert record["git_dir"] == str(repo / ".git/worktrees/one") and record["origin"] == "session"


def test_the_ignore_line_is_added_to_an_existing_wyckoff_gitignore(repo: Path) -> None:
    folder = repo / ".wyckoff"
    folder.mkdir()
    (folder / ".gitignore").write_text("*.local.*\n/state/")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "wyckoff folder")
    wt.create_worktree(repo, "one")
    assert (
        (folder / ".gitignore")
        .read_text()
        .endswith("/state/\n# Wyckoff's git worktrees (`wyckoff worktree list`)\n/worktrees/\n")
    )
    ensure_ignored(repo)  # once is enough
    assert (folder / ".gitignore").read_text().count("/worktrees/") == 1
    assert git(repo, "status", "--porcelain") == " M .wyckoff/.gitignore\n"


def test_worktreeinclude_copies_matching_ignored_files_only(repo: Path) -> None:
    (repo / ".env").write_text("KEY=1\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("big\n")
    (repo / "debug.log").write_text("log\n")
    (repo / "config").mkdir()
    (repo / "config" / "local.env").write_text("not ignored\n")
    (repo / ".worktreeinclude").write_text(".env\n*.log\nconfig/local.env\n")
    made = wt.create_worktree(repo, "one")
    assert (made.path / ".env").read_text() == "KEY=1\n"
    assert (made.path / "debug.log").read_text() == "log\n"
    assert not (made.path / "build").exists()  # ignored but not listed
    assert not (made.path / "config" / "local.env").exists()  # listed but not ignored: untracked, not copied


def test_a_dirty_main_tree_gives_a_notice(repo: Path) -> None:
    (repo / "app.py").write_text("x = 100\n")
    made = wt.create_worktree(repo, "one")
    assert made.notices and "they are not in the worktree" in made.notices[0]
    assert (made.path / "app.py").read_text() == "x = 1\ny = 2\n"


def test_a_sub_agents_worktree_starts_from_the_parents_current_files(repo: Path) -> None:
    (repo / "app.py").write_text("x = 10\ny = 2\n")
    (repo / "new.py").write_text("z = 3\n")
    (repo / "gone.txt").write_text("")
    index_before = (repo / ".git/index").read_bytes()
    made = wt.create_worktree(repo, "child", from_current_state=True, origin="agent")
    assert (made.path / "app.py").read_text() == "x = 10\ny = 2\n"
    assert (made.path / "new.py").read_text() == "z = 3\n"
    assert (repo / ".git/index").read_bytes() == index_before  # the parent's index untouched
    assert wt.summary(made).empty  # the parent's changes are the base, not the child's
    (made.path / "app.py").write_text("x = 10\ny = 20\n")
    found = wt.summary(made)
    assert found.files == ["app.py"] and found.uncommitted and "1 file changed" in found.stat
    # applied to the parent's files as uncommitted changes, its own edits kept
    into = wt.open_repository(repo).current
    result = wt.merge(made, into)
    assert result.how == "applied" and result.files == ["app.py"]
    assert (repo / "app.py").read_text() == "x = 10\ny = 20\n" and (repo / "new.py").exists()
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "1"  # no commit in the parent


def test_diff_shows_committed_uncommitted_and_new_files(repo: Path) -> None:
    made = wt.create_worktree(repo, "one")
    (made.path / "app.py").write_text("x = 1\ny = 3\n")
    git(made.path, "commit", "-qam", "agent commit")
    (made.path / "fresh.py").write_text("new\n")
    text = wt.diff(made)
    assert "+y = 3" in text and "+++ b/fresh.py" in text
    assert "2 files changed" in wt.diff(made, stat=True)


def test_squash_merge_makes_one_commit(repo: Path) -> None:
    made = wt.create_worktree(repo, "one", title="Make y three")
    (made.path / "app.py").write_text("x = 1\ny = 3\n")
    result = wt.merge(made, wt.open_repository(repo).current, squash=True)
    assert result.how == "squashed" and result.committed_leftovers
    assert git(repo, "log", "-1", "--format=%s%n%P").split("\n")[0] == "Make y three"
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 1  # not a merge commit
    assert (repo / "app.py").read_text() == "x = 1\ny = 3\n"


def test_uncommitted_user_changes_in_the_merged_files_stop_the_merge(repo: Path) -> None:
    made = wt.create_worktree(repo, "one")
    (made.path / "app.py").write_text("x = 1\ny = 3\n")
    (repo / "app.py").write_text("x = 1\ny = 2\n# mine\n")
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(wt.WorktreeError) as raised:
        wt.merge(made, wt.open_repository(repo).current)
    assert "uncommitted changes in app.py" in raised.value.message
    assert (repo / "app.py").read_text() == "x = 1\ny = 2\n# mine\n" and git(
        repo, "rev-parse", "HEAD"
    ) == head


def test_a_conflict_leaves_the_tree_exactly_as_it_was(repo: Path) -> None:
    made = wt.create_worktree(repo, "one")
    (made.path / "app.py").write_text("x = 1\ny = 3\n")
    (repo / "app.py").write_text("x = 1\ny = 4\n")
    git(repo, "commit", "-qam", "mine")
    (repo / "other.txt").write_text("untracked of mine\n")
    head, status = git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")
    with pytest.raises(wt.WorktreeError) as raised:
        wt.merge(made, wt.open_repository(repo).current)
    assert "conflicts with" in raised.value.message and "app.py" in raised.value.message
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == status
    assert (repo / "app.py").read_text() == "x = 1\ny = 4\n"
    assert not (repo / ".git/MERGE_HEAD").exists()


def test_git_is_never_pointed_at_a_planted_repository(repo: Path, tmp_path: Path) -> None:
    """An agent that replaces the worktree's `.git` file cannot redirect Wyckoff's git:
    commands name the git folder recorded at creation."""
    made = wt.create_worktree(repo, "one")
    planted = tmp_path / "planted"
    planted.mkdir()
    git(planted, "init", "-q")
    (planted / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\ntouch " + str(tmp_path / "ran") + "\n")
    (planted / ".git" / "hooks" / "pre-commit").chmod(0o755)
    (made.path / ".git").unlink()
    (made.path / ".git").write_text(f"gitdir: {planted / '.git'}\n")
    tree = wt.Tree(made.path, Path(made.record.git_dir))
    assert tree.branch() == "refs/heads/wyckoff/one"
    (made.path / "app.py").write_text("x = 5\n")
    wt.merge(made, wt.open_repository(repo).current)
    assert not (tmp_path / "ran").exists()
    assert "x = 5" in git(repo, "show", "wyckoff/one:app.py")


def test_remove_refuses_unmerged_work_unless_forced(repo: Path) -> None:
    made = wt.create_worktree(repo, "one")
    (made.path / "app.py").write_text("x = 2\n")
    with pytest.raises(wt.WorktreeError) as raised:
        wt.remove(made)
    assert "uncommitted changes" in raised.value.message and "--force" in raised.value.message
    wt.merge(made, wt.open_repository(repo).current)
    wt.remove(wt.get_worktree(repo, "one"))  # merged: removed without --force
    assert not made.path.exists() and "wyckoff/one" not in git(repo, "branch")
    again = wt.create_worktree(repo, "two")
    (again.path / "app.py").write_text("x = 3\n")
    wt.remove(again, force=True)
    assert wt.list_worktrees(repo) == []


def test_worktree_at_finds_a_sessions_worktree(repo: Path) -> None:
    made = wt.create_worktree(repo, "one")
    (made.path / "sub").mkdir()
    found = wt.worktree_at(made.path / "sub")
    assert found is not None and found.name == "one"
    assert wt.worktree_at(repo) is None


def test_prune_after_kill_9_of_the_owning_process(repo: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        kept = wt.create_worktree(repo, "kept")
        kept.claim(holder.pid, "20261202-000000-abcd")
        (kept.path / "app.py").write_text("x = 9\n")
        empty = wt.create_worktree(repo, "empty")
        empty.claim(holder.pid)
        alive = wt.create_worktree(repo, "alive")
        alive.claim()  # this test's own process: alive
        assert wt.dead_worktrees(repo) == []
        with pytest.raises(wt.WorktreeError) as raised:
            wt.remove(wt.get_worktree(repo, "kept"))
        assert "in use by process" in raised.value.message
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
        until_sync(lambda: not process_alive(holder.pid, kept.record.pid_started))
        assert sorted(w.name for w in wt.dead_worktrees(repo)) == ["empty", "kept"]
        pruned = {p.name: p for p in wt.prune(repo)}
        assert pruned["kept"].kept_branch == "wyckoff/kept" and pruned["empty"].kept_branch is None
        assert [w.name for w in wt.list_worktrees(repo)] == ["alive"]
        assert "x = 9" in git(repo, "show", "wyckoff/kept:app.py")  # nothing lost
        assert "wyckoff/empty" not in git(repo, "branch")
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_a_reused_pid_is_not_taken_for_the_owner() -> None:
    started = process_started(os.getpid())
    assert process_alive(os.getpid(), started)
    if started is not None:
        assert not process_alive(os.getpid(), str(int(started) + 1))


@pytest.mark.parametrize(
    ("setup", "message"),
    [("plain", "is not in a git repository"), ("unborn", "no commits yet"), ("detached", "HEAD is detached")],
)
def test_bad_repositories_are_one_line(tmp_path: Path, repo: Path, setup: str, message: str) -> None:
    folder = tmp_path / setup
    if setup == "detached":
        folder = repo
        git(repo, "checkout", "-q", "--detach")
    else:
        folder.mkdir()
        if setup == "unborn":
            git(folder, "init", "-q")
    with pytest.raises(wt.WorktreeError) as raised:
        wt.create_worktree(folder, "x")
    assert message in raised.value.message and "\n" not in raised.value.message
