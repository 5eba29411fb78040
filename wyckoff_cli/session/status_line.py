"""A status line command, as Claude Code's `statusLine`: its first line of output is
shown in the status bar.

- Where it comes from (`find_status_line`): `[ui] status_line` in the user's own
  `config.toml` first; else a Claude Code settings file's `statusLine` (`{"type":
  "command", "command": …}`): the project's `.claude/settings.local.json`, then
  `.claude/settings.json` — only once trusted, with the same trust as their hooks
  (runtime/hook_config.py) — then `~/.claude/settings.json`. A project's
  `.wyckoff/config.toml` cannot set it. A managed `allow_hooks = false` turns it off.
- What it gets (`status_payload`): Claude Code's status-line JSON on standard input
  (`hook_event_name` "Status", `session_id`, `transcript_path`, `cwd`, `model` {`id`,
  `display_name`}, `workspace` {`current_dir`, `project_dir`}, `version`,
  `output_style`, `cost` {`total_cost_usd`, `total_duration_ms`, …}, `context_window`
  {`context_window_size`, `used_percentage`, `remaining_percentage`, …}, `worktree`
  when the workspace is a git worktree) plus Wyckoff's `permission_mode`.
- When it runs (`StatusLineRefresher`): when what it would get changes (the elapsed
  time alone is no change), at most twice a second, one run at a time, each stopped
  after `timeout` seconds. A command that fails, times out or cannot start shows a
  short mark (`status line: exit 2`), never a traceback. It runs as the user, outside
  the sandbox (it is the user's own program, as a hook is), in the workspace, with the
  scrubbed environment commands get.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from wyckoff_cli.runtime.hook_config import STATUS_LINE, HookSet

DEFAULT_TIMEOUT = 5.0
MIN_INTERVAL = 0.5  # seconds between two runs: at most twice a second
MAX_CHARS = 200
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
VOLATILE = ("total_duration_ms", "total_api_duration_ms")  # change on their own: no reason to run again


@dataclass(frozen=True)
class StatusLineSpec:
    command: str
    source: str  # "[ui] status_line", ".claude/settings.json", "~/.claude/settings.json" …
    timeout: float = DEFAULT_TIMEOUT


def find_status_line(user_command: str, hooks: HookSet | None) -> StatusLineSpec | None:
    """The status line command to run now, or None (see the module docstring).
    `user_command`: `[ui] status_line` of the user's own config file."""
    if user_command.strip():
        return StatusLineSpec(user_command, "[ui] status_line")
    if hooks is None:
        return None
    found = [
        spec
        for file in hooks.files
        if file.runnable or file.path in hooks.trusted_for_run
        for spec in file.specs
        if spec.event == STATUS_LINE
    ]
    if not found:
        return None
    chosen = found[-1]  # the files come user first, the project's local settings last
    return StatusLineSpec(chosen.command, chosen.source, chosen.timeout)


def user_status_line() -> str:
    """`[ui] status_line` of the user's own `config.toml` (never the project's); "" when
    a managed policy turns hooks off (`allow_hooks = false`)."""
    from wyckoff_cli.storage import paths
    from wyckoff_cli.storage.config import read_toml
    from wyckoff_cli.storage.managed import load_managed

    try:
        managed = load_managed()
    except Exception:  # reported when the session is built
        managed = None
    if managed is not None and not managed.allow_hooks:
        return ""

    try:
        data = read_toml(paths.config_file()) or {}
    except Exception:  # a broken config is reported when the workspace is opened
        return ""
    ui = data.get("ui")
    value = ui.get("status_line", "") if isinstance(ui, dict) else ""
    return value if isinstance(value, str) else ""


def status_payload(controller: Any, started: float) -> dict[str, Any]:
    """Claude Code's status-line JSON for `controller` (a ChatController), whose app
    started at `started` (time.monotonic)."""
    from wyckoff_cli import __version__

    status = controller.status
    root = Path(controller.root)
    cwd = str(getattr(controller.builder, "cwd", None) or root)
    recorder = getattr(controller, "_recorder", None)
    transcript = getattr(getattr(recorder, "chat", None), "path", None)
    model = str(status.fallback_model or status.model)
    used = round(status.context_percent, 1)
    totals = status.per_model.values()
    payload: dict[str, Any] = {
        "hook_event_name": "Status",
        "session_id": controller.id or "",
        "transcript_path": str(transcript) if transcript else "",
        "cwd": cwd,
        "model": {"id": model, "display_name": model.split(":", 1)[-1]},
        "workspace": {"current_dir": cwd, "project_dir": str(root)},
        "version": __version__,
        "output_style": {"name": "default"},
        "permission_mode": status.mode,
        "cost": {
            "total_cost_usd": round(status.cost, 6),
            "total_duration_ms": int((time.monotonic() - started) * 1000),
            "total_api_duration_ms": 0,
            "total_lines_added": 0,
            "total_lines_removed": 0,
        },
        "context_window": {
            "total_input_tokens": sum(t.input_tokens for t in totals),
            "total_output_tokens": sum(t.output_tokens for t in totals),
            "context_window_size": status.context_window,
            "used_percentage": used,
            "remaining_percentage": round(100 - used, 1),
        },
    }
    worktree = _worktree(root)
    if worktree is not None:
        payload["worktree"] = worktree
    return payload


@lru_cache(maxsize=8)
def _worktree(root: Path) -> dict[str, str] | None:
    """{name, path, branch} when `root` is a linked git worktree (its `.git` is a file)."""
    git = root / ".git"
    if not git.is_file():
        return None
    try:
        pointer = git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not pointer.startswith("gitdir:"):
        return None
    own = Path(pointer.split(":", 1)[1].strip())
    own = own if own.is_absolute() else root / own
    branch = ""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        head = (own / "HEAD").read_text(encoding="utf-8").strip()
        branch = head.removeprefix("ref: refs/heads/") if head.startswith("ref: ") else head[:12]
    return {"name": own.name, "path": str(root), "branch": branch}


def change_key(payload: dict[str, Any]) -> str:
    """What decides whether the command runs again: the payload without the elapsed time."""
    cost = {k: v for k, v in payload.get("cost", {}).items() if k not in VOLATILE}
    return json.dumps({**payload, "cost": cost}, sort_keys=True)


def first_line(output: bytes) -> str:
    """The first non-empty line of `output`, without escape sequences or control characters."""
    for line in output.decode("utf-8", "replace").splitlines():
        text = _CONTROL.sub("", _ANSI.sub("", line)).strip()
        if text:
            return text[:MAX_CHARS]
    return ""


async def run_status_command(spec: StatusLineSpec, payload: str, cwd: Path) -> str:
    """The command's first line of output, or a short mark when it fails."""
    from wyckoff_cli.tools.process import child_env

    try:
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh", "-c", spec.command, cwd=cwd, env=child_env(None), stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
    except OSError as exc:
        return f"status line: cannot start ({exc.strerror})"
    try:
        out, _ = await asyncio.wait_for(proc.communicate(payload.encode("utf-8")), spec.timeout)
    except TimeoutError:
        _kill(proc)
        await proc.wait()
        return f"status line: timed out after {spec.timeout:g} s"
    except BaseException:
        _kill(proc)
        raise
    if proc.returncode != 0:
        return f"status line: exit {proc.returncode}"
    return first_line(out)


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class StatusLineRefresher:
    """Runs the status line command when its input changes, at most once per
    `min_interval` seconds, one run at a time; `on_text` gets each new first line."""

    def __init__(
        self,
        spec: Callable[[], StatusLineSpec | None],
        cwd: Path,
        on_text: Callable[[str], None],
        *,
        min_interval: float = MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.spec = spec
        self.cwd = cwd
        self.on_text = on_text
        self.min_interval = min_interval
        self.clock = clock
        self.text = ""
        self.runs = 0
        self._pending: tuple[str, str] | None = None  # (change key, payload JSON)
        self._last_key: str | None = None
        self._last_start = float("-inf")
        self._task: asyncio.Task[None] | None = None

    def changed(self, payload: dict[str, Any]) -> None:
        """The status changed (maybe): run the command again if its input did."""
        spec = self.spec()
        if spec is None:
            if self.text:
                self.text = ""
                self.on_text("")
            return
        key = f"{spec.command}\0{change_key(payload)}"
        if key == self._last_key and self._pending is None:
            return
        self._pending = (key, json.dumps(payload))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        while self._pending is not None:
            wait = self._last_start + self.min_interval - self.clock()
            if wait > 0:
                await asyncio.sleep(wait)  # the rate limit itself, not a wait for a condition
            (key, payload), self._pending = self._pending, None
            spec = self.spec()
            if key == self._last_key or spec is None:
                continue
            self._last_key, self._last_start = key, self.clock()
            self.runs += 1
            text = await run_status_command(spec, payload, self.cwd)
            if text != self.text:
                self.text = text
                self.on_text(text)

    async def aclose(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
