"""One task, start to end, on whatever machine runs it (this one, or a Ray worker).

Clone the repo into `DIR/work/ID`, check out `ref`, run `setup`, run headless
`wyckoff run --output-format stream-json` with the clone as workspace (and so the
sandbox's writable root), take the patch against the tree as it was after setup, then
run `test`. Everything that goes wrong is a `TaskResult` with its reason; nothing
raises out of `run_task` but a KeyboardInterrupt (after its processes are ended).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wyckoff_cli.batch.processes import TaskCancelled, TaskProcesses, TaskTimedOut
from wyckoff_cli.batch.results import TaskResult
from wyckoff_cli.batch.tasks import Task
from wyckoff_cli.tools.process import child_env  # setup and test run the repo's code: no secrets

STATUS_FOR_REASON = {
    "completed": "done",
    "completed_by_tool": "done",
    "budget": "budget",
    "aborted": "interrupted",
}


def wyckoff_command() -> list[str]:
    """How a worker starts `wyckoff`: this interpreter, so the same install answers."""
    return [sys.executable, "-m", "wyckoff_cli"]


class _Failed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _AgentRun:
    """What the agent's stream-json said: the last `done`, the last `error`, usage."""

    def __init__(self) -> None:
        self.done: dict[str, Any] | None = None
        self.error: dict[str, Any] | None = None
        self.tokens: dict[str, int] = {}

    def line(self, text: str) -> None:
        try:
            event = json.loads(text)
        except json.JSONDecodeError:
            return
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "done":
            self.done = event
        elif kind == "error":
            self.error = event
        elif kind == "usage":  # a killed run keeps what its calls used so far
            for key, value in event.items():
                if key.endswith("_tokens") and isinstance(value, int):
                    self.tokens[key] = self.tokens.get(key, 0) + value


def run_task(task: Task, out: Path, processes: TaskProcesses | None = None) -> TaskResult:
    """Run `task` under `out` (absolute). `processes` lets the caller cancel it."""
    started = time.monotonic()
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    if processes is None:
        processes = TaskProcesses(logs / f"{task.id}.log", started + task.timeout_s)
    result = TaskResult(task.id, "done", "completed")
    work = out / "work" / task.id
    index = logs / f"{task.id}.index"  # our own git index: the clone's stays as the agent sees it
    step = "clone"
    try:
        _prepare(task, work, processes)
        step = "setup"
        for number, command in enumerate(task.setup, start=1):
            finished = processes.run(["/bin/sh", "-c", command], work, env=child_env())
            if finished.code != 0:
                raise _Failed(
                    f"setup command {number} failed (exit {finished.code}): {command}"
                    + (f": {finished.output_tail}" if finished.output_tail else "")
                )
        base_tree = _snapshot(work, index, processes)
        step = "agent"
        _agent(task, work, processes, result)
        step = "patch"
        _patch(work, index, base_tree, processes, result)
        if task.test is not None:
            step = "test"
            result.test_exit = processes.run(["/bin/sh", "-c", task.test], work, env=child_env()).code
    except _Failed as failure:
        result.status, result.reason = "failed", failure.reason
    except TaskTimedOut:
        result.status = "timeout"
        result.reason = f"past its timeout of {task.timeout_s:g} s (during {step})"
    except TaskCancelled:
        result.status, result.reason = "interrupted", f"cancelled (during {step})"
    except KeyboardInterrupt:
        processes.cancel()
        raise
    except OSError as exc:
        result.status, result.reason = "failed", f"{step}: {exc.strerror or exc}"
    finally:
        with contextlib.suppress(FileNotFoundError):
            index.unlink()
    result.duration_s = round(time.monotonic() - started, 3)
    return result


def _prepare(task: Task, work: Path, processes: TaskProcesses) -> None:
    if work.is_symlink() or work.is_file():
        work.unlink()
    elif work.exists():  # an earlier attempt's clone
        shutil.rmtree(work)
    work.parent.mkdir(parents=True, exist_ok=True)
    cloned = processes.run(["git", "clone", "--quiet", "--", task.repo, str(work)], None, env=_git_env())
    if cloned.code != 0:
        raise _Failed(f"cannot clone {task.repo}: {cloned.output_tail or f'git exit {cloned.code}'}")
    if task.ref is not None:
        checked = processes.run(["git", "checkout", "--quiet", task.ref, "--"], work, env=_git_env())
        if checked.code != 0:
            raise _Failed(f"ref {task.ref!r} does not resolve in {task.repo}: {checked.output_tail}")


def _agent(task: Task, work: Path, processes: TaskProcesses, result: TaskResult) -> None:
    argv = [*wyckoff_command(), "run", "--output-format", "stream-json", "--cwd", str(work)]
    if task.model is not None:
        argv += ["--model", task.model]
    if task.permission_mode is not None:
        argv += ["--permission-mode", task.permission_mode]
    if task.max_budget_usd is not None:
        argv += ["--max-budget-usd", repr(task.max_budget_usd)]
    argv.append("-")  # the prompt on stdin: any length, never read as an option
    seen = _AgentRun()
    agent_started = time.monotonic()
    try:
        finished = processes.run(argv, work, stdin_text=task.prompt, on_line=seen.line)
    finally:
        result.agent_s = round(time.monotonic() - agent_started, 3)
        result.tokens = dict(seen.done["usage"]) if seen.done and seen.done.get("usage") else seen.tokens
        result.session = _session_id(work)
    result.exit = finished.code
    done = seen.done
    if done is None:
        raise _Failed(
            f"wyckoff run exited {finished.code} without finishing its turn: {finished.output_tail}"
        )
    result.cost_usd = done.get("cost_usd")
    reason = str(done.get("reason"))
    result.status = STATUS_FOR_REASON.get(reason, "failed")
    result.reason = reason
    if seen.error is not None:
        result.reason = f"{reason}: {seen.error.get('kind')}: {seen.error.get('message')}"


def _snapshot(work: Path, index: Path, processes: TaskProcesses) -> str:
    """The tree of the work folder now (untracked files included, ignored ones not)."""
    env = _git_env(index)
    with contextlib.suppress(FileNotFoundError):
        shutil.copyfile(work / ".git" / "index", index)  # a head start for `add -A`
    for argv in (["git", "add", "-A"], ["git", "write-tree"]):
        finished = _git(argv, work, env, processes)
    return finished.strip()


def _patch(work: Path, index: Path, base: str, processes: TaskProcesses, result: TaskResult) -> None:
    env = _git_env(index)
    _git(["git", "add", "-A"], work, env, processes)
    names = _git(["git", "diff", "--cached", "--name-only", "-z", base], work, env, processes)
    result.files_changed = [name for name in names.split("\0") if name]
    result.patch_text = _git(
        ["git", "diff", "--cached", "--binary", "--no-color", base], work, env, processes
    )


def _git(argv: Sequence[str], work: Path, env: dict[str, str], processes: TaskProcesses) -> str:
    lines: list[str] = []
    finished = processes.run(argv, work, env=env, on_line=lines.append)
    if finished.code != 0:
        raise _Failed(f"{' '.join(argv)} failed (exit {finished.code}): {finished.output_tail}")
    return "".join(lines)


def _git_env(index: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    return env


def _session_id(work: Path) -> str | None:
    from wyckoff_cli.storage.sessions import SessionStore

    try:
        latest = SessionStore().latest(work.resolve())
    except OSError:
        return None
    return latest.id if latest is not None else None
