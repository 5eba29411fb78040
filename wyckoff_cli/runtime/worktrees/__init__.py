"""Git worktrees for sessions and sub-agents (docs/PARALLEL.md): `store` makes, lists,
finds and deletes them and keeps their records; `changes` diffs, merges, removes and
prunes them; `git` runs git hardened, with explicit git folders."""

from wyckoff_cli.runtime.worktrees.changes import (
    MergeResult,
    Pruned,
    Summary,
    dead_worktrees,
    diff,
    finish_session,
    merge,
    prune,
    remove,
    summary,
    unmerged_work,
)
from wyckoff_cli.runtime.worktrees.git import Tree, WorktreeError
from wyckoff_cli.runtime.worktrees.store import (
    Repository,
    Worktree,
    WorktreeRecord,
    create_worktree,
    get_worktree,
    list_worktrees,
    open_repository,
    worktree_at,
)

__all__ = [
    "MergeResult",
    "Pruned",
    "Repository",
    "Summary",
    "Tree",
    "Worktree",
    "WorktreeError",
    "WorktreeRecord",
    "create_worktree",
    "dead_worktrees",
    "diff",
    "finish_session",
    "get_worktree",
    "list_worktrees",
    "merge",
    "open_repository",
    "prune",
    "remove",
    "summary",
    "unmerged_work",
    "worktree_at",
]
