"""Worktree creation on the 20,000-file benchmark tree (issue 29: under 2 s each).

Builds the tree of bench/checkpoints.py (20,000 small source files in 400 folders, plus
2,000 `.gitignore`d build outputs), commits it, then times through the real plumbing
(wyckoff_cli/runtime/worktrees):

- four `--worktree` creations in a row (branch from HEAD, checkout of every file,
  `.wyckoff/.gitignore`, the record), as four parallel sessions would make them;
- a sub-agent's creation from the parent's current files (30 files changed or new:
  a snapshot of the whole tree into a private index first);
- `wyckoff worktree list`'s work for five worktrees (status and commits of each);
- a diff stat of one worktree with 30 changes, and the removal of an unchanged one
  (what a session that changed nothing does at its end).

    python bench/worktrees.py [--files 20000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from checkpoints import build_tree

from wyckoff_cli.runtime import worktrees as wt

GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@x",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@x",
}


CPU: dict[str, list[float]] = {}  # what: CPU seconds (this process and git's), beside the wall time


def timed(fn: Callable[[], object], what: str = "") -> tuple[float, object]:
    before = _cpu()
    started = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - started
    if what:
        CPU.setdefault(what, []).append(_cpu() - before)
    return elapsed, value


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def one_round(files: int, results: dict[str, list[float]]) -> None:
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as work:
        os.environ["WYCKOFF_HOME"] = home
        root = Path(work) / "repo"
        root.mkdir()
        made = build_tree(root, files)
        env = {**os.environ, **GIT_ENV}
        subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
        subprocess.run(["git", "commit", "-q", "-m", "tree"], cwd=root, check=True, env=env)
        for index in range(4):
            what = f"create #{index + 1} (from HEAD)"
            seconds, _ = timed(lambda index=index: wt.create_worktree(root, f"session-{index}"), what)
            results[what].append(seconds)
        for path in made[:25]:
            path.write_text(path.read_text() + "# parent's change\n")
        for index in range(5):
            (made[0].parent / f"new_{index}.py").write_text("new\n")
        seconds, child = timed(
            lambda: wt.create_worktree(root, "child", from_current_state=True, origin="agent")
        )
        results["create from the parent's files (sub-agent)"].append(seconds)
        results["list (5 worktrees)"].append(
            timed(lambda: [(w.uncommitted(), w.commits()) for w in wt.list_worktrees(root)])[0]
        )
        first = wt.get_worktree(root, "session-0")
        for path in sorted(first.path.glob("pkg000/*.py"))[:30]:
            path.write_text(path.read_text() + "# agent's change\n")
        results["diff stat, 30 changes"].append(timed(lambda: wt.diff(first, stat=True))[0])
        unchanged = wt.get_worktree(root, "session-1")
        results["end of a session that changed nothing (removal)"].append(
            timed(lambda: wt.finish_session(unchanged))[0]
        )
        assert isinstance(child, wt.Worktree)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    results: dict[str, list[float]] = {
        **{f"create #{i} (from HEAD)": [] for i in range(1, 5)},
        "create from the parent's files (sub-agent)": [],
        "list (5 worktrees)": [],
        "diff stat, 30 changes": [],
        "end of a session that changed nothing (removal)": [],
    }
    for round_ in range(args.repeat):
        one_round(args.files, results)
        print(f"  round {round_ + 1} done", file=sys.stderr)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{args.files:,} files, {args.repeat} rounds, load average {load:.1f}")
    print(f"{'what':<52} {'median':>10} {'min':>10} {'max':>10} {'CPU median':>12}")
    for name, values in results.items():
        ms = [v * 1000 for v in values]
        cpu = f"{statistics.median(CPU[name]) * 1000:>10.0f}ms" if name in CPU else ""
        print(f"{name:<52} {statistics.median(ms):>8.0f}ms {min(ms):>8.0f}ms {max(ms):>8.0f}ms {cpu:>12}")


if __name__ == "__main__":
    main()
