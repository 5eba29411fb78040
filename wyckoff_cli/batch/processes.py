"""The processes of one task: each in its own process group, ended as a group.

`TaskProcesses` runs one command at a time for a task (`git clone`, a setup command,
`wyckoff run`, the test) and knows the one running, so that `cancel()` (a second
Ctrl+C, a Ray cancel) or the task's deadline ends it and everything it started: a
setup command's children, the agent's sandboxed shells.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

CANCEL_GRACE_S = 5.0  # after SIGINT on cancel, how long the group has before SIGKILL


class TaskTimedOut(Exception):
    pass


class TaskCancelled(Exception):
    pass


@dataclass(frozen=True)
class Finished:
    code: int
    output_tail: str  # the last lines of stderr (or of stdout for a shell command)


class TaskProcesses:
    def __init__(self, log: Path, deadline: float) -> None:
        self.log = log  # every command's stderr, and a shell command's stdout, in order
        self.deadline = deadline  # time.monotonic() past which the task is over
        self.cancelled = False
        self.timed_out = False
        self._lock = threading.Lock()
        self._current: subprocess.Popen[str] | None = None

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            process = self._current
        if process is not None:
            _signal_group(process, signal.SIGINT)  # the agent ends its turn as `aborted`
            killer = threading.Timer(CANCEL_GRACE_S, _signal_group, (process, signal.SIGKILL))
            killer.daemon = True
            killer.start()

    def run(
        self,
        argv: Sequence[str],
        cwd: Path | None,
        *,
        env: Mapping[str, str] | None = None,
        stdin_text: str | None = None,
        on_line: Callable[[str], None] | None = None,
    ) -> Finished:
        """Run `argv` to its end. With `on_line`, its stdout is read line by line;
        without, it goes to the log. Raises `TaskCancelled` or `TaskTimedOut`."""
        remaining = self.deadline - time.monotonic()
        if self.cancelled:
            raise TaskCancelled
        if remaining <= 0:
            self.timed_out = True
            raise TaskTimedOut
        with self.log.open("a", encoding="utf-8", errors="replace") as log:
            log.write(f"$ {' '.join(argv)[:500]}\n")
            log.flush()
            start = log.tell()
            process = self._start(argv, cwd, env, log, stdin_text is not None, on_line is not None)
            timer = threading.Timer(remaining, self._time_out, (process,))
            timer.daemon = True
            timer.start()
            try:
                if stdin_text is not None:
                    assert process.stdin is not None
                    with contextlib.suppress(BrokenPipeError):
                        process.stdin.write(stdin_text)
                    with contextlib.suppress(BrokenPipeError):
                        process.stdin.close()
                if on_line is not None:
                    assert process.stdout is not None
                    for line in process.stdout:
                        on_line(line)
                code = process.wait()
            except BaseException:
                _signal_group(process, signal.SIGKILL)  # a KeyboardInterrupt in a Ray worker
                raise
            finally:
                timer.cancel()
                with self._lock:
                    self._current = None
        if self.timed_out:
            raise TaskTimedOut
        if self.cancelled:
            raise TaskCancelled
        return Finished(code, _tail(self.log, start))

    def _start(
        self,
        argv: Sequence[str],
        cwd: Path | None,
        env: Mapping[str, str] | None,
        log: IO[str],
        with_stdin: bool,
        read_stdout: bool,
    ) -> subprocess.Popen[str]:
        with self._lock:
            if self.cancelled:
                raise TaskCancelled
            self._current = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=None if env is None else dict(env),
                stdin=subprocess.PIPE if with_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE if read_stdout else log,
                stderr=log,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,
            )
            return self._current

    def _time_out(self, process: subprocess.Popen[str]) -> None:
        self.timed_out = True
        _signal_group(process, signal.SIGKILL)


def _signal_group(process: subprocess.Popen[str], sig: signal.Signals) -> None:
    # the group, not the leader: a setup's background job or the agent's shells go too
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def _tail(log: Path, start: int, lines: int = 3) -> str:
    try:
        with log.open("rb") as handle:
            handle.seek(start)
            text = handle.read()[-4000:].decode("utf-8", "replace")
    except OSError:
        return ""
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(kept[-lines:])
