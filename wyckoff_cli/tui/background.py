"""The app's side of background sessions: `/bg`, `/agents` and the waiting mark.

- `start_background(screen, prompt, settings)` runs `wyckoff run --background` with the
  current session's model, permission mode, sandbox and workspace, and says its id.
- `WaitingWatch` reads the registry (storage/running.py) once a second, only what
  changed; a session of this project that starts waiting is shown in the status bar
  (`StatusModel.waiting`) and announced with a toast, in every open app.
- `stop_session(entry)` asks a session to end over its socket (SIGTERM otherwise).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.screen import Screen

from wyckoff_cli.session.status import StatusModel
from wyckoff_cli.storage.running import RunningRegistry, RunningSession, git_place

WATCH_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class BackgroundSettings:
    """What a session started from the app takes from the current one."""

    root: Path
    model: str | None
    mode: str | None
    sandbox: str | None = None


def background_argv(prompt: str, settings: BackgroundSettings) -> list[str]:
    argv = [sys.executable, "-P", "-m", "wyckoff_cli", "run", "--background", "--cwd", str(settings.root)]
    if settings.model:
        argv += ["--model", settings.model]
    if settings.mode:
        argv += ["--permission-mode", settings.mode]
    if settings.sandbox:
        argv += ["--sandbox", settings.sandbox]
    return [*argv, "--", prompt]


async def start_background(prompt: str, settings: BackgroundSettings) -> tuple[bool, str]:
    """(started, what to tell the user): the new id and how to follow it, or why not."""
    try:
        process = await asyncio.create_subprocess_exec(
            *background_argv(prompt, settings),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(settings.root),
        )
        out, err = await process.communicate()
    except OSError as exc:
        return False, f"cannot start a background session: {exc.strerror or exc}"
    if process.returncode != 0:
        return False, err.decode(
            errors="replace"
        ).strip() or f"`wyckoff run --background` exited {process.returncode}"
    first = out.decode(errors="replace").splitlines()[0] if out else ""
    session_id = first.rstrip(".").split()[-1] if first else "?"
    return True, f"Started background session {session_id} · /agents lists it · `wyckoff attach {session_id}`"


async def stop_session(entry: RunningSession) -> str:
    """Ask `entry` to end cleanly; what to tell the user."""
    from wyckoff_cli.session.channel import ChannelClient, ChannelError
    from wyckoff_cli.storage.running import process_alive, socket_path

    try:
        client = await ChannelClient.connect(socket_path(entry.id), want="view")
    except ChannelError:
        if not process_alive(entry.pid, entry.pid_start):
            return f"{entry.id} is not running"
        with contextlib.suppress(ProcessLookupError):
            os.kill(entry.pid, signal.SIGTERM)
        return f"Asked {entry.id} to stop (SIGTERM)"
    try:
        await client.send({"kind": "stop"})
    finally:
        await client.close()
    return f"Asked {entry.id} to stop; its history stays valid"


async def worktree_diff(entry: RunningSession) -> tuple[bool, str]:
    """The merge preview of `entry`'s worktree: `wyckoff worktree diff NAME`, run in its
    project; (False, why) when it has no worktree or the command fails."""
    if not entry.worktree:
        return False, f"{entry.id}: no worktree (it runs in the main tree)"
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-P", "-m", "wyckoff_cli", "worktree", "diff", entry.worktree,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=entry.project,
        )  # fmt: skip
        out, err = await process.communicate()
    except OSError as exc:
        return False, f"cannot run `wyckoff worktree diff`: {exc.strerror or exc}"
    if process.returncode != 0:
        return False, err.decode(errors="replace").strip() or "`wyckoff worktree diff` failed"
    return True, out.decode(errors="replace")


class WaitingWatch:
    """This project's background sessions that wait for the user, read cheaply: the
    registry folder's mtime says whether anything was written; while one waits, every
    look reads it again (a crash changes no file)."""

    def __init__(
        self, root: Path, registry: RunningRegistry | None = None, *, exclude: str | None = None
    ) -> None:
        self.registry = registry if registry is not None else RunningRegistry()
        self.exclude = exclude  # the session an attached screen shows itself
        self.project = git_place(root).project
        self.root = root
        self._stamp: int | None = None
        self.waiting: tuple[str, ...] = ()

    def look(self) -> tuple[tuple[str, ...], list[str]]:
        """(the waiting labels now, the ones that started waiting since the last look)."""
        try:
            stamp = self.registry.root.stat().st_mtime_ns
        except OSError:
            stamp = None
        if stamp == self._stamp and not self.waiting:
            return self.waiting, []
        self._stamp = stamp
        entries = self.registry.entries(self.project)
        now = tuple(
            f"{e.id}: {e.waiting_for or 'the user'}"
            for e in entries
            if e.state == "waiting" and e.id != self.exclude
        )
        new = [label for label in now if label not in self.waiting]
        self.waiting = now
        return now, new


def install_watch(
    screen: Screen[Any],
    root: Path,
    status: StatusModel,
    changed: Callable[[], None],
    *,
    exclude: str | None = None,
) -> WaitingWatch:
    """Watch from a screen: `status.waiting` follows the registry; a new waiting
    session is announced with a toast (`screen.notify`)."""
    watch = WaitingWatch(root, exclude=exclude)

    def tick() -> None:
        now, new = watch.look()
        if now != status.waiting:
            status.waiting = now
            changed()
        for label in new:
            session_id, _, what = label.partition(": ")
            screen.notify(
                f"{session_id} waits for {what} · /agents, or `wyckoff attach {session_id}`",
                title="A background session waits",
                severity="warning",
            )

    tick()
    screen.set_interval(WATCH_SECONDS, tick)
    return watch
