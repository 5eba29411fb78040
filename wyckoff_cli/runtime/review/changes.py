"""The change a review looks at, from git, as Wyckoff runs git for itself.

`collect_change(workspace, target)` resolves `--uncommitted` (the work tree and the
index against HEAD, untracked files included), `--base REF` (HEAD against its merge
base with REF, as a pull request shows it) or `--commit SHA` (the commit against its
first parent) into a `Change`: one `FileDiff` per file and a way to read each file as
it is after the change (`Change.read_after`). Every git command goes through
`hardened_git_argv` / `hardened_git_env` (tools/permissions/git_env.py) with the git
folder and work tree named, so a repository's config cannot make git run programs.

A folder outside any repository, a ref that does not resolve or a git that fails is a
`ReviewError` (the CLI's usage error, exit 2); an empty change is a `Change` with no
files (the CLI says "nothing to review" and exits 0).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from wyckoff_cli.core.errors import UsageError
from wyckoff_cli.tools.permissions.git_env import git_args, hardened_git_env, repository_root

TargetKind = Literal["uncommitted", "base", "commit"]
FileStatus = Literal["added", "modified", "deleted", "renamed", "binary"]
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
MAX_FILE_DIFF_CHARS = 40_000  # one file's diff in a reviewer's prompt; the rest is cut
MAX_UNTRACKED_BYTES = 256_000  # a larger untracked file is listed, not shown
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class ReviewError(UsageError):
    """The review cannot start: not a repository, a bad ref, git failing."""


@dataclass(frozen=True, slots=True)
class ReviewTarget:
    kind: TargetKind = "uncommitted"
    ref: str = ""

    def describe(self) -> str:
        if self.kind == "base":
            return f"changes since {self.ref}"
        if self.kind == "commit":
            return f"commit {self.ref}"
        return "uncommitted changes"


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str  # after the change (before it, for a deleted file)
    status: FileStatus
    text: str  # this file's part of the unified diff
    hunks: tuple[tuple[int, int], ...] = ()  # (first line, line count) after the change

    @property
    def reviewable(self) -> bool:
        """Whether findings can point at it: it exists after the change, as text."""
        return self.status not in ("deleted", "binary")

    @property
    def size(self) -> int:
        return len(self.text)


@dataclass
class Change:
    root: Path
    target: ReviewTarget
    files: list[FileDiff]
    after_rev: str | None  # the revision the files are read at; None: the work tree
    _texts: dict[str, str | None] = field(default_factory=dict, repr=False)

    def file(self, path: str) -> FileDiff | None:
        return next((f for f in self.files if f.path == path), None)

    async def read_after(self, path: str) -> str | None:
        """The file as it is after the change, or None (deleted, binary, unreadable)."""
        if path not in self._texts:
            self._texts[path] = await self._read(path)
        return self._texts[path]

    async def _read(self, path: str) -> str | None:
        if self.after_rev is None:
            file = (self.root / path).resolve()
            if self.root.resolve() not in file.parents or not file.is_file():
                return None
            data = file.read_bytes()
        else:
            ok, data = await run_git(self.root, "show", f"{self.after_rev}:{path}")
            if not ok:
                return None
        if b"\0" in data[:8192]:
            return None
        return data.decode("utf-8", "replace")


async def run_git(root: Path, *args: str) -> tuple[bool, bytes]:
    """Run hardened git in `root`'s repository: (exit 0?, stdout; stderr when it failed)."""
    git = shutil.which("git")
    if git is None:
        raise ReviewError("git is not installed (a review reads the change from git)")
    argv = git_args(git, root, ["-c", "core.quotePath=false", *args])
    process = await asyncio.create_subprocess_exec(
        *argv,
        cwd=root,
        env=hardened_git_env(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate()
    return (True, out) if process.returncode == 0 else (False, err)


async def collect_change(workspace: Path, target: ReviewTarget) -> Change:
    root = repository_root(workspace)
    if root is None:  # `.git` a folder, or a file (a worktree's)
        raise ReviewError(f"{workspace} is not in a git repository (a review reviews a git change)")
    diff_args = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M"]
    if target.kind == "uncommitted":
        head = await _resolve(root, "HEAD")
        ok, out = await run_git(root, *diff_args, head or EMPTY_TREE)
        _check(ok, out, "git diff")
        text = out.decode("utf-8", "replace") + await _untracked(root)
        return Change(root, target, parse_diff(text), None)
    sha = await _resolve(root, target.ref)
    if sha is None:
        raise ReviewError(f"{target.ref!r} is not a commit in {root} (a branch, tag or SHA)")
    if target.kind == "base":
        ok, base = await run_git(root, "merge-base", sha, "HEAD")
        if not ok:
            raise ReviewError(f"HEAD has no common ancestor with {target.ref}")
        before, after = base.decode().strip(), "HEAD"
    else:
        ok, parents = await run_git(root, "rev-list", "--parents", "-n", "1", sha)
        _check(ok, parents, "git rev-list")
        words = parents.decode().split()
        before, after = (words[1] if len(words) > 1 else EMPTY_TREE), sha
    ok, out = await run_git(root, *diff_args, before, after)
    _check(ok, out, "git diff")
    return Change(root, target, parse_diff(out.decode("utf-8", "replace")), after)


async def _resolve(root: Path, ref: str) -> str | None:
    if ref.startswith("-"):
        return None  # never an option for git
    ok, out = await run_git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    return out.decode().strip() if ok and out.strip() else None


def _check(ok: bool, output: bytes, what: str) -> None:
    if not ok:
        message = output.decode("utf-8", "replace").strip().splitlines()
        raise ReviewError(f"{what} failed: {message[-1] if message else 'no message'}")


async def _untracked(root: Path) -> str:
    """Untracked files (not ignored) as "new file" diffs."""
    ok, out = await run_git(root, "ls-files", "--others", "--exclude-standard", "-z")
    _check(ok, out, "git ls-files")
    parts = []
    for name in filter(None, out.decode("utf-8", "replace").split("\0")):
        path = root / name
        if path.is_symlink() or not path.is_file():
            continue
        header = f"diff --git a/{name} b/{name}\nnew file mode 100644\n"
        data = path.read_bytes() if os.path.getsize(path) <= MAX_UNTRACKED_BYTES else None
        if data is None or b"\0" in data[:8192]:
            parts.append(header + f"Binary files /dev/null and b/{name} differ\n")
            continue
        lines = data.decode("utf-8", "replace").splitlines()
        body = "".join(f"+{line}\n" for line in lines)
        parts.append(header + f"--- /dev/null\n+++ b/{name}\n@@ -0,0 +1,{len(lines)} @@\n{body}")
    return "".join(parts)


def parse_diff(text: str) -> list[FileDiff]:
    """A unified diff (git's) as one `FileDiff` per file."""
    sections = re.split(r"(?m)^(?=diff --git )", text)
    return [diff for section in sections if section.startswith("diff --git ") if (diff := _file(section))]


def _file(section: str) -> FileDiff | None:
    old = new = renamed = None
    binary = False
    hunks: list[tuple[int, int]] = []
    for line in section.splitlines():
        if line.startswith("--- "):
            old = _path(line[4:], "a/")
        elif line.startswith("+++ "):
            new = _path(line[4:], "b/")
        elif line.startswith("rename to "):
            renamed = line[len("rename to ") :]
        elif line.startswith("Binary files "):
            binary = True
            new = _binary_path(section)
        elif match := _HUNK.match(line):
            hunks.append((int(match.group(1)), int(match.group(2) or 1)))
    if len(section) > MAX_FILE_DIFF_CHARS:
        section = section[:MAX_FILE_DIFF_CHARS] + "\n[... the rest of this file's diff is cut ...]\n"
    path = new or renamed or old or _binary_path(section)
    if not path:
        return None
    if binary:
        return FileDiff(path, "binary", section)
    if new is None and old is not None and renamed is None:
        return FileDiff(old, "deleted", section)
    status: FileStatus = "added" if old is None and new else "renamed" if renamed else "modified"
    return FileDiff(path, status, section, tuple(hunks))


def _path(text: str, prefix: str) -> str | None:
    text = text.split("\t", 1)[0]
    if text == "/dev/null":
        return None
    return text[len(prefix) :] if text.startswith(prefix) else text


def _binary_path(section: str) -> str:
    first = section.split("\n", 1)[0]
    match = re.match(r"diff --git a/(.*) b/(.*)$", first)
    return match.group(2) if match else ""
