"""The change a review reads from git, and how it is split into file groups."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.review.support import git, make_repo
from wyckoff_cli.runtime.review.changes import FileDiff, ReviewError, ReviewTarget, collect_change
from wyckoff_cli.runtime.review.groups import split_groups


async def test_every_kind_of_file_change_is_read(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo", {"keep.py": "a = 1\n", "gone.py": "b = 2\n", "old_name.py": "c = 3\n" * 20}
    )
    (root / "keep.py").write_text("a = 2\n")
    git(root, "rm", "-q", "gone.py")
    git(root, "mv", "old_name.py", "new name.py")
    (root / "blob.bin").write_bytes(b"\0\1\2" * 10)
    (root / "fresh.txt").write_text("one\ntwo\n")
    change = await collect_change(root, ReviewTarget())
    by_path = {f.path: f for f in change.files}
    assert by_path["keep.py"].status == "modified" and by_path["keep.py"].hunks == ((1, 1),)
    assert by_path["gone.py"].status == "deleted" and not by_path["gone.py"].reviewable
    assert by_path["new name.py"].status == "renamed"
    assert by_path["blob.bin"].status == "binary" and not by_path["blob.bin"].reviewable
    assert by_path["fresh.txt"].status == "added" and by_path["fresh.txt"].hunks == ((1, 2),)
    assert await change.read_after("fresh.txt") == "one\ntwo\n"
    assert await change.read_after("gone.py") is None


async def test_a_repository_without_commits_reviews_its_files(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    (root / "first.py").write_text("print(1)\n")
    change = await collect_change(root, ReviewTarget())
    assert [f.path for f in change.files] == ["first.py"]


async def test_a_git_worktree_is_reviewed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "v = 1\n"})
    git(root, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    (tmp_path / "side" / "a.py").write_text("v = 2\n")
    change = await collect_change(tmp_path / "side", ReviewTarget())
    assert [f.path for f in change.files] == ["a.py"] and "+v = 2" in change.files[0].text
    assert await change.read_after("a.py") == "v = 2\n"


async def test_a_commit_is_read_at_that_commit(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "v = 1\n"})
    (root / "a.py").write_text("v = 2\n")
    git(root, "commit", "-qam", "two")
    sha = git(root, "rev-parse", "HEAD")
    (root / "a.py").write_text("v = 3\n")
    git(root, "commit", "-qam", "three")
    change = await collect_change(root, ReviewTarget("commit", sha[:8]))
    assert await change.read_after("a.py") == "v = 2\n"
    first = git(root, "rev-list", "--max-parents=0", "HEAD")
    root_commit = await collect_change(root, ReviewTarget("commit", first))
    assert [f.status for f in root_commit.files] == ["added"]


@pytest.mark.parametrize("ref", ["nope", "-x", "--output=/tmp/x", "HEAD~99", "main..HEAD"])
async def test_refs_that_are_not_commits_are_refused(tmp_path: Path, ref: str) -> None:
    root = make_repo(tmp_path / "repo")
    with pytest.raises(ReviewError, match="is not a commit"):
        await collect_change(root, ReviewTarget("base", ref))


GIT_ATTACKS = [
    ("core.fsmonitor", None),
    ("diff.external", None),
    ("core.pager", None),
    ("pager.diff", None),
    ("diff.evil.textconv", "*.py diff=evil\n"),
    ("diff.evil.command", "*.py diff=evil\n"),
    ("core.hooksPath", None),
]


@pytest.mark.parametrize(("key", "attributes"), GIT_ATTACKS)
@pytest.mark.parametrize("kind", ["uncommitted", "base", "commit"])
async def test_a_repository_config_cannot_run_programs(
    tmp_path: Path, key: str, attributes: str | None, kind: str
) -> None:
    root = make_repo(tmp_path / "repo", {"a.py": "v = 1\n"})
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    if key == "core.hooksPath":
        hooks = tmp_path / "hooks"
        hooks.mkdir()
        for hook in ("post-checkout", "pre-commit", "post-index-change", "reference-transaction"):
            (hooks / hook).write_text(script.read_text())
            (hooks / hook).chmod(0o755)
        git(root, "config", key, str(hooks))
    else:
        git(root, "config", key, str(script))
    if attributes:
        (root / ".git" / "info" / "attributes").write_text(attributes)
    (root / "a.py").write_text("v = 2\n")
    if kind != "uncommitted":
        git(root, "-c", "core.hooksPath=/dev/null", "commit", "-qam", "two")
        marker.unlink(missing_ok=True)
    target = (
        ReviewTarget(kind, "HEAD~1" if kind == "base" else "HEAD")
        if kind != "uncommitted"
        else ReviewTarget()
    )  # type: ignore[arg-type]
    change = await collect_change(root, target)
    assert [f.path for f in change.files] == ["a.py"] and not marker.exists()
    assert "+v = 2" in change.files[0].text  # the real diff, not a program's output


def diff(path: str, size: int = 10) -> FileDiff:
    return FileDiff(path, "modified", "x" * size)


def test_groups_keep_folders_together_within_their_limits() -> None:
    files = [diff("b/2.py"), diff("a/1.py"), diff("a/2.py"), diff("b/1.py"), diff("c/huge.py", 500)]
    groups = split_groups(files, max_files=2, max_chars=100)
    assert [g.paths for g in groups] == [["a/1.py", "a/2.py"], ["b/1.py", "b/2.py"], ["c/huge.py"]]


def test_a_group_of_deleted_files_only_gets_no_reviewer() -> None:
    files = [FileDiff("gone.py", "deleted", "-x"), diff("kept.py")]
    assert [g.paths for g in split_groups(files, max_files=1)] == [["kept.py"]]
