"""Tasks on a Ray cluster (`pip install 'wyckoff[ray]'`).

Each task is one Ray task asking for one CPU that calls `run_task` on a worker: the
clone is made in `DIR/work/ID` on that worker's machine, and the result — patch text
included — comes back to the driver, which writes `results.jsonl` and the patches as
the local engine does. A task lost with its worker or node is run again once by Ray
(`max_retries=1`); lost a second time, it is recorded as failed.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path
from typing import Any

from wyckoff_cli.batch.processes import TaskProcesses
from wyckoff_cli.batch.results import TaskResult
from wyckoff_cli.batch.runner import run_task
from wyckoff_cli.batch.tasks import Task
from wyckoff_cli.core.errors import UsageError

CANCEL_CHECK_S = 0.2  # how soon a worker sees a cancel while its task waits on a process
LOCAL_OBJECT_STORE_BYTES = 100 * 1024 * 1024  # a local cluster started here: results are small


def run_on_worker(task: dict[str, Any], out: str) -> dict[str, Any]:
    """The Ray task: plain data in and out, so any worker can run it.

    `run_task` runs in a thread while this one waits in short joins, so that the
    KeyboardInterrupt of a `ray.cancel` is raised here even while the task waits on a
    process: it ends the task's process groups, then lets Ray record the cancel."""
    parsed, folder = Task.from_dict(task), Path(out)
    logs = folder / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    processes = TaskProcesses(logs / f"{parsed.id}.log", time.monotonic() + parsed.timeout_s)
    finished: list[TaskResult] = []
    runner = threading.Thread(
        target=lambda: finished.append(run_task(parsed, folder, processes)), daemon=True
    )
    runner.start()
    try:
        while runner.is_alive():
            runner.join(CANCEL_CHECK_S)
    except KeyboardInterrupt:
        processes.cancel()
        runner.join()
        raise
    if not finished:
        raise RuntimeError(f"task {parsed.id} ended without a result (see {logs / parsed.id}.log)")
    return dataclasses.asdict(finished[0])


class RayEngine:
    name = "ray"

    def __init__(self, out: Path, workers: int, address: str | None) -> None:
        try:
            import ray
        except ImportError:
            raise UsageError(
                "--engine ray needs the ray package: pip install 'wyckoff[ray]' (or use --engine local)"
            ) from None
        self.ray = ray
        self.out = out
        try:
            if address is None:  # a cluster of our own on this machine, gone when we are
                ray.init(
                    num_cpus=workers,
                    include_dashboard=False,
                    object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                    log_to_driver=False,
                    configure_logging=False,
                )
            else:
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise UsageError(
                f"cannot connect to the Ray cluster at {address or 'a new local one'}: {exc}"
            ) from None
        self.remote = ray.remote(num_cpus=1, max_retries=1, retry_exceptions=False)(run_on_worker)
        self.running: dict[Any, Task] = {}
        self.started: dict[Any, float] = {}

    def submit(self, task: Task) -> None:
        ref = self.remote.remote(task.to_dict(), str(self.out))
        self.running[ref] = task
        self.started[ref] = time.monotonic()

    def wait(self, timeout: float) -> list[TaskResult]:
        if not self.running:
            return []
        ready, _ = self.ray.wait(list(self.running), num_returns=1, timeout=timeout)
        return [self._collect(ref) for ref in ready]

    def _collect(self, ref: Any) -> TaskResult:
        task = self.running.pop(ref)
        took = round(time.monotonic() - self.started.pop(ref), 3)
        exceptions = self.ray.exceptions
        try:
            return TaskResult(**self.ray.get(ref))
        except exceptions.TaskCancelledError:
            return TaskResult(task.id, "interrupted", "cancelled on the Ray cluster", duration_s=took)
        except (exceptions.WorkerCrashedError, exceptions.NodeDiedError, exceptions.ObjectLostError) as exc:
            reason = f"lost with its worker twice (Ray retried it once): {type(exc).__name__}"
            return TaskResult(task.id, "failed", reason, duration_s=took)
        except exceptions.RayError as exc:
            first = str(exc).strip().splitlines()
            return TaskResult(
                task.id, "failed", f"Ray: {first[-1] if first else type(exc).__name__}", duration_s=took
            )

    def cancel_all(self) -> None:
        for ref in self.running:
            self.ray.cancel(ref)  # a KeyboardInterrupt in the worker: run_task ends its processes

    def close(self) -> None:
        self.cancel_all()
        self.ray.shutdown()
