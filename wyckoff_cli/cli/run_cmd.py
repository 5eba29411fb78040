"""`wyckoff run`: one turn, headless, with the same runtime as the app.

Exit status: 0 completed (or completed by a tool), 1 the turn failed or did not
finish (error, stopped, tool-round limit, unreliable, schema_failed), 2 usage or configuration
error (also: a bad --output-schema file; Wyckoff's folders are unusable, or the session is in use by another
process), 3 the turn completed but its session could not be saved (disk full),
130 interrupted.

Every run is saved as a session (docs/SESSIONS.md) unless `--no-session` is given;
`--continue` and `--resume ID` add the turn to an earlier session (`--fork`: to a new
session starting from its history, e.g. while another process is writing it). In
text mode the session id is printed to stderr; the `json` output carries it as
`session_id`. At the end a one-line summary goes to stderr (session/run_summary.py).

A turn is an `rq.Turn` sent through the `ChatController`, as in the app and ACP
(session/headless.py, shared with the Python API). `--output-schema FILE` (alias
`--json-schema`) makes the answer JSON valid against that schema (session/output_schema.py):
text output prints only the JSON, `json` and `stream-json` carry it as `data`.
`--no-session` works without a writable Wyckoff folder: memory is then off, with a
notice.

A built-in slash command that `wyckoff run` offers (`/diff`, `/undo`, `/cost`, ...:
cli/run_commands.py) runs as a request on the session named. `/init` and a prompt
`/NAME args` naming a custom slash command (docs/EXTENDING.md) are expanded first:
its `allowed-tools` are allowed for the run (a project's command file only once
trusted: `wyckoff permissions trust`), its `model` answers unless
`--model` is given, and its `` !`command` `` snippets go through the permission policy
(nothing can be asked here: allow them with `--allow` or a mode). The project's user
hooks run only once trusted (`wyckoff hooks trust`) or with `--trust-hooks`; the
project's `permissions.allow` rules apply only once trusted (`wyckoff permissions trust`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wyckoff_cli.cli.agents_cmd import add_budget_argument
from wyckoff_cli.cli.worktree_session import add_worktree_argument, run_in_worktree
from wyckoff_cli.core.errors import UsageError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from wyckoff_cli.core import events as ev
    from wyckoff_cli.session.background_host import BackgroundHost
    from wyckoff_cli.session.builder import SessionBuilder
    from wyckoff_cli.session.custom_commands import TurnRequest
    from wyckoff_cli.storage.recorder import SessionRecorder

EXIT_FOR_REASON = {
    "completed": 0,
    "completed_by_tool": 0,
    "aborted": 130,
}
EXIT_NOT_SAVED = 3


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("prompt", help="the request; `-` reads it from standard input")
    parser.add_argument("--model", "-m", help="model id (provider:model) or alias; default from config")
    parser.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="text: the answer; json: one object at the end; stream-json: every event as a JSON line",
    )
    parser.add_argument("--max-tool-rounds", type=_positive_int, help="tool rounds before the turn stops")
    parser.add_argument(
        "--permission-mode",
        choices=("default", "plan", "auto-edit", "auto", "yolo"),
        help="what runs without asking (nothing can be asked here: the rest is denied)",
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="RULE",
        help="allow calls matching RULE, e.g. 'run_shell(pytest*)' (repeatable)",
    )
    parser.add_argument(
        "--sandbox",
        choices=("workspace-write", "read-only", "off"),
        help="how shell commands run (default: [shell] sandbox, workspace-write where it can start)",
    )
    parser.add_argument("--cwd", type=Path, default=None, help="workspace folder (default: current)")
    parser.add_argument(
        "--image",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="attach an image (PNG, JPEG, GIF, WebP) to the prompt; repeat for more",
    )
    parser.add_argument(
        "--output-schema",
        "--json-schema",
        dest="output_schema",
        type=Path,
        metavar="FILE",
        help="the answer must be JSON valid against this JSON Schema (2020-12) file; text output prints only it",
    )
    parser.add_argument(
        "--trust-mcp", action="store_true", help="start the project's .mcp.json servers (and trust the file)"
    )
    resume = parser.add_mutually_exclusive_group()
    resume.add_argument(
        "--continue",
        "-c",
        dest="continue_session",
        action="store_true",
        help="add this turn to the project's most recently used session",
    )
    resume.add_argument(
        "--resume", metavar="ID", help="add this turn to session ID (a unique prefix will do)"
    )
    resume.add_argument("--no-session", action="store_true", help="do not save this run as a session")
    add_budget_argument(parser)
    add_worktree_argument(parser)
    parser.add_argument(
        "--fork",
        action="store_true",
        help="with --continue/--resume: continue in a new session that starts from that session's history",
    )
    from wyckoff_cli.cli.background_cmd import add_background_arguments

    add_background_arguments(parser)
    parser.add_argument(
        "--trust-hooks",
        action="store_true",
        help="run this project's hooks for this run although they are not trusted (nothing is recorded)",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.runtime.assembly import clean_text

    prompt = clean_text(sys.stdin.read() if args.prompt == "-" else args.prompt)  # no lone surrogates
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    if args.fork and not (args.continue_session or args.resume):
        raise UsageError("--fork needs --continue or --resume ID (the session to fork)")
    if args.worktree is not None and (args.continue_session or args.resume):
        raise UsageError("--worktree starts a new session: it does not go with --continue or --resume")
    if args.background:  # a detached process runs it; this one returns at once
        from wyckoff_cli.cli.background_cmd import start_background

        return start_background(args, prompt)

    def in_folder(folder: Path) -> int:
        args.cwd = folder
        return asyncio.run(_run(args, prompt))

    start = (args.cwd or Path.cwd()).resolve()
    return run_in_worktree(args.worktree, start, in_folder, title=prompt.strip().splitlines()[0][:200])


async def _run(args: argparse.Namespace, prompt: str) -> int:
    from wyckoff_cli.cli.run_commands import builtin_request, run_builtin
    from wyckoff_cli.cli.stream_out import CoalescingOut, line_encoder
    from wyckoff_cli.cli.text_output import TextPrinter
    from wyckoff_cli.core import events as ev
    from wyckoff_cli.session.builder import SessionBuilder, build_policy, open_workspace
    from wyckoff_cli.session.headless import HeadlessChat, unattended
    from wyckoff_cli.session.output_schema import load_schema
    from wyckoff_cli.session.run_summary import RunSummary
    from wyckoff_cli.session.store import call_coster

    schema = load_schema(args.output_schema) if args.output_schema is not None else None  # exit 2 first
    cwd = (args.cwd or Path.cwd()).resolve()
    workspace = open_workspace(cwd)
    workspace.sandbox = args.sandbox
    builder = SessionBuilder(
        workspace,
        cwd=cwd,
        trust_project_hooks=args.trust_hooks,
        max_budget_usd=args.max_budget_usd,
        max_tool_rounds=args.max_tool_rounds,
        extra_allow=list(args.allow),
    )
    config = builder.config
    builtin = builtin_request(prompt, builder)  # `/cost`, `/undo`, ...: session/commands.py
    if builtin is not None:
        return await run_builtin(args, builder, builtin)

    from wyckoff_cli.session.lsp import open_lsp

    builder.lsp = open_lsp(workspace.root, config)  # language servers: started by the first file met
    request = _custom_request(prompt, builder)
    model = args.model or (request.model if request is not None else None) or config.model
    mode = args.permission_mode or config.permission_mode
    # a missing key, an unknown model or a bad rule fails before any session exists
    provider = builder.provider(model)
    build_policy(config, mode, [*args.allow, *(request.allow if request is not None else ())])
    _warn_untrusted_hooks(builder)
    _warn_untrusted_allow(builder)
    recorder = _open_session(args, builder, provider.name)
    if recorder is None and config.context.memory:
        from wyckoff_cli.storage.paths import data_dir, writable_problem

        problem = writable_problem(data_dir())
        if problem is not None:  # --no-session must work without a writable home
            print(f"wyckoff: {problem}; memory is off for this run", file=sys.stderr)
            config.context.memory = False

    def write(text: str) -> None:
        print(text, file=sys.stderr)

    resumed = bool(args.continue_session or args.resume)
    host: BackgroundHost | None = None
    if args.background_child:  # the detached process of `--background`: approvals wait for an app
        from wyckoff_cli.cli.background_cmd import open_host

        host = await open_host(args, builder, recorder, model, prompt)
    chat = await HeadlessChat.open(
        builder,
        model=model,
        mode=mode,
        recorder=recorder,
        record=recorder is not None,
        resumed=resumed,
        trust_mcp=args.trust_mcp,
        write=write,
        approver=host.approve if host is not None else unattended,
    )
    if host is not None:
        host.on_abort = chat.interrupt  # `stop`, an app's Esc: the controller's turn stops
    session = chat.session
    summary = RunSummary(
        builder.workspace.root, {t.name: t.kind for t in session.registry}, call_coster(config)
    )
    if session.shell_notice:
        print(f"wyckoff: {session.shell_notice}", file=sys.stderr)
    for problem in builder.agents().problems:  # agent files skipped (bad front matter)
        print(f"wyckoff: {problem}", file=sys.stderr)
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, chat.interrupt)
    done: ev.TurnDone | None = None
    failure: ev.TurnFailed | None = None
    collected: list[dict[str, Any]] = []
    out = sys.stdout
    stream = CoalescingOut(out)  # one flush per pass of the loop, not per event (cli/stream_out.py)
    printer = TextPrinter(out, live=out.isatty() and schema is None, flush=stream.request_flush)
    try:
        if schema is not None:
            from wyckoff_cli.session.output_schema import schema_checked

            turn: AsyncIterator[ev.RuntimeEvent] | None = schema_checked(
                chat, schema, prompt, request, args.image
            )
        else:
            turn = chat.turn(prompt, command=request, images=args.image)
        while turn is not None:
            async for event in turn:
                if host is not None:
                    if host.stopping and chat.controller.running:
                        chat.interrupt()  # a stop that came while the session was being built
                    host.publish(event)
                summary.record(event)
                if args.output_format == "stream-json":
                    stream.write(line_encoder(event.to_dict()) + "\n")
                elif args.output_format == "json":
                    if not isinstance(event, ev.TextDelta | ev.ThinkingDelta | ev.ToolOutput):
                        collected.append(event.to_dict())
                else:
                    if schema is None or not isinstance(event, ev.TextDelta | ev.MessageCommitted):
                        printer.handle(event)  # with a schema: only the JSON answer, at the end
                    if isinstance(event, ev.Notice | ev.FallbackSwitched | ev.RetryInjected | ev.Retrying):
                        stream.flush()  # the answer so far before the line on stderr
                        print(f"\n[{event.type}] {_describe(event)}", file=sys.stderr)
                    if isinstance(event, ev.HookRan) and (event.outcome != "ok" or event.message):
                        stream.flush()
                        print(
                            f"\n[hook] {event.hook_event} {event.command}: {event.outcome} {event.message}",
                            file=sys.stderr,
                        )
                if isinstance(event, ev.TurnFailed):
                    failure = event
                    if args.output_format == "text":
                        stream.flush()
                        print(f"\nwyckoff: {event.kind}: {event.message}", file=sys.stderr)
                if isinstance(event, ev.TurnDone):
                    done = event
            turn = None
            if host is not None:  # further turns from the attached app, while one is
                from wyckoff_cli.cli.background_cmd import follow_up

                turn = await follow_up(host, chat)
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        await chat.aclose("other")
        stream.flush()
        if args.output_format == "text" and not printer.ended_with_newline:
            out.write("\n")  # the answer's last line ends before anything on stderr follows
            printer.ended_with_newline = True
        if recorder is not None:
            _report_session(recorder, args.output_format)
        if host is not None:  # after the log is complete: `done` means it can be read
            await host.close(_final_state(host, done, failure))
    assert done is not None
    if args.output_format == "json":
        result = {
            "text": done.text,
            "reason": done.reason,
            "rounds": done.rounds,
            "usage": done.usage,
            "error": failure.to_dict() if failure else None,
            "events": collected,
            "session_id": recorder.id if recorder is not None else None,
            "summary": summary.to_dict(),
            "session_error": _session_error(recorder),
        }
        if schema is not None:
            result["data"] = done.data
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
    elif args.output_format == "text" and schema is not None and done.data is not None:
        out.write(json.dumps(done.data, ensure_ascii=False) + "\n")  # only the JSON
    elif args.output_format == "text" and not printer.ended_with_newline:
        out.write("\n")
    out.flush()
    print(summary.line(), file=sys.stderr)
    if failure is not None and failure.kind == "configuration":
        return 2
    code = EXIT_FOR_REASON.get(done.reason, 1)
    if code == 0 and _session_error(recorder) is not None:
        return EXIT_NOT_SAVED
    return code


def _final_state(host: BackgroundHost, done: ev.TurnDone | None, failure: ev.TurnFailed | None) -> str:
    if host.stopping:
        return "stopped"
    return "done" if done is not None and failure is None and done.reason != "error" else "failed"


def _session_error(recorder: SessionRecorder | None) -> str | None:
    if recorder is None or recorder.write_error is None:
        return None
    exc = recorder.write_error
    return f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")


def _custom_request(prompt: str, builder: SessionBuilder) -> TurnRequest | None:
    """`/init` or `/NAME args` naming a custom command: the turn it expands to."""
    from wyckoff_cli.session.commands import split
    from wyckoff_cli.session.custom_commands import discover_commands
    from wyckoff_cli.session.extensions import expand

    parts = split(prompt)
    if parts is None:
        return None
    catalog = discover_commands(builder.workspace.root, trust_settings=builder.trust_project_hooks)
    return expand(parts[0], parts[1], catalog, builder.config.commands.prefer)


def _warn_untrusted_hooks(builder: SessionBuilder) -> None:
    for file in builder.user_hooks.hooks.needing_trust():
        print(
            f"wyckoff: the hooks in {file.path} are not trusted ({file.state}) and do not run; "
            "`wyckoff hooks trust` trusts them, --trust-hooks runs them this once",
            file=sys.stderr,
        )


def _warn_untrusted_allow(builder: SessionBuilder) -> None:
    from wyckoff_cli.storage.project_grants import untrusted_allow_notice

    notice = untrusted_allow_notice(builder.workspace.root)
    if notice:
        print(f"wyckoff: {notice}", file=sys.stderr)


def _open_session(args: argparse.Namespace, builder: SessionBuilder, model: str) -> SessionRecorder | None:
    """A new session, or the one `--continue` / `--resume` names, reopened."""
    if args.no_session:
        return None
    from wyckoff_cli.storage.paths import StorageError

    store = builder.sessions()
    project_root = builder.workspace.root
    if not (args.continue_session or args.resume):
        try:
            return builder.open_recorder(model)
        except StorageError as exc:
            raise StorageError(f"{exc.message}; or run with --no-session") from None
    if args.resume:
        loaded = store.load(args.resume)
    else:
        latest = store.latest(project_root)
        if latest is None:
            raise UsageError(f"no session to continue in {project_root}; run without --continue to start one")
        loaded = store.load(latest.id)
    if loaded.torn:
        print(
            f"wyckoff: session {loaded.id}: the last message was cut off by a crash; "
            "resuming from the last complete message",
            file=sys.stderr,
        )
    if loaded.info.project_root != str(project_root):
        print(
            f"wyckoff: session {loaded.id} belongs to {loaded.info.project_root}; "
            f"this run's workspace is {project_root}",
            file=sys.stderr,
        )
    if args.fork:
        recorder = store.fork(loaded, project_root, model=model)
        print(f"wyckoff: forked session {loaded.id} into {recorder.id}", file=sys.stderr)
        return recorder
    recorder = builder.open_recorder(model, loaded)  # SessionLocked (exit 2) when another process writes it
    if recorder.lock is not None and recorder.lock.taken_over:
        print(f"wyckoff: {recorder.lock.taken_over}", file=sys.stderr)
    return recorder


def _report_session(recorder: SessionRecorder, output_format: str) -> None:
    if recorder.write_error is not None:
        print(f"wyckoff: the session could not be fully saved: {recorder.write_error}", file=sys.stderr)
    if output_format == "text":
        print(
            f"[session {recorder.id}; continue it with: wyckoff run --resume {recorder.id} ...]",
            file=sys.stderr,
        )


def _describe(event: Any) -> str:
    from wyckoff_cli.core import events as ev

    if isinstance(event, ev.RetryInjected):
        return event.notice
    if isinstance(event, ev.Retrying):
        waited = f" · waited {event.waited:.0f} s of {event.limit:g} s" if event.limit is not None else ""
        return (
            f"{event.model} failed ({event.error}); retrying in {event.delay:.1f} s "
            f"(attempt {event.attempt} of {event.attempts}){waited}"
        )
    message = getattr(event, "message", None)
    if message:
        return str(message)
    return f"{event.from_model} failed ({event.error}); switched to {event.to_model}"
