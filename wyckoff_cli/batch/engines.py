"""Where tasks run. An engine takes tasks, hands back finished results, cancels.

`LocalEngine` runs each task's processes from a thread of this process (the work is
in the child processes: git, the setup commands, `wyckoff run`); `RayEngine`
(batch/ray_engine.py) runs `run_task` on a Ray cluster. The driver (batch/driver.py)
does the scheduling, so both write the same `results.jsonl`.
"""

from __future__ import annotations

import concurrent.futures
import time
from pathlib import Path
from typing import Protocol

from wyckoff_cli.batch.processes import TaskProcesses
from wyckoff_cli.batch.results import TaskResult
from wyckoff_cli.batch.runner import run_task
from wyckoff_cli.batch.tasks import Task


class Engine(Protocol):
    name: str

    def submit(self, task: Task) -> None: ...

    def wait(self, timeout: float) -> list[TaskResult]:
        """The tasks that ended (maybe none, after `timeout` seconds)."""
        ...

    def cancel_all(self) -> None:
        """End every running task; each still comes back from `wait`, as interrupted."""
        ...

    def close(self) -> None: ...


class LocalEngine:
    name = "local"

    def __init__(self, out: Path, workers: int) -> None:
        self.out = out
        self.pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="batch-task")
        self.running: dict[concurrent.futures.Future[TaskResult], TaskProcesses] = {}

    def submit(self, task: Task) -> None:
        logs = self.out / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        processes = TaskProcesses(logs / f"{task.id}.log", time.monotonic() + task.timeout_s)
        self.running[self.pool.submit(run_task, task, self.out, processes)] = processes

    def wait(self, timeout: float) -> list[TaskResult]:
        if not self.running:
            return []
        ended, _ = concurrent.futures.wait(
            list(self.running), timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED
        )
        for future in ended:
            del self.running[future]
        return [future.result() for future in ended]

    def cancel_all(self) -> None:
        for processes in self.running.values():
            processes.cancel()

    def close(self) -> None:
        self.cancel_all()
        self.pool.shutdown(wait=True)
