"""The batch driver: what runs, in what order, when to stop, and the record of it.

It reads the task file, skips the ids `results.jsonl` already holds as finished (no
model request is made for them), schedules at most `workers` tasks at a time on an
engine, and records every result as it comes back. A first Ctrl+C stops scheduling
and lets the running tasks end; a second cancels them (recorded `interrupted`).
`max_cost_usd` stops scheduling once the tasks ended in this run cost that much.
"""

from __future__ import annotations

import signal
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from wyckoff_cli.batch.engines import Engine
from wyckoff_cli.batch.progress import Counts, Progress
from wyckoff_cli.batch.results import ResultsFile, TaskResult
from wyckoff_cli.batch.tasks import BadLine, Task

WAKE_S = 0.5  # how often the driver looks up from waiting (a Ctrl+C is seen within this)
EXIT_INTERRUPTED = 130


@dataclass
class BatchOptions:
    tasks_file: Path
    out: Path
    workers: int
    retry_failed: bool = False
    max_cost_usd: float | None = None


@dataclass
class BatchOutcome:
    counts: Counts
    stopped: str | None = None  # why scheduling stopped early
    skipped: list[str] = field(default_factory=list)  # finished before, not run again
    not_started: list[str] = field(default_factory=list)
    interrupted: bool = False

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        return 0 if self.counts.failed == 0 and not self.not_started else 1


class Interrupts:
    """Ctrl+C, counted: the first asks to stop scheduling, the second to cancel."""

    def __init__(self) -> None:
        self.count = 0
        self.on_second: Callable[[], None] | None = None

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.count += 1

    def __enter__(self) -> Interrupts:
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self.handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


def run_batch(
    options: BatchOptions,
    items: list[Task | BadLine],
    engine: Engine,
    progress_factory: Callable[[int], Progress],
    interrupts: Interrupts,
) -> BatchOutcome:
    results = ResultsFile(options.out)
    results.load()
    outcome = BatchOutcome(Counts(0))
    pending: deque[Task] = deque()
    bad: list[BadLine] = []
    for item in items:
        if not results.should_run(item.id, retry_failed=options.retry_failed):
            outcome.skipped.append(item.id)
        elif isinstance(item, BadLine):
            bad.append(item)
        else:
            pending.append(item)
    counts = outcome.counts
    counts.total = len(pending) + len(bad)
    progress = progress_factory(counts.total)
    if results.unreadable:
        lines = ", ".join(map(str, results.unreadable))
        progress.note(f"{results.path}: line(s) {lines} unreadable, left out")
    if outcome.skipped:
        progress.note(f"{len(outcome.skipped)} task(s) already finished in {results.path}: skipped")

    def record(result: TaskResult, *, was_running: bool = True) -> None:
        counts.running -= 1 if was_running else 0
        if result.status == "done":
            counts.done += 1
        else:
            counts.failed += 1
        counts.cost_usd += result.cost_usd or 0.0
        results.add(result)
        progress.ended(result, counts)

    for line in bad:
        record(TaskResult(line.id, "failed", line.reason), was_running=False)
    cancelled = False
    try:
        while pending or counts.running:
            if interrupts.count and outcome.stopped is None:
                outcome.stopped = "interrupted (Ctrl+C): no new tasks; Ctrl+C again cancels the running ones"
                progress.note(outcome.stopped)
            if interrupts.count >= 2 and not cancelled:
                cancelled = True
                engine.cancel_all()
            if (
                options.max_cost_usd is not None
                and counts.cost_usd >= options.max_cost_usd
                and not outcome.stopped
            ):
                outcome.stopped = (
                    f"the tasks cost ${counts.cost_usd:.4f}, reaching --max-cost-usd {options.max_cost_usd:g}"
                )
                progress.note(outcome.stopped)
            while pending and counts.running < options.workers and outcome.stopped is None:
                task = pending.popleft()
                engine.submit(task)
                counts.running += 1
                progress.started(task.id, counts)
            if not counts.running:
                break
            for result in engine.wait(WAKE_S):
                record(result)
    finally:
        if interrupts.count:
            outcome.interrupted = True
        outcome.not_started = [task.id for task in pending]
        progress.finish(counts, outcome.stopped)
    return outcome
