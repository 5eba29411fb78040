"""`wyckoff review`: a read-only review of a change (docs/REVIEW.md).

`wyckoff review [--uncommitted | --base REF | --commit SHA] [--format text|markdown|json|sarif]
[--fail-on high|medium|low] [--model M] [--output FILE] [--cwd DIR]`

The report goes to stdout (or `--output FILE`); progress notices go to stderr. Exit
status: 1 when a confirmed finding is at or above `--fail-on` (default `low`: any
finding) or when a reviewer or checker failed (its part is missing: the report lists
it under problems), 0 otherwise — also for an empty change, which prints "nothing to review" on
stderr (and an empty report: no findings); 2 for a usage error (not a git repository,
a ref that does not resolve, a bad option, an unknown model or a missing key); 130
interrupted. The review only reads, whatever the permission mode: its sub-agents have
no tool that writes or runs commands, and Wyckoff runs git itself, hardened.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wyckoff_cli.runtime.review.changes import ReviewTarget
    from wyckoff_cli.runtime.review.findings import ReviewResult

FORMATS = ("text", "markdown", "json", "sarif")


def configure(parser: argparse.ArgumentParser) -> None:
    target = parser.add_mutually_exclusive_group()
    target.add_argument(
        "--uncommitted", action="store_true", help="the work tree and index against HEAD (the default)"
    )
    target.add_argument("--base", metavar="REF", help="HEAD against its merge base with REF (a pull request)")
    target.add_argument("--commit", metavar="SHA", help="one commit against its first parent")
    parser.add_argument("--format", choices=FORMATS, default="text", help="the report's form (default text)")
    parser.add_argument(
        "--fail-on",
        choices=("high", "medium", "low"),
        default="low",
        help="exit 1 when a finding is at or above this severity (default low: any finding)",
    )
    parser.add_argument("--model", "-m", help="the reviewers' model (default from config)")
    parser.add_argument("--output", "-o", type=Path, help="write the report to FILE instead of stdout")
    parser.add_argument("--cwd", type=Path, default=None, help="the repository (default: current folder)")
    parser.add_argument(
        "--max-parallel", type=_positive, default=None, help="reviewer and checker agents at once (default 4)"
    )


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.runtime.review.changes import ReviewTarget

    if args.base is not None:
        target = ReviewTarget("base", args.base)
    elif args.commit is not None:
        target = ReviewTarget("commit", args.commit)
    else:
        target = ReviewTarget()
    try:
        result = asyncio.run(_review(args, target))
    except KeyboardInterrupt:
        print("wyckoff: interrupted", file=sys.stderr)
        return 130
    return _report(args, result)


async def _review(args: argparse.Namespace, target: ReviewTarget) -> ReviewResult:
    from wyckoff_cli.core import events as ev
    from wyckoff_cli.runtime.review.changes import collect_change
    from wyckoff_cli.runtime.review.engine import ReviewRun, ReviewSettings
    from wyckoff_cli.runtime.review.findings import ReviewResult
    from wyckoff_cli.session.builder import SessionBuilder, open_workspace
    from wyckoff_cli.session.review import NOTHING_TO_REVIEW, close_agents, review_agents

    cwd = (args.cwd or Path.cwd()).resolve()
    if not cwd.is_dir():
        from wyckoff_cli.core.errors import UsageError

        raise UsageError(f"--cwd {cwd} is not a folder")
    change = await collect_change(cwd, target)
    if not change.files:
        print(f"wyckoff: {NOTHING_TO_REVIEW} ({target.describe()} are empty)", file=sys.stderr)
        return ReviewResult(target.describe(), [])
    builder = SessionBuilder(open_workspace(change.root), cwd=cwd)
    agents, notices = review_agents(builder, args.model or builder.config.model)
    settings = ReviewSettings(**({"max_parallel": args.max_parallel} if args.max_parallel else {}))
    review = ReviewRun(change, agents, settings)
    try:
        for notice in notices:
            print(f"wyckoff: {notice}", file=sys.stderr)
        async for event in review.events():
            if isinstance(event, ev.Notice):
                print(f"wyckoff: {event.message}", file=sys.stderr)
    finally:
        await close_agents(agents)
    assert review.result is not None
    return review.result


def _report(args: argparse.Namespace, result: ReviewResult) -> int:
    from wyckoff_cli.runtime.review.formats import render

    report = render(result, args.format)
    if args.output is not None:
        try:
            args.output.write_text(report, encoding="utf-8")
        except OSError as exc:
            print(f"wyckoff: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(report)
        sys.stdout.flush()
    for problem in result.problems:
        print(f"wyckoff: {problem}", file=sys.stderr)
    return 1 if result.at_or_above(args.fail_on) or result.problems else 0
