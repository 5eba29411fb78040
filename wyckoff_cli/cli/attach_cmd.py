"""`wyckoff attach ID`: open the app on a background session, live.

It shows what the session printed so far (from its chat log), what follows, and the
approval it waits for; an answer given here resumes the background call. Quitting
(Ctrl+D) detaches: the session keeps running. Only one app answers approvals at a
time; a second one (or `--view`) is view-only and says so.
"""

from __future__ import annotations

import argparse

from wyckoff_cli.core.errors import UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="the background session (`wyckoff ps`; a unique prefix will do)")
    parser.add_argument("--view", action="store_true", help="only watch: never answer its approvals")


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.storage.running import LIVE_STATES, RunningRegistry

    entry = RunningRegistry().read(args.id)
    if entry.state not in LIVE_STATES:
        where = f"; its history: wyckoff sessions show {entry.session_id}" if entry.session_id else ""
        raise UsageError(f"background session {entry.id} is {entry.state}, not running{where}")
    from wyckoff_cli.tui.attach_app import AttachApp

    app = AttachApp(entry, want="view" if args.view else "control")
    app.run()
    final = app.screen_of_session.entry
    history = f" Its history: wyckoff sessions show {final.session_id}" if final.session_id else ""
    if final.state in LIVE_STATES:
        print(
            f"Detached from {final.id}; it keeps running ({final.state}). `wyckoff attach {final.id}` comes back."
        )
    elif final.state == "done" and not app.screen_of_session.ended:
        print(f"Detached from {final.id}; its turn had ended, so it ends now (done).{history}")
    else:
        print(f"Background session {final.id} is {final.state}.{history}")
    return 0
