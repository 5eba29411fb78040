"""Wyckoff's git worktrees: make them, list them, find them, remove and prune them.

A worktree lives at `<main tree>/.wyckoff/worktrees/NAME` on the branch
`wyckoff/NAME`; its record, `<main tree>/.wyckoff/worktrees/NAME.json`, keeps what git
does not: the base commit it was made from, where it came from (`session`: `--worktree`;
`agent`: a sub-agent's `isolation: worktree`), its git folder, the session using it
and that session's process (pid and start time, so a reused pid is not mistaken for
it). `.wyckoff/worktrees/` is ignored through `.wyckoff/.gitignore`.

Made from HEAD (`--worktree`), or for a sub-agent from the parent's files as they are
now, uncommitted and untracked ones included: that state is committed as the branch's
base (on top of HEAD), so what the child changes is told apart from what the parent
had. Files matched by `.worktreeinclude` (gitignore syntax) that git ignores are copied
in; nothing else git ignores is.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from wyckoff_cli.runtime.worktrees.git import Tree, WorktreeError, discover, run_git
from wyckoff_cli.storage.atomic import write_atomic
from wyckoff_cli.storage.project_dir import GITIGNORE

FOLDER = Path(".wyckoff") / "worktrees"
BRANCH_PREFIX = "wyckoff/"
INCLUDE_FILE = ".worktreeinclude"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_ADJECTIVES = (
    "amber", "brisk", "calm", "clever", "dapper", "eager", "fuzzy", "gentle", "happy", "jolly",
    "keen", "lively", "mellow", "nimble", "plucky", "quiet", "rapid", "sunny", "tidy", "witty",
)  # fmt: skip
_NOUNS = (
    "badger", "beacon", "comet", "falcon", "fern", "harbor", "heron", "lantern", "maple", "meadow",
    "otter", "pebble", "quill", "raven", "river", "sparrow", "thistle", "walnut", "willow", "wren",
)  # fmt: skip


@dataclass
class WorktreeRecord:
    """What `NAME.json` holds."""

    name: str
    path: str
    branch: str
    base: str  # the commit the branch was made from (for a sub-agent: the parent's state)
    git_dir: str  # the worktree's own git folder, inside the common `.git`
    origin: str = "session"  # `session` (--worktree) or `agent` (isolation: worktree)
    created: str = ""
    title: str = ""  # the session's title or first prompt: the message of a merge's commit
    session_id: str | None = None
    pid: int | None = None  # the process of the session using it (None: none)
    pid_started: str | None = None  # that process's start time (/proc), against pid reuse
    merged_tip: str | None = None  # a sub-agent's branch tip last applied to the parent's tree


@dataclass(frozen=True, slots=True)
class Repository:
    """The repository around a folder: the main work tree and the tree the folder is in."""

    main: Path  # the main work tree (worktrees and records live in its .wyckoff/)
    common_dir: Path  # the repository's `.git`
    current: Tree  # the work tree holding the folder (the main one or a worktree)

    @property
    def folder(self) -> Path:
        return self.main / FOLDER

    def record_file(self, name: str) -> Path:
        return self.folder / f"{name}.json"


@dataclass
class Worktree:
    record: WorktreeRecord
    repo: Repository
    notices: list[str] = field(default_factory=list)  # e.g. the main tree had uncommitted changes

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def path(self) -> Path:
        return Path(self.record.path)

    @property
    def tree(self) -> Tree:
        return Tree(self.path, Path(self.record.git_dir))

    def exists(self) -> bool:
        return (self.path / ".git").is_file() and Path(self.record.git_dir).is_dir()

    def uncommitted(self) -> list[str]:
        return self.tree.status() if self.exists() else []

    def commits(self) -> int:
        """Commits on the branch since its base."""
        done = run_git(
            ["rev-list", "--count", f"{self.record.base}..refs/heads/{self.record.branch}"],
            cwd=self.repo.main,
            git_dir=self.repo.common_dir,
            check=False,
        )
        return int(done.out.strip()) if done.code == 0 and done.out.strip().isdigit() else 0

    def owner_alive(self) -> bool:
        return self.record.pid is not None and process_alive(self.record.pid, self.record.pid_started)

    def save(self) -> None:
        write_atomic(self.repo.record_file(self.name), json.dumps(asdict(self.record), indent=2) + "\n")

    def claim(self, pid: int | None = None, session_id: str | None = None) -> None:
        """Record the session (and its process) using this worktree."""
        pid = os.getpid() if pid is None else pid
        self.record.pid, self.record.pid_started = pid, process_started(pid)
        if session_id is not None:
            self.record.session_id = session_id
        self.save()

    def release(self) -> None:
        self.record.pid = self.record.pid_started = None
        self.save()


def open_repository(cwd: Path) -> Repository:
    top, git_dir, common = discover(cwd)
    main = common.parent if common.name == ".git" else None
    if main is None or not main.is_dir():
        raise WorktreeError(f"the repository at {common} has no main work tree: worktrees need one")
    return Repository(main, common, Tree(top, git_dir))


def check_head(tree: Tree) -> str:
    """HEAD's commit; a clear error for an unborn or detached HEAD."""
    done = tree.git("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
    if done.code != 0:
        raise WorktreeError(
            f"{tree.root} has no commits yet (unborn HEAD): commit once, then worktrees can branch from it"
        )
    if tree.branch() is None:
        raise WorktreeError(
            f"HEAD is detached in {tree.root}: check out a branch first (git switch BRANCH); "
            "a worktree's branch is made from the current one"
        )
    return done.out.strip()


def check_name(repo: Repository, name: str) -> None:
    if not _NAME.match(name) or ".." in name or name.endswith((".lock", ".json", ".")):
        raise WorktreeError(
            f"{name!r} is not a valid worktree name: use letters, digits, '.', '_' and '-' "
            f"(it becomes the branch {BRANCH_PREFIX}{name})"
        )
    done = run_git(["check-ref-format", f"refs/heads/{BRANCH_PREFIX}{name}"], cwd=repo.main, check=False)
    if done.code != 0:
        raise WorktreeError(f"{BRANCH_PREFIX}{name} is not a valid branch name")
    if (repo.folder / name).exists() or repo.record_file(name).exists():
        raise WorktreeError(f"a worktree named {name} exists already (wyckoff worktree list)")
    if branch_exists(repo, f"{BRANCH_PREFIX}{name}"):
        raise WorktreeError(f"the branch {BRANCH_PREFIX}{name} exists already: choose another name")


def branch_exists(repo: Repository, branch: str) -> bool:
    done = run_git(
        ["rev-parse", "--verify", "-q", f"refs/heads/{branch}"],
        cwd=repo.main,
        git_dir=repo.common_dir,
        check=False,
    )
    return done.code == 0


def generate_name(repo: Repository, rng: random.Random | None = None) -> str:
    """A short readable name not in use: `brisk-otter`, then `brisk-otter-2` …"""
    rng = rng or random.Random()
    for _ in range(20):
        name = f"{rng.choice(_ADJECTIVES)}-{rng.choice(_NOUNS)}"
        if _free(repo, name):
            return name
    base = f"{rng.choice(_ADJECTIVES)}-{rng.choice(_NOUNS)}"
    number = 2
    while not _free(repo, f"{base}-{number}"):
        number += 1
    return f"{base}-{number}"


def _free(repo: Repository, name: str) -> bool:
    taken = (repo.folder / name).exists() or repo.record_file(name).exists()
    return not taken and not branch_exists(repo, f"{BRANCH_PREFIX}{name}")


def create_worktree(
    cwd: Path,
    name: str | None = None,
    *,
    from_current_state: bool = False,
    origin: str = "session",
    title: str = "",
) -> Worktree:
    """Make a worktree of the repository around `cwd` (see the module docstring).
    `from_current_state`: branch from the files as they are (a sub-agent's worktree)."""
    repo = open_repository(cwd)
    head = check_head(repo.current)
    if name is not None:
        check_name(repo, name)
    else:
        name = generate_name(repo)
    notices: list[str] = []
    if not from_current_state and repo.current.status():
        notices.append(
            f"{repo.current.root} has uncommitted changes: they are not in the worktree "
            "(it is made from the last commit, HEAD)"
        )
    ensure_ignored(repo.main)  # before a snapshot: other worktrees' files are not in it
    base = head
    if from_current_state:
        tree = repo.current.snapshot_tree()
        if tree != repo.current.git("rev-parse", "HEAD^{tree}").out.strip():
            message = "wyckoff: the parent session's uncommitted changes (the base of this worktree)"
            base = repo.current.git("commit-tree", tree, "-p", head, "-m", message).out.strip()
    path = repo.folder / name
    branch = f"{BRANCH_PREFIX}{name}"
    parallel = ["-c", "checkout.workers=0", "-c", "checkout.thresholdForParallelism=500"]  # a worker per core
    add = [*parallel, "worktree", "add", "-q", "-b", branch, str(path), base]
    run_git(add, cwd=repo.main, git_dir=repo.common_dir)
    git_dir = admin_folder(repo, path)
    record = WorktreeRecord(
        name=name,
        path=str(path),
        branch=branch,
        base=base,
        git_dir=str(git_dir),
        origin=origin,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        title=title,
    )
    worktree = Worktree(record, repo, notices)
    worktree.save()
    copy_included(repo.current, path)
    return worktree


def admin_folder(repo: Repository, path: Path) -> Path:
    """The git folder `git worktree add` made for `path`, found from the common `.git`
    (never from the worktree's own `.git` file)."""
    wanted = os.path.realpath(path / ".git")
    folders = repo.common_dir / "worktrees"
    for folder in sorted(folders.iterdir()) if folders.is_dir() else ():
        with contextlib.suppress(OSError):
            if os.path.realpath((folder / "gitdir").read_text(encoding="utf-8").strip()) == wanted:
                return folder
    raise WorktreeError(f"git made no administrative folder for {path}")


def ensure_ignored(main: Path) -> None:
    """`.wyckoff/.gitignore` ignores `worktrees/`: added to the one Wyckoff wrote earlier,
    or written (ignoring itself too, so the main tree's `git status` stays clean)."""
    target = main / ".wyckoff" / ".gitignore"
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        target.parent.mkdir(parents=True, exist_ok=True)
        note = "# Wyckoff's git worktrees (`wyckoff worktree list`); this file ignores itself too:\n"
        target.write_text(f"{GITIGNORE}{note}/worktrees/\n/.gitignore\n", encoding="utf-8")
        return
    except OSError as exc:
        raise WorktreeError(f"cannot read {target}: {exc.strerror or exc}") from None
    lines = {line.strip() for line in text.splitlines()}
    if not lines & {"/worktrees/", "worktrees/", "/worktrees", "worktrees"}:
        ending = "" if text.endswith("\n") or not text else "\n"
        with target.open("a", encoding="utf-8") as handle:
            handle.write(f"{ending}# Wyckoff's git worktrees (`wyckoff worktree list`)\n/worktrees/\n")


def copy_included(source: Tree, destination: Path) -> list[str]:
    """Copy the files `.worktreeinclude` matches that git ignores into `destination`."""
    include = source.root / INCLUDE_FILE
    if not include.is_file():
        return []
    listed = source.git(
        "ls-files", "-z", "--others", "--ignored", f"--exclude-from={include}", check=False
    ).out.split("\0")
    ignored = set(
        source.git("ls-files", "-z", "--others", "--ignored", "--exclude-standard", check=False).out.split(
            "\0"
        )
    )
    copied: list[str] = []
    for relative in (p for p in listed if p and p in ignored and not p.startswith(".wyckoff/")):
        origin, target = source.root / relative, destination / relative
        if origin.is_symlink() or not origin.is_file():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, target)
        copied.append(relative)
    return copied


def list_worktrees(cwd: Path) -> list[Worktree]:
    """Wyckoff's worktrees of the repository around `cwd`, by name."""
    repo = open_repository(cwd)
    found: list[Worktree] = []
    for file in sorted(repo.folder.glob("*.json")) if repo.folder.is_dir() else ():
        record = read_record(file)
        if record is not None:
            found.append(Worktree(record, repo))
    return found


def read_record(file: Path) -> WorktreeRecord | None:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        known = set(WorktreeRecord.__dataclass_fields__)
        return WorktreeRecord(**{k: v for k, v in data.items() if k in known})
    except (OSError, ValueError, TypeError):
        return None


def get_worktree(cwd: Path, name: str) -> Worktree:
    for worktree in list_worktrees(cwd):
        if worktree.name == name:
            return worktree
    raise WorktreeError(f"no worktree named {name!r} (wyckoff worktree list shows them)")


def worktree_at(path: Path) -> Worktree | None:
    """The Wyckoff worktree whose files are at or above `path` (a session's workspace
    root), or None: how a session's record tells its worktree and branch."""
    resolved = Path(os.path.realpath(path))
    for folder in (resolved, *resolved.parents):
        if folder.parent.name == FOLDER.name and folder.parent.parent.name == FOLDER.parent.name:
            record = read_record(folder.parent / f"{folder.name}.json")
            if record is not None and Path(record.path) == folder:
                with contextlib.suppress(WorktreeError):
                    return Worktree(record, open_repository(folder.parent.parent.parent))
    return None


def delete_worktree(worktree: Worktree, *, keep_branch: bool = False) -> None:
    """Remove the worktree's folder, its git folder and record (and its branch unless
    `keep_branch`). The caller decides whether its work may go."""
    repo = worktree.repo
    if worktree.path.exists():
        run_git(
            ["worktree", "remove", "--force", "--force", str(worktree.path)],
            cwd=repo.main,
            git_dir=repo.common_dir,
            check=False,
        )
        if worktree.path.exists():
            shutil.rmtree(worktree.path, ignore_errors=True)
    run_git(["worktree", "prune"], cwd=repo.main, git_dir=repo.common_dir, check=False)
    if not keep_branch and branch_exists(repo, worktree.record.branch):
        run_git(["branch", "-D", worktree.record.branch], cwd=repo.main, git_dir=repo.common_dir)
    with contextlib.suppress(FileNotFoundError):
        repo.record_file(worktree.name).unlink()


# ------------------------------------------------------------------ the owning process


def process_started(pid: int) -> str | None:
    """The process's start time (field 22 of /proc/PID/stat), or None where unknown."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def process_alive(pid: int, started: str | None) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    if started is None:
        return True
    now = process_started(pid)
    if now is None:
        return True  # no /proc: trust the pid
    if now != started:
        return False  # the pid was reused
    state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace").rpartition(")")[2].split()
    return not state or state[0] != "Z"  # a zombie has died
