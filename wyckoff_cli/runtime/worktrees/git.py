"""Git as the worktree plumbing runs it: hardened, with explicit git folders.

Every call goes through `hardened_git_argv` / `hardened_git_env`
(tools/permissions/git_env.py): no hooks, fsmonitor, pager, external diff or global
config. A worktree's files were written by an agent, so git never discovers the
repository from them: commands on a worktree name its administrative folder
(`<common .git>/worktrees/NAME`, recorded when it was made) and its work tree.

The hardened environment leaves out the user's global config, which holds their
name and e-mail; `identity_env` reads them once, outside it (`git config --get` runs
no program), so commits Wyckoff makes on a worktree's branch carry the user's name.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from wyckoff_cli.core.errors import WyckoffError
from wyckoff_cli.tools.permissions.git_env import hardened_git_argv, hardened_git_env

FALLBACK_NAME = "Wyckoff"
FALLBACK_EMAIL = "wyckoff@localhost"


class WorktreeError(WyckoffError):
    """A worktree request that cannot be done; the message says why, in one line."""

    exit_code = 1


@dataclass(frozen=True, slots=True)
class GitResult:
    code: int
    out: str
    err: str


def git_binary() -> str:
    found = shutil.which("git")
    if found is None:
        raise WorktreeError("git is not installed (worktrees need it)")
    return found


def run_git(
    args: Sequence[str],
    *,
    cwd: Path,
    git_dir: Path | None = None,
    work_tree: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    check: bool = True,
) -> GitResult:
    """Run `git ARGS` hardened; `check`: a failure raises `WorktreeError` with git's words."""
    prefix: list[str] = []
    if git_dir is not None:
        prefix.append(f"--git-dir={git_dir}")
    if work_tree is not None:
        prefix.append(f"--work-tree={work_tree}")
    argv = hardened_git_argv(git_binary(), *prefix, *args)
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=hardened_git_env({**identity_env(), **(env or {})}),
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            check=False,
        )
    except OSError as exc:
        raise WorktreeError(f"git could not run in {cwd}: {exc.strerror or exc}") from None
    result = GitResult(done.returncode, done.stdout, done.stderr)
    if check and result.code != 0:
        raise WorktreeError(f"git {args[0]} failed: {first_line(result.err or result.out)}")
    return result


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0].removeprefix("fatal: ").removeprefix("error: ") if lines else "no output"


@functools.cache
def identity_env() -> dict[str, str]:
    """`GIT_AUTHOR_*` and `GIT_COMMITTER_*` from the user's git config (or Wyckoff's
    fallback), read once without the hardening that hides the global config."""
    names: dict[str, str] = {}
    git = shutil.which("git")
    plain = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    for key, fallback in (("user.name", FALLBACK_NAME), ("user.email", FALLBACK_EMAIL)):
        value = ""
        if git is not None:
            try:
                done = subprocess.run(
                    [git, "config", "--get", key],
                    capture_output=True,
                    text=True,
                    env=plain,
                    cwd=tempfile.gettempdir(),
                    check=False,
                )
                value = done.stdout.strip() if done.returncode == 0 else ""
            except OSError:
                value = ""
        names[key] = value or fallback
    return {
        "GIT_AUTHOR_NAME": names["user.name"],
        "GIT_AUTHOR_EMAIL": names["user.email"],
        "GIT_COMMITTER_NAME": names["user.name"],
        "GIT_COMMITTER_EMAIL": names["user.email"],
    }


@dataclass(frozen=True, slots=True)
class Tree:
    """One work tree of a repository, addressed explicitly: its files and git folder."""

    root: Path
    git_dir: Path

    def git(self, *args: str, env: Mapping[str, str] | None = None, check: bool = True) -> GitResult:
        return run_git(args, cwd=self.root, git_dir=self.git_dir, work_tree=self.root, env=env, check=check)

    def head(self) -> str:
        return self.git("rev-parse", "--verify", "-q", "HEAD^{commit}").out.strip()

    def branch(self) -> str | None:
        """The branch checked out (`refs/heads/...`), or None when HEAD is detached."""
        done = self.git("symbolic-ref", "-q", "HEAD", check=False)
        return done.out.strip() if done.code == 0 else None

    def status(self) -> list[str]:
        """`git status --porcelain` lines: what is uncommitted (untracked files included)."""
        out = self.git("status", "--porcelain", "-z", "--untracked-files=all").out
        return [entry for entry in out.split("\0") if entry]

    def dirty_paths(self) -> set[str]:
        paths: set[str] = set()
        entries = self.git("status", "--porcelain", "-z", "--untracked-files=all").out.split("\0")
        renamed = False
        for entry in entries:
            if not entry:
                continue
            if renamed:  # the source of a rename, after its target
                paths.add(entry)
                renamed = False
                continue
            paths.add(entry[3:])
            renamed = entry[0] in "RC"
        return paths

    def snapshot_tree(self) -> str:
        """The tree of the files as they are now, untracked ones included (ignored
        ones not), made in a copy of the index so the real one is untouched."""
        index = self.git_dir / "index"
        with tempfile.TemporaryDirectory(prefix="wyckoff-index-") as folder:
            temp = Path(folder) / "index"
            if index.is_file():
                shutil.copyfile(index, temp)  # its stat cache spares hashing unchanged files
            env = {"GIT_INDEX_FILE": str(temp)}
            if not index.is_file():
                self.git("read-tree", "HEAD", env=env)
            self.git("add", "-A", ".", env=env)
            return self.git("write-tree", env=env).out.strip()


def discover(cwd: Path) -> tuple[Path, Path, Path]:
    """(the top folder of the work tree holding `cwd`, its git folder, the repository's
    common git folder) — the user's own folder, so git may discover it."""
    if not cwd.is_dir():
        raise WorktreeError(f"{cwd} is not a folder")
    done = run_git(
        ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--git-common-dir"], cwd=cwd, check=False
    )
    if done.code != 0:
        raise WorktreeError(f"{cwd} is not in a git repository: worktrees need one (git init, then commit)")
    lines = done.out.splitlines()
    if len(lines) < 3 or not lines[0]:
        raise WorktreeError(f"{cwd} is in a bare git repository: worktrees need a work tree")
    top, git_dir = Path(lines[0]), Path(lines[1])
    common = Path(lines[2])
    common = common if common.is_absolute() else (cwd / common)
    return Path(os.path.realpath(top)), Path(os.path.realpath(git_dir)), Path(os.path.realpath(common))
