"""`wyckoff batch TASKS.jsonl --out DIR`: many headless runs, each in its own clone.

Exit status: 0 every task ended `done`; 1 some did not (or were not started because
of `--max-cost-usd`); 2 usage error (no task file, an output folder that cannot be
written, `--engine ray` without ray); 130 stopped by Ctrl+C. docs/BATCH.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wyckoff_cli.cli.agents_cmd import budget_usd
from wyckoff_cli.core.errors import UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tasks", type=Path, help="the task file: one JSON object a line (docs/BATCH.md)")
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="results, patches, clones, logs"
    )
    parser.add_argument(
        "--workers", type=_workers, default=2, metavar="N", help="tasks at a time (default 2)"
    )
    parser.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="local: processes on this machine; ray: a Ray cluster (pip install 'wyckoff[ray]')",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="the cluster to join (e.g. 10.0.0.5:6379 or auto); default: start one on this machine",
    )
    parser.add_argument(
        "--max-cost-usd",
        type=budget_usd,
        metavar="USD",
        help="stop scheduling once the tasks ended in this run cost this much",
    )
    parser.add_argument(
        "--retry-failed",
        action="store_true",
        help="run again the ids recorded failed, timeout or budget (done ones are always skipped)",
    )


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if not 1 <= value <= 256:
        raise argparse.ArgumentTypeError(f"expected 1 to 256 workers, got {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.batch.driver import BatchOptions, Interrupts, run_batch
    from wyckoff_cli.batch.engines import Engine, LocalEngine
    from wyckoff_cli.batch.progress import progress_for
    from wyckoff_cli.batch.tasks import read_tasks

    if args.ray_address and args.engine != "ray":
        raise UsageError("--ray-address needs --engine ray")
    items = read_tasks(args.tasks)
    out = args.out.expanduser().resolve()
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "logs").mkdir(exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot use {out} as the output folder: {exc.strerror or exc}") from None
    options = BatchOptions(args.tasks, out, args.workers, args.retry_failed, args.max_cost_usd)
    engine: Engine
    if args.engine == "ray":
        from wyckoff_cli.batch.ray_engine import RayEngine

        engine = RayEngine(out, args.workers, args.ray_address)
    else:
        engine = LocalEngine(out, args.workers)
    with Interrupts() as interrupts:
        try:
            outcome = run_batch(options, items, engine, progress_for, interrupts)
        finally:
            engine.close()
    if outcome.not_started:
        print(
            f"wyckoff: {len(outcome.not_started)} task(s) not started; run the same command again to run them",
            file=sys.stderr,
        )
    return outcome.exit_code
