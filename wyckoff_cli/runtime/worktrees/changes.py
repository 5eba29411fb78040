"""A worktree's work: what changed, merging it back, and removing what is done.

- `diff` / `summary`: the branch's changes since its base, committed and uncommitted
  (untracked files included), as a patch, a file list and a diff stat.
- `merge`: commits what the agent left uncommitted on its branch first (message: the
  session's title or first prompt), then brings the work into the tree the user is in.
  A session's worktree (`--worktree`) is merged with `git merge` (or `--squash`) into
  the current branch; a sub-agent's is applied to the parent's files as uncommitted
  changes. Nothing is half-applied: the merge is computed first (`git merge-tree`,
  `git apply --check`), and a conflict, or uncommitted changes of the user's in the
  files it touches, stops it with the files named and the tree exactly as it was.
- `remove` refuses a worktree with work not merged unless forced; `prune` removes the
  worktrees whose session process died, keeping the branch of one with work on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from wyckoff_cli.runtime.worktrees.git import GitResult, Tree, WorktreeError, first_line, run_git
from wyckoff_cli.runtime.worktrees.store import Repository, Worktree, delete_worktree, list_worktrees

DEFAULT_MESSAGE = "wyckoff: work from worktree {name}"


@dataclass(frozen=True, slots=True)
class Summary:
    files: list[str]  # changed since the base, committed or not
    stat: str  # `git diff --stat` of the same
    commits: int
    uncommitted: bool

    @property
    def empty(self) -> bool:
        return not self.files and self.commits == 0 and not self.uncommitted


def current_state(worktree: Worktree) -> str:
    """The tree of the worktree's files now (the base's when it is gone)."""
    if not worktree.exists():
        return f"refs/heads/{worktree.record.branch}^{{tree}}"
    return worktree.tree.snapshot_tree()


def diff(worktree: Worktree, *, stat: bool = False) -> str:
    """The branch's changes since its base, committed and uncommitted."""
    args = ["diff", "--no-color", "--no-ext-diff", "--binary"]
    if stat:
        args = ["diff", "--no-color", "--stat"]
    return _repo_git(worktree.repo, *args, worktree.record.base, current_state(worktree)).out


def summary(worktree: Worktree) -> Summary:
    state = current_state(worktree)
    names = _repo_git(worktree.repo, "diff", "--name-only", "-z", worktree.record.base, state).out
    files = [name for name in names.split("\0") if name]
    stat = _repo_git(worktree.repo, "diff", "--stat", worktree.record.base, state).out.rstrip()
    uncommitted = bool(worktree.uncommitted())
    return Summary(files, stat, worktree.commits(), uncommitted)


def _repo_git(repo: Repository, *args: str, check: bool = True) -> GitResult:
    return run_git(list(args), cwd=repo.main, git_dir=repo.common_dir, check=check)


# ------------------------------------------------------------------ commit, merge


def commit_leftovers(worktree: Worktree, message: str | None = None) -> bool:
    """Commit what is uncommitted in the worktree onto its branch; True if anything was."""
    if not worktree.exists() or not worktree.uncommitted():
        return False
    text = message or worktree.record.title.strip() or DEFAULT_MESSAGE.format(name=worktree.name)
    tree = worktree.tree
    tree.git("add", "-A", ".")
    tree.git("commit", "-q", "--no-verify", "-m", text[:2000])
    return True


@dataclass
class MergeResult:
    how: str  # "merged", "squashed", "applied", "already"
    files: list[str] = field(default_factory=list)
    committed_leftovers: bool = False

    def line(self, worktree: Worktree, into: Path) -> str:
        if self.how == "already":
            return f"{worktree.record.branch} is merged already; wyckoff worktree remove {worktree.name} deletes it"
        count = f"{len(self.files)} file{'s' * (len(self.files) != 1)}"
        verb = {
            "merged": "merged into",
            "squashed": "squashed into one commit on",
            "applied": "applied as uncommitted changes to",
        }[self.how]
        return (
            f"{worktree.record.branch} ({count}) {verb} {into}; "
            f"wyckoff worktree remove {worktree.name} deletes the worktree"
        )


def merge(worktree: Worktree, into: Tree, *, squash: bool = False, message: str | None = None) -> MergeResult:
    """Bring the worktree's work into `into` (see the module docstring)."""
    if into.root == worktree.path:
        raise WorktreeError(f"cannot merge worktree {worktree.name} into itself")
    head = into.git("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False).out.strip()
    if not head:
        raise WorktreeError(f"{into.root} has no commits yet: nothing to merge into")
    leftovers = commit_leftovers(worktree, message)
    tip = _repo_git(worktree.repo, "rev-parse", f"refs/heads/{worktree.record.branch}").out.strip()
    if worktree.record.origin == "agent":
        result = _apply(worktree, into, tip)
    else:
        result = _merge_branch(worktree, into, head, tip, squash, message)
    result.committed_leftovers = leftovers
    return result


def _merge_branch(
    worktree: Worktree, into: Tree, head: str, tip: str, squash: bool, message: str | None
) -> MergeResult:
    if into.branch() is None:
        raise WorktreeError(f"HEAD is detached in {into.root}: check out the branch to merge into first")
    if into.git("merge-base", "--is-ancestor", tip, head, check=False).code == 0:
        return MergeResult("already")
    done = into.git("merge-tree", "--write-tree", "--name-only", "--no-messages", head, tip, check=False)
    lines = [line for line in done.out.splitlines() if line.strip()]
    if done.code == 1:
        raise WorktreeError(_conflict_message(worktree, into, sorted(set(lines[1:]))))
    if done.code != 0 or not lines:
        raise WorktreeError(f"git merge-tree failed: {first_line(done.err or done.out)}")
    merged_tree = lines[0]
    files = [f for f in into.git("diff", "--name-only", "-z", head, merged_tree).out.split("\0") if f]
    _refuse_local_changes(worktree, into, files)
    text = message or worktree.record.title.strip() or DEFAULT_MESSAGE.format(name=worktree.name)
    if squash:
        into.git("merge", "--squash", "-q", tip)
        into.git("commit", "-q", "--no-verify", "-m", text[:2000])
        return MergeResult("squashed", files)
    into.git(
        "merge", "--no-ff", "--no-verify", "-q", "-m", f"Merge {worktree.record.branch}: {text}"[:2000], tip
    )
    return MergeResult("merged", files)


def _apply(worktree: Worktree, into: Tree, tip: str) -> MergeResult:
    """A sub-agent's work onto the parent's files: the patch from its base to its tip,
    checked whole first (`git apply` is all or nothing)."""
    if worktree.record.merged_tip == tip:
        return MergeResult("already")
    since = worktree.record.merged_tip or worktree.record.base
    patch = _repo_git(worktree.repo, "diff", "--binary", "--no-color", "--no-ext-diff", since, tip).out
    names = _repo_git(worktree.repo, "diff", "--name-only", "-z", since, tip).out
    files = [name for name in names.split("\0") if name]
    if not patch.strip():
        return MergeResult("already")
    check = run_git(
        ["apply", "--check", "-"],
        cwd=into.root,
        git_dir=into.git_dir,
        work_tree=into.root,
        stdin=patch,
        check=False,
    )
    if check.code != 0:
        failed = sorted(set(_APPLY_FAILURE.findall(check.err))) or files
        raise WorktreeError(_conflict_message(worktree, into, failed))
    run_git(["apply", "-"], cwd=into.root, git_dir=into.git_dir, work_tree=into.root, stdin=patch)
    worktree.record.merged_tip = tip
    worktree.save()
    return MergeResult("applied", files)


_APPLY_FAILURE = re.compile(
    r"(?:patch failed: |error: )([^:\n]+?)(?::\d+|: (?:already exists|does not exist))"
)


def _refuse_local_changes(worktree: Worktree, into: Tree, files: list[str]) -> None:
    touched = sorted(set(files) & into.dirty_paths())
    if touched:
        raise WorktreeError(
            f"not merged: {into.root} has uncommitted changes in {', '.join(touched)}, which the merge of "
            f"{worktree.record.branch} would change; commit or stash them first (nothing was changed)"
        )


def _conflict_message(worktree: Worktree, into: Tree, files: list[str]) -> str:
    return (
        f"not merged: {worktree.record.branch} conflicts with {into.root} in {', '.join(files)}; "
        "nothing was changed (resolve it in the worktree, e.g. merge your branch there, then merge again)"
    )


# ------------------------------------------------------------------ remove, prune


def unmerged_work(worktree: Worktree, into: Tree | None = None) -> str:
    """What of the worktree's work is not merged ("" when nothing)."""
    parts: list[str] = []
    if worktree.uncommitted():
        parts.append("uncommitted changes")
    commits = worktree.commits()
    if commits:
        tip = _repo_git(
            worktree.repo, "rev-parse", f"refs/heads/{worktree.record.branch}", check=False
        ).out.strip()
        if worktree.record.origin == "agent":
            merged = worktree.record.merged_tip == tip
        else:
            target = into or worktree.repo.current
            merged = target.git("merge-base", "--is-ancestor", tip, "HEAD", check=False).code == 0
        if not merged:
            parts.append(f"{commits} commit{'s' * (commits != 1)} not merged")
    return " and ".join(parts)


def remove(worktree: Worktree, *, force: bool = False, into: Tree | None = None) -> None:
    if worktree.owner_alive() and not force:
        raise WorktreeError(
            f"worktree {worktree.name} is in use by process {worktree.record.pid}; "
            "end that session first (or --force)"
        )
    work = unmerged_work(worktree, into)
    if work and not force:
        raise WorktreeError(
            f"worktree {worktree.name} has {work}: merge it first "
            f"(wyckoff worktree merge {worktree.name}) or remove it with --force"
        )
    delete_worktree(worktree)


@dataclass(frozen=True, slots=True)
class Pruned:
    name: str
    pid: int | None
    kept_branch: str | None  # the branch kept because it holds work


def dead_worktrees(cwd: Path) -> list[Worktree]:
    """Worktrees whose recorded session process has died."""
    return [w for w in list_worktrees(cwd) if w.record.pid is not None and not w.owner_alive()]


def prune(cwd: Path) -> list[Pruned]:
    """Remove the worktrees whose session process died. One with work keeps its
    branch (its leftovers committed on it first), so nothing is lost."""
    pruned: list[Pruned] = []
    for worktree in dead_worktrees(cwd):
        commit_leftovers(worktree)
        keep = bool(unmerged_work(worktree))
        delete_worktree(worktree, keep_branch=keep)
        pruned.append(Pruned(worktree.name, worktree.record.pid, worktree.record.branch if keep else None))
    return pruned


def finish_session(worktree: Worktree) -> str | None:
    """A session in `worktree` ends: remove it when it holds no changes and no commits
    (None), else release it and return the one line saying how to review and merge."""
    if not worktree.exists():
        return None
    found = summary(worktree)
    if found.empty:
        delete_worktree(worktree)
        return None
    worktree.release()
    count = len(found.files)
    return (
        f"worktree {worktree.name} kept: {worktree.record.branch}, {count} file{'s' * (count != 1)} changed; "
        f"review: wyckoff worktree diff {worktree.name}; merge: wyckoff worktree merge {worktree.name}"
    )
