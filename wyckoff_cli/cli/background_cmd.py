"""`wyckoff run --background`: the same run, in a detached process.

The command starts `wyckoff run ... --background-child ID` with every other argument
passed through (so `--worktree`, `--model`, `--permission-mode` ... apply), in a new
session (no controlling terminal: closing the terminal does not end it), stdin from
/dev/null and stdout and stderr to `<data dir>/running/ID.log`; it prints the id and
how to follow it, and returns at once with exit 0. The detached process records its
chat log as any run does and hosts its turn through `session/background_host.py`:
approvals wait for an attached app (`wyckoff attach ID`) instead of being denied.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from wyckoff_cli.core.errors import UsageError

if TYPE_CHECKING:
    from wyckoff_cli.core.events import RuntimeEvent
    from wyckoff_cli.session.background_host import BackgroundHost
    from wyckoff_cli.session.builder import SessionBuilder
    from wyckoff_cli.session.headless import HeadlessChat
    from wyckoff_cli.storage.recorder import SessionRecorder

CHILD_FLAG = "--background-child"


def add_background_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--background",
        action="store_true",
        help="run detached: print the session's id and return at once (`wyckoff ps`, `attach`, `stop`)",
    )
    parser.add_argument(CHILD_FLAG, dest="background_child", metavar="ID", help=argparse.SUPPRESS)


def child_argv(argv: list[str], prompt: str, session_id: str) -> list[str]:
    """The detached process's arguments: the user's, without `--background`, with a
    prompt read from stdin (`-`) replaced by its text."""
    rest = list(argv)
    if rest and rest[0] == "run":
        rest = rest[1:]
    rest = [a for a in rest if a != "--background"]
    if "-" in rest:  # the prompt came from stdin, which the detached process does not have
        rest[rest.index("-")] = prompt
    return ["run", CHILD_FLAG, session_id, *rest]  # first: a `--` may end the options


def start_background(args: argparse.Namespace, prompt: str) -> int:
    from wyckoff_cli.storage import paths
    from wyckoff_cli.storage.running import (
        RunningRegistry,
        RunningSession,
        new_background_id,
        now_iso,
        process_start,
    )

    if args.no_session:
        raise UsageError("--background needs a session (attach replays it from its log); drop --no-session")
    argv = getattr(args, "argv", None)
    if argv is None:
        raise UsageError("--background is only available from the `wyckoff` command line")
    registry = RunningRegistry()
    paths.ensure_private_dir(registry.root)
    session_id = new_background_id()
    while registry.path(session_id).exists():
        session_id = new_background_id()
    log_path = registry.root / f"{session_id}.log"
    cwd = args.cwd or os.getcwd()
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", "wyckoff_cli", *child_argv(argv, prompt, session_id)],
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own session: no terminal, no SIGHUP when it closes
            close_fds=True,
        )
    except OSError as exc:
        raise UsageError(f"cannot start the background session: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    from wyckoff_cli.storage.running import git_place

    root = paths.find_project_root(Path(cwd).resolve())  # the detached process writes the exact one
    entry = RunningSession(
        id=session_id,
        pid=process.pid,
        project=str(git_place(root).project),
        root=str(root),
        model=args.model or "",
        started=now_iso(),
        title=" ".join(prompt.split())[:80],
        pid_start=process_start(process.pid),
        log=str(log_path),
    )
    if not registry.path(session_id).exists():  # the child may have written it already
        registry.write(entry)
    print(f"Started background session {session_id}.")
    print(f"  follow it:  wyckoff attach {session_id}")
    print("  list them:  wyckoff ps")
    print(f"  stop it:    wyckoff stop {session_id}")
    print(f"  its output: {log_path}")
    return 0


async def open_host(
    args: argparse.Namespace,
    builder: SessionBuilder,
    recorder: SessionRecorder | None,
    model: str,
    prompt: str,
) -> BackgroundHost:
    """The detached process's host: its registry entry filled in, its socket listening,
    SIGTERM a clean stop, SIGHUP ignored."""
    from wyckoff_cli.session.background_host import BackgroundHost
    from wyckoff_cli.storage.running import (
        RegistryError,
        RunningRegistry,
        RunningSession,
        git_place,
        now_iso,
        process_start,
        socket_path,
    )

    if recorder is None:
        raise UsageError("--background needs a session; drop --no-session")
    registry = RunningRegistry()
    session_id = str(args.background_child)
    root = builder.workspace.root
    place = git_place(root)
    try:
        entry = registry.read(session_id)
    except RegistryError:
        entry = RunningSession(session_id, os.getpid(), str(root), str(root), model, now_iso())
    entry.pid, entry.pid_start = os.getpid(), process_start(os.getpid())
    entry.project, entry.root = str(place.project), str(root)
    entry.worktree, entry.branch = place.worktree, place.branch
    entry.model, entry.session_id = model, recorder.id
    entry.title = entry.title or " ".join(prompt.split())[:80]
    info = recorder.info
    host = BackgroundHost(
        registry, entry, socket_path(session_id), cost=lambda: info.cost_usd, title=lambda: info.title
    )
    await host.start()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGTERM, host.stop)
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal closing does not end it
    print(f"wyckoff: background session {session_id} (chat log: session {recorder.id})", file=sys.stderr)
    return host


async def follow_up(host: BackgroundHost, chat: HeadlessChat) -> AsyncIterator[RuntimeEvent] | None:
    """The next turn an attached app asks for (through the controller, as the first),
    or None when the session ends."""
    text = await host.next_turn()
    if text is None:
        return None
    return chat.turn(text)
