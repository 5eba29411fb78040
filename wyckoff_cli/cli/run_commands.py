"""`wyckoff run "/name ..."`: a built-in slash command, headless, from the one table.

The commands whose hosts include "headless" (session/commands.py) run here through
`ChatController.handle`, on the session `--continue` / `--resume ID` names (else a
new one): e.g. `wyckoff run --continue /diff`, `/undo`, `/rewind 1`, `/cost`. A
restore's preview goes to stderr and is confirmed by the command itself (it was
typed; the state before is saved, so it can be undone). What the command shows goes
to stdout: its text or table (`--output-format json`: one object with its events,
`stream-json`: each event as a line). Exit status: 0, 1 when it warned or failed
(nothing to undo, a refused restore), 2 for a command `wyckoff run` does not offer.
Commands that are prompts (`/init`, custom commands) run as turns in run_cmd.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import UsageError

if TYPE_CHECKING:
    from wyckoff_cli.session import requests as rq
    from wyckoff_cli.session.builder import SessionBuilder
    from wyckoff_cli.storage.sessions import LoadedSession


def builtin_request(prompt: str, builder: SessionBuilder) -> rq.SessionRequest | None:
    """The request a built-in command headless offers; None for a prompt (a turn, `/init`,
    a custom command); `UsageError` for a built-in `wyckoff run` does not offer."""
    from wyckoff_cli.session import requests as rq
    from wyckoff_cli.session.commands import BY_NAME, HEADLESS, parse, split
    from wyckoff_cli.session.custom_commands import discover_commands

    parts = split(prompt)
    if parts is None:
        return None
    prefer = builder.config.commands.prefer
    custom = {
        c.name
        for c in discover_commands(
            builder.workspace.root, trust_settings=builder.trust_project_hooks
        ).commands
        if c.name not in BY_NAME or c.name in prefer
    }
    request = parse(prompt, custom)
    if request is None or isinstance(request, rq.PromptCommand | rq.Turn):
        return None
    command = BY_NAME[parts[0].lower()]
    if HEADLESS not in command.hosts or isinstance(
        request, rq.Help | rq.Top | rq.Bottom | rq.Find | rq.Quit | rq.Background | rq.Agents
    ):
        offered = ", ".join(f"/{c.name}" for c in BY_NAME.values() if HEADLESS in c.hosts)
        raise UsageError(f"/{command.name} is not available in `wyckoff run` (it offers {offered})")
    return request


async def run_builtin(args: argparse.Namespace, builder: SessionBuilder, request: rq.SessionRequest) -> int:
    from wyckoff_cli.cli.sessions_cmd import export_text
    from wyckoff_cli.session.controller import ChatController

    config = builder.config
    controller = ChatController(
        builder,
        model=args.model or config.model,
        mode=args.permission_mode or config.permission_mode,
        loaded=_loaded(args, builder),
        exporter=export_text,
    )
    out = sys.stdout
    events: list[dict[str, Any]] = []
    failed = False
    try:
        async for event in controller.handle(request):
            if isinstance(event, ev.ConfirmRequested):  # the command typed is the consent
                print(f"{event.title}:\n{event.text}", file=sys.stderr)
                event.respond(True)
                continue
            failed = failed or (isinstance(event, ev.Notice) and event.level in ("warning", "error"))
            if args.output_format == "stream-json":
                out.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
            elif args.output_format == "json":
                if not isinstance(event, ev.TextDelta | ev.ThinkingDelta | ev.ToolOutput):
                    events.append(event.to_dict())
            else:
                _print(event)
    finally:
        await controller.aclose()
    if args.output_format == "json":
        out.write(json.dumps({"events": events, "session_id": controller.id}, ensure_ascii=False) + "\n")
    out.flush()
    return 1 if failed else 0


def _loaded(args: argparse.Namespace, builder: SessionBuilder) -> LoadedSession | None:
    store = builder.sessions()
    if args.resume:
        return store.load(args.resume)
    if args.continue_session:
        latest = store.latest(builder.workspace.root)
        if latest is None:
            raise UsageError(f"no session to continue in {builder.workspace.root}")
        return store.load(latest.id)
    return None


def _print(event: ev.RuntimeEvent) -> None:
    if isinstance(event, ev.CommandOutput):
        if event.title:
            print(event.title)
        if event.columns:
            widths = [
                max(len(str(row[i])) for row in [event.columns, *event.rows])
                for i in range(len(event.columns))
            ]
            for row in [event.columns, *event.rows]:
                print(
                    "  ".join(
                        str(cell).ljust(width) for cell, width in zip(row, widths, strict=False)
                    ).rstrip()
                )
        if event.text:
            print(event.text.rstrip("\n"))
    elif isinstance(event, ev.Notice):
        print(event.message, file=sys.stderr if event.level in ("warning", "error") else sys.stdout)
