"""Running a shell command as its own process group, streaming and capturing its output.

- The command runs under `bash -c` (`sh -c` without bash) in a new session, so it and
  everything it starts share one process group. On timeout or cancellation the whole
  group gets SIGTERM, then SIGKILL after a short grace; when the command itself ends,
  processes it left running in the group are stopped the same way (long-running
  programs belong in background tasks).
- Standard input is empty; stdout and stderr are merged, streamed to `emit` as they
  come, and kept head and tail, with the whole output spilled to a file in the
  results folder once it grows past what is shown inline.
- The environment is scrubbed (`child_env`): no variable whose name looks like a
  secret reaches a command.
- With a `SandboxRun`, the command runs inside bubblewrap (sandbox.py), without the
  variables that point at sockets outside (`SSH_AUTH_SOCK` …, sandbox_mounts.py).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import shutil
import signal
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Protocol

from wyckoff_cli.tools.net_proxy import proxied
from wyckoff_cli.tools.permissions.sandbox import SandboxRun, blocked_note, bwrap_args, cleanup
from wyckoff_cli.tools.permissions.sandbox_mounts import sandbox_env

HEAD_CHARS = 2_000
TAIL_CHARS = 4_500
INLINE_CHARS = HEAD_CHARS + TAIL_CHARS + 300  # output up to this size is shown whole
KILL_GRACE = 0.5  # seconds between SIGTERM and SIGKILL
DRAIN_GRACE = 0.3  # seconds to wait for the output pipe to close after the command ends
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


# Names containing these (case-insensitive) are secrets; cloud credential families too.
SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "SESSION_COOKIE")
SECRET_PREFIXES = ("AWS_", "AZURE_", "ARM_CLIENT", "GOOGLE_APPLICATION_CREDENTIALS", "GCLOUD_AUTH")
KEPT_CLOUD = frozenset({"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE"})
# Always kept: the command needs them, and they hold no secret.
ALWAYS_KEPT = frozenset({"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM",
                         "COLORTERM", "TERM_PROGRAM", "TZ", "TMPDIR", "PWD", "NO_COLOR"})  # fmt: skip
ALWAYS_KEPT_PREFIXES = ("LC_",)


def is_secret_name(name: str, keep: Iterable[str] = (), remove: Iterable[str] = ()) -> bool:
    """Whether the variable `name` is removed from commands' environment. `keep` and
    `remove` are glob patterns (`[shell] env_keep` / `env_remove`); `remove` wins over
    the built-in keep list, `keep` over the built-in secret list."""
    upper = name.upper()
    if any(fnmatchcase(upper, p.upper()) for p in remove):
        return True
    if upper in ALWAYS_KEPT or upper.startswith(ALWAYS_KEPT_PREFIXES):
        return False
    if any(fnmatchcase(upper, p.upper()) for p in keep):
        return False
    if upper in KEPT_CLOUD:
        return False
    return any(word in upper for word in SECRET_WORDS) or upper.startswith(SECRET_PREFIXES)


def removed_variables(
    base: Mapping[str, str] | None = None, keep: Iterable[str] = (), remove: Iterable[str] = ()
) -> list[str]:
    """The names `child_env` removes from `base` (default: this process's environment)."""
    keep, remove = tuple(keep), tuple(remove)
    env = os.environ if base is None else base
    return sorted(name for name in env if is_secret_name(name, keep, remove))


def child_env(
    base: Mapping[str, str] | None = None, keep: Iterable[str] = (), remove: Iterable[str] = ()
) -> dict[str, str]:
    """The environment for a command: `base` (default: this process's) without
    secrets (see `is_secret_name`), with pagers and prompts turned off for
    non-interactive use."""
    keep, remove = tuple(keep), tuple(remove)
    env = {
        key: value
        for key, value in (os.environ if base is None else base).items()
        if not is_secret_name(key, keep, remove)
    }
    env.setdefault("PAGER", "cat")
    env.setdefault("GIT_PAGER", "cat")
    env.setdefault("GIT_TERMINAL_PROMPT", "0")
    return env


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def collapse_carriage_returns(text: str) -> str:
    """Progress bars redraw with `\\r`: keep what the last redraw left on each line."""
    if "\r" not in text:
        return text
    lines = text.split("\n")
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)


class _Writer(Protocol):
    def write(self, text: str, /) -> int: ...

    def close(self) -> None: ...


class OutputCapture:
    """Keeps the head and tail of a command's output; once it outgrows the inline
    size, the whole output is written to `<results_dir>/<name>.txt` as it comes."""

    def __init__(
        self, results_dir: Path | None, name: str, redact: Callable[[str], str] | None = None
    ) -> None:
        self.results_dir = results_dir
        self.redact = redact
        self._partial = ""  # the unfinished last line, redacted once it is complete
        self.name = _UNSAFE_NAME.sub("_", name)
        self.total = 0
        self.lines = 0
        self._early: list[str] = []  # everything, until the output is too big
        self._head = ""
        self._tail = ""
        self._file: _Writer | None = None
        self.path: Path | None = None

    def add(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        self.lines += text.count("\n")
        if self._file is None and self.total <= INLINE_CHARS:
            self._early.append(text)
            return
        if self._file is None:
            so_far = "".join(self._early) + text
            self._early = []
            self._head = so_far[:HEAD_CHARS]
            self._tail = so_far[-TAIL_CHARS:]
            self._open(so_far)
            return
        self._tail = (self._tail + text)[-TAIL_CHARS:]
        self._write(text)

    def _write(self, text: str, final: bool = False) -> None:
        """Write to the file, redacting whole lines (a secret is never split)."""
        assert self._file is not None
        if self.redact is not None:
            text = self._partial + text
            cut = len(text) if final else text.rfind("\n") + 1
            self._partial = text[cut:]
            text = self.redact(text[:cut])
        if text:
            with contextlib.suppress(OSError):
                self._file.write(text)

    def _open(self, so_far: str) -> None:
        if self.results_dir is None:
            self._file = _NullFile()
            return
        try:
            self.results_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
            self.path = self.results_dir / f"{self.name}.txt"
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            self._file = os.fdopen(fd, "w", encoding="utf-8", errors="replace")
        except OSError:
            self.path = None
            self._file = _NullFile()
        self._write(so_far)

    def close(self) -> None:
        if self._file is not None:
            self._write("", final=True)
            with contextlib.suppress(OSError):
                self._file.close()

    def text(self) -> str:
        """What the model sees: the whole output, or its head and tail with a note."""
        if self._file is None:
            return collapse_carriage_returns(strip_ansi("".join(self._early)))
        omitted = self.total - len(self._head) - len(self._tail)
        lines = self.lines + 1
        if self.path is not None:
            where = (
                f"The full output ({self.total:,} characters, {lines:,} lines) is in {self.path}: "
                f"read_file(path={str(self.path)!r}, offset=LINE) pages through it, grep searches it."
            )
        else:
            where = "The full output was not saved."
        head = collapse_carriage_returns(strip_ansi(self._head))
        tail = collapse_carriage_returns(strip_ansi(self._tail))
        return f"{head}\n[… {omitted:,} characters omitted from the middle. {where}]\n{tail}"


class _NullFile:
    def write(self, text: str) -> int:
        return len(text)

    def close(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class ProcessResult:
    exit_code: int | None  # None when the command was stopped for its timeout
    output: str  # head and tail, as OutputCapture.text()
    timed_out: bool
    elapsed: float
    saved_to: Path | None

    def status_line(self, timeout: float | None) -> str:
        if self.timed_out:
            return (
                f"[timed out after {timeout:g} s: the command and every process it started were stopped. "
                "Use a longer timeout, or background: true for long-running commands]"
            )
        if self.exit_code is not None and self.exit_code < 0:
            return f"[killed by signal {-self.exit_code}]"
        return f"[exit code {self.exit_code}]"


def _shell() -> list[str]:
    bash = shutil.which("bash") or ("/bin/bash" if os.path.exists("/bin/bash") else None)
    return [bash, "-c"] if bash else ["/bin/sh", "-c"]


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _exited(proc: asyncio.subprocess.Process) -> int:
    """The exit status, as soon as the process ends. (`Process.wait()` on Python 3.11
    also waits for the output pipe to close, which a leftover child can hold open.)"""
    delay = 0.002
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return proc.returncode


async def _terminate(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM to the whole group, SIGKILL after a grace period (always sent, so
    members that ignore SIGTERM or outlive the leader die too)."""
    pgid = proc.pid
    _signal_group(pgid, signal.SIGTERM)
    try:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(_exited(proc), KILL_GRACE)
    finally:
        _signal_group(pgid, signal.SIGKILL)


async def run_process(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None,
    timeout: float | None,
    emit: Callable[[str], None],
    capture: OutputCapture,
    sandbox: SandboxRun | None = None,
    env_keep: Iterable[str] = (),
    env_remove: Iterable[str] = (),
) -> ProcessResult:
    """Run `command` (in `sandbox` when given); see the module docstring."""
    started = time.monotonic()
    argv = [*_shell(), command]
    variables = child_env(env, env_keep, env_remove)
    if sandbox is None:
        result = await _run(argv, cwd, variables, timeout, emit, capture)
    else:
        result = await _run_sandboxed(sandbox, argv, cwd, variables, timeout, emit, capture)
    if sandbox is not None:
        note = blocked_note(sandbox, result.output, result.exit_code)
        if note:
            result = ProcessResult(result.exit_code, f"{result.output.rstrip()}\n{note}", result.timed_out,
                                   result.elapsed, result.saved_to)  # fmt: skip
    return ProcessResult(result.exit_code, result.output, result.timed_out, time.monotonic() - started,
                         result.saved_to)  # fmt: skip


async def _run_sandboxed(
    sandbox: SandboxRun,
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float | None,
    emit: Callable[[str], None],
    capture: OutputCapture,
) -> ProcessResult:
    """`argv` in bubblewrap; with `[shell] allowed_domains`, behind the proxy (net_proxy.py),
    whose refusals end the output."""
    try:
        async with proxied(sandbox) as net:
            run = net.run if net is not None else sandbox
            env = sandbox_env(env, sandbox.allow_unix_sockets)
            if net is not None:
                argv, env = net.argv(argv), net.env(env)
            result = await _run(bwrap_args(run, cwd, argv), cwd, env, timeout, emit, capture)
            note = net.proxy.note() if net is not None else ""
    finally:
        cleanup(sandbox)
    if note:
        result = ProcessResult(result.exit_code, f"{result.output.rstrip()}\n{note}", result.timed_out,
                               result.elapsed, result.saved_to)  # fmt: skip
    return result


async def _run(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float | None,
    emit: Callable[[str], None],
    capture: OutputCapture,
) -> ProcessResult:
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    assert proc.stdout is not None
    stdout = proc.stdout
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def take(data: bytes, final: bool = False) -> None:
        text = decoder.decode(data, final)
        if text:
            capture.add(text)
            emit(strip_ansi(text))

    async def pump() -> None:
        while chunk := await stdout.read(65_536):
            take(chunk)
        take(b"", final=True)

    reader = asyncio.ensure_future(pump())
    timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout):
                exited = asyncio.ensure_future(_exited(proc))
                try:
                    await asyncio.wait({reader, exited}, return_when=asyncio.FIRST_COMPLETED)
                    if not reader.done():
                        # The command ended; leftovers in its group may still hold the pipe.
                        await asyncio.wait({reader}, timeout=DRAIN_GRACE)
                    await exited
                finally:
                    exited.cancel()
        except TimeoutError:
            timed_out = True
        await _terminate(proc)  # the group: after a timeout, or what the command left running
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(reader, 2.0)
    except asyncio.CancelledError:
        reader.cancel()
        await _terminate(proc)
        raise
    finally:
        capture.close()
    code = None if timed_out else proc.returncode
    return ProcessResult(code, capture.text(), timed_out, time.monotonic() - started, capture.path)
