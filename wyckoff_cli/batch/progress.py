"""How a batch shows its progress: a Rich display on a terminal, JSON lines otherwise.

The JSON lines (on stderr) are one object per happening: `{"event": "start", "id"}`,
`{"event": "end", "id", "status", "reason", "cost_usd", ...counts}`, and a final
`{"event": "batch", ...counts, "stopped": why or null}`. Counts are `done`, `running`,
`failed` (every status but done), `total`, `cost_usd`.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from typing import IO, Any, Protocol

from wyckoff_cli.batch.results import TaskResult


@dataclass
class Counts:
    total: int
    done: int = 0
    failed: int = 0
    running: int = 0
    cost_usd: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "done": self.done,
            "running": self.running,
            "failed": self.failed,
            "cost_usd": round(self.cost_usd, 6),
        }


class Progress(Protocol):
    def started(self, task_id: str, counts: Counts) -> None: ...

    def ended(self, result: TaskResult, counts: Counts) -> None: ...

    def note(self, text: str) -> None: ...

    def finish(self, counts: Counts, stopped: str | None) -> None: ...


class JsonLinesProgress:
    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def _emit(self, data: dict[str, Any]) -> None:
        self.stream.write(json.dumps(data, ensure_ascii=False) + "\n")
        self.stream.flush()

    def started(self, task_id: str, counts: Counts) -> None:
        self._emit({"event": "start", "id": task_id, **counts.to_dict()})

    def ended(self, result: TaskResult, counts: Counts) -> None:
        self._emit(
            {
                "event": "end",
                "id": result.id,
                "status": result.status,
                "reason": result.reason,
                "task_cost_usd": result.cost_usd,
                "duration_s": result.duration_s,
                **counts.to_dict(),
            }
        )

    def note(self, text: str) -> None:
        self._emit({"event": "note", "message": text})

    def finish(self, counts: Counts, stopped: str | None) -> None:
        self._emit({"event": "batch", "stopped": stopped, **counts.to_dict()})


class RichProgress:
    """A bar with done / running / failed, the cost so far and Rich's ETA; a line per
    task that did not end `done`."""

    def __init__(self, total: int) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as RichBar

        self.console = Console(stderr=True)
        self.bar = RichBar(
            TextColumn("[bold]batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.bar_id = self.bar.add_task("batch", total=total, counts=self._counts(Counts(total)))
        self.bar.start()
        self.begun = time.monotonic()

    @staticmethod
    def _counts(counts: Counts) -> str:
        return (
            f"[green]done {counts.done}[/] · running {counts.running} · "
            f"[red]failed {counts.failed}[/] · ${counts.cost_usd:.4f}"
        )

    def started(self, task_id: str, counts: Counts) -> None:
        self.bar.update(self.bar_id, counts=self._counts(counts))

    def ended(self, result: TaskResult, counts: Counts) -> None:
        if result.status != "done":
            from rich.markup import escape

            line = f"[red]{escape(result.id)}[/]: {escape(result.status)}: {escape(result.reason)}"
            self.bar.console.print(line, markup=True, highlight=False)
        self.bar.update(self.bar_id, advance=1, counts=self._counts(counts))

    def note(self, text: str) -> None:
        self.bar.console.print(text, markup=False, highlight=False)

    def finish(self, counts: Counts, stopped: str | None) -> None:
        self.bar.stop()
        took = time.monotonic() - self.begun
        self.console.print(
            f"batch: {counts.done} done, {counts.failed} not done, ${counts.cost_usd:.4f}, {took:.1f} s"
            + (f"; {stopped}" if stopped else ""),
            markup=False,
            highlight=False,
        )


def progress_for(total: int, stream: IO[str] | None = None) -> Progress:
    stream = stream if stream is not None else sys.stderr
    if stream.isatty():
        return RichProgress(total)
    return JsonLinesProgress(stream)
