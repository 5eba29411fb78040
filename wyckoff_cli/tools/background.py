"""BackgroundTaskManager: tool work that outlives the call that started it.

A background call returns a task id at once; the work runs as an asyncio task whose
output is buffered. When it ends, the manager queues a notification that the runtime
delivers to the model at the start of its next round. Stopping a task cancels it, and
the work's own cancellation handling (e.g. killing a process group) runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

OutputSink = Callable[[str], None]
BackgroundWork = Callable[[OutputSink], Awaitable[Any]]
UpdateListener = Callable[["BackgroundTask"], None]

MAX_BUFFER = 2_000_000  # characters of output kept per task (oldest dropped first)


@dataclass
class BackgroundTask:
    id: str
    name: str
    summary: str
    status: str = "running"  # running | completed | failed | stopped
    started: float = field(default_factory=time.time)
    finished: float | None = None
    exit_code: int | None = None
    result: str = ""
    dropped: int = 0  # characters dropped from the front of `output`
    output: list[str] = field(default_factory=list)
    _size: int = 0
    _task: asyncio.Task[Any] | None = None

    def append(self, text: str) -> None:
        self.output.append(text)
        self._size += len(text)
        while self._size > MAX_BUFFER and len(self.output) > 1:
            first = self.output.pop(0)
            self._size -= len(first)
            self.dropped += len(first)

    def text_since(self, offset: int) -> tuple[str, int]:
        """Output from absolute character `offset` on, and the next offset."""
        full = "".join(self.output)
        end = self.dropped + len(full)
        start = max(offset, self.dropped) - self.dropped
        return full[start:], end


class BackgroundTaskManager:
    def __init__(self, listener: UpdateListener | None = None) -> None:
        self._tasks: dict[str, BackgroundTask] = {}
        self._finished: list[BackgroundTask] = []
        self._ids = itertools.count(1)
        self._listeners: list[UpdateListener] = [listener] if listener else []

    def add_listener(self, listener: UpdateListener) -> None:
        self._listeners.append(listener)

    def start(self, name: str, summary: str, work: BackgroundWork) -> BackgroundTask:
        task = BackgroundTask(id=f"bg-{next(self._ids)}", name=name, summary=summary)
        self._tasks[task.id] = task
        task._task = asyncio.create_task(self._run(task, work), name=f"wyckoff-{task.id}")
        self._notify(task)
        return task

    async def _run(self, task: BackgroundTask, work: BackgroundWork) -> None:
        try:
            result = await work(task.append)
        except asyncio.CancelledError:
            task.status = "stopped"
        except Exception as exc:  # the work failed: report it, never crash the loop
            task.status = "failed"
            task.result = str(exc) or type(exc).__name__
        else:
            code = getattr(result, "exit_code", None)
            task.exit_code = code if isinstance(code, int) else None
            task.result = str(getattr(result, "text", result) or "")
            task.status = "failed" if task.exit_code not in (None, 0) else "completed"
        task.finished = time.time()
        self._finished.append(task)
        self._notify(task)

    def _notify(self, task: BackgroundTask) -> None:
        for listener in list(self._listeners):
            listener(task)

    def get(self, task_id: str) -> BackgroundTask | None:
        return self._tasks.get(task_id)

    def tasks(self) -> list[BackgroundTask]:
        return list(self._tasks.values())

    def running(self) -> list[BackgroundTask]:
        return [t for t in self._tasks.values() if t.status == "running"]

    def drain_finished(self) -> list[BackgroundTask]:
        """Tasks that ended since the last call (each reported once)."""
        done, self._finished = self._finished, []
        return done

    async def stop(self, task_id: str) -> BackgroundTask | None:
        task = self._tasks.get(task_id)
        if task is None or task._task is None:
            return task
        if not task._task.done():
            task._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task._task
        return task

    async def stop_all(self) -> None:
        for task in list(self._tasks.values()):
            await self.stop(task.id)
