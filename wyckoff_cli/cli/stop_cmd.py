"""`wyckoff stop ID`: end a background session cleanly.

The session is asked over its socket (or, when that cannot be reached, sent SIGTERM,
which it handles the same way): the running turn is aborted as Esc aborts it, so its
history stays valid; a worktree it runs in is kept. The command waits until the
process has ended (`--timeout`, default 30 s) and says how it ended.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import time

from wyckoff_cli.core.errors import UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="the background session (`wyckoff ps`; a unique prefix will do)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for it to end (30)")


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.storage.running import LIVE_STATES, RunningRegistry, process_alive

    registry = RunningRegistry()
    entry = registry.read(args.id)
    if entry.state not in LIVE_STATES:
        raise UsageError(f"background session {entry.id} is not running (it is {entry.state})")
    if not asyncio.run(_ask(entry.id)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(entry.pid, signal.SIGTERM)
    deadline = time.monotonic() + args.timeout
    while process_alive(entry.pid, entry.pid_start):
        if time.monotonic() > deadline:
            print(
                f"wyckoff: {entry.id} did not end within {args.timeout:g} s; `kill {entry.pid}` ends it at once"
            )
            return 1
        time.sleep(0.05)
    final = registry.read(entry.id)
    print(f"Stopped background session {final.id} ({final.state}).")
    if final.session_id:
        print(f"  its history: wyckoff sessions show {final.session_id}")
    return 0


async def _ask(session_id: str) -> bool:
    """Ask the session over its socket; False when it cannot be reached."""
    from wyckoff_cli.session.channel import ChannelClient, ChannelError
    from wyckoff_cli.storage.running import socket_path

    try:
        client = await ChannelClient.connect(socket_path(session_id), want="view")
    except ChannelError:
        return False
    try:
        await client.send({"kind": "stop"})
    finally:
        await client.close()
    return True
