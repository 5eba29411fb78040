"""`wyckoff run`: one turn, headless, with the same runtime as the app.

Exit status: 0 completed (or completed by a tool), 1 the turn failed or did not
finish (error, stopped, tool-round limit, unreliable), 2 usage or configuration
error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import Any

from wyckoff_cli.runtime.errors import UsageError

EXIT_FOR_REASON = {
    "completed": 0,
    "completed_by_tool": 0,
    "aborted": 130,
}


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
        choices=("default", "plan", "auto-edit", "yolo"),
        help="what runs without asking (nothing can be asked here: the rest is denied)",
    )
    parser.add_argument(
        "--allow",
        action="append",
        default=[],
        metavar="RULE",
        help="allow calls matching RULE, e.g. 'run_shell(pytest*)' (repeatable)",
    )
    parser.add_argument("--cwd", type=Path, default=None, help="workspace folder (default: current)")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if not prompt.strip():
        raise UsageError("the prompt is empty")
    return asyncio.run(_run(args, prompt))


async def _run(args: argparse.Namespace, prompt: str) -> int:
    from wyckoff_cli.cli.compose import build_model, build_policy, build_runtime, open_workspace
    from wyckoff_cli.runtime import events as ev
    from wyckoff_cli.runtime.loop import AbortSignal

    workspace = open_workspace((args.cwd or Path.cwd()).resolve())
    config = workspace.config
    provider = build_model(args.model or config.model, config)
    policy = build_policy(config, args.permission_mode or config.permission_mode, args.allow)
    runtime = build_runtime(workspace, provider, policy=policy, max_tool_rounds=args.max_tool_rounds)
    abort = AbortSignal()
    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, abort.abort)
    history: list[Any] = []
    done: ev.TurnDone | None = None
    failure: ev.TurnFailed | None = None
    collected: list[dict[str, Any]] = []
    out = sys.stdout
    try:
        async for event in runtime.run_stream(history, prompt, abort=abort):
            if args.output_format == "stream-json":
                out.write(json.dumps(event.to_dict(), ensure_ascii=False) + "\n")
                out.flush()
            elif args.output_format == "json":
                if not isinstance(event, ev.TextDelta | ev.ThinkingDelta | ev.ToolOutput):
                    collected.append(event.to_dict())
            elif isinstance(event, ev.TextDelta):
                out.write(event.text)
                out.flush()
            elif isinstance(event, ev.Notice | ev.FallbackSwitched | ev.RetryInjected):
                print(f"\n[{event.type}] {_describe(event)}", file=sys.stderr)
            if isinstance(event, ev.TurnFailed):
                failure = event
                if args.output_format == "text":
                    print(f"\nwyckoff: {event.kind}: {event.message}", file=sys.stderr)
            if isinstance(event, ev.TurnDone):
                done = event
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        await runtime.close()
    assert done is not None
    if args.output_format == "json":
        result = {
            "text": done.text,
            "reason": done.reason,
            "rounds": done.rounds,
            "usage": done.usage,
            "error": failure.to_dict() if failure else None,
            "events": collected,
        }
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
    elif args.output_format == "text" and done.text and not done.text.endswith("\n"):
        out.write("\n")
    if failure is not None and failure.kind == "configuration":
        return 2
    return EXIT_FOR_REASON.get(done.reason, 1)


def _describe(event: Any) -> str:
    message = getattr(event, "message", None)
    if message:
        return str(message)
    return f"{event.from_model} failed ({event.error}); switched to {event.to_model}"
