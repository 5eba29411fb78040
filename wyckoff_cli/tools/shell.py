"""`run_shell`, and `task_output` / `task_stop` for commands run in the background."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.background import BackgroundTask, BackgroundTaskManager
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.permissions.policy import preview_rule
from wyckoff_cli.tools.permissions.sandbox import ShellSettings, sandbox_refusal, sandbox_run
from wyckoff_cli.tools.permissions.shellparse import parse_command
from wyckoff_cli.tools.permissions.subject import Subject
from wyckoff_cli.tools.permissions.workspace import display_path, resolve_for_tool, resolve_path
from wyckoff_cli.tools.process import OutputCapture, collapse_carriage_returns, run_process, strip_ansi

DEFAULT_TIMEOUT = 120.0
MAX_TIMEOUT = 600.0
PAGE_CHARS = 6_000

RUN_DESCRIPTION = """\
Run a shell command (bash) in the workspace and return its output and exit code.

- `command`: the command line; `&&`, pipes and redirections work. There is no \
terminal and no input: use non-interactive flags (`-y`, `--no-edit`, `CI=1`).
- `cwd`: folder to run in, relative to the workspace root (default: the root). Each \
call starts fresh: `cd` does not carry over to the next call.
- `timeout`: seconds (default 120, at most 600). On timeout the command and every \
process it started are stopped.
- stdout and stderr are merged. Long output keeps its beginning and end; the whole \
output is saved to a file whose path is given, for read_file or grep.
- Processes the command leaves running are stopped when it ends. For servers, \
watchers and other long-running commands, set `background: true`: you get a task id at \
once, read its output with task_output and stop it with task_stop; you are told when it ends.
Prefer the dedicated tools over shell equivalents: read_file (not cat/head/tail), \
edit_file/write_file (not sed/echo >), grep (not grep/rg), glob and list_dir (not find/ls)."""

SANDBOX_DESCRIPTION = """
- Commands run in a sandbox ({mode}): {what}. When a command fails because of \
the sandbox, the result says so; then set `network: true` to run it with network \
access, or `unsandboxed: true` to run it outside the sandbox. Both ask the user first."""
SANDBOX_WHAT = {
    "workspace-write": "only the workspace and the temp folder are writable; .git, .wyckoff/, .claude/, \
.mcp.json and .envrc are read-only (git can read the repository but not commit); sockets outside are \
unreachable, and there is no network",
    "read-only": "nothing on disk is writable and there is no network",
}

OUTPUT_DESCRIPTION = """\
Read the output of a background task (started with run_shell and `background: true`).

- `task_id`: the id run_shell returned, e.g. `bg-1`.
- `since`: a character offset; the result shows output after it and the offset to \
pass next time, so repeated calls return only new output. Without `since`, the most \
recent output is shown.
The result also says whether the task is still running, and its exit code once it ended."""

STOP_DESCRIPTION = """\
Stop a background task (started with run_shell and `background: true`): its command \
and every process it started are terminated. Returns the final status and the last \
lines of output. Stop servers and watchers you started once you no longer need them."""


@dataclass(frozen=True, slots=True)
class _BackgroundResult:
    text: str
    exit_code: int | None


class CommandTimedOut(Exception):
    pass


def _cwd(args: dict[str, Any], ctx: ToolContext) -> tuple[str, str]:
    """(absolute folder, as shown) for a call."""
    raw = args.get("cwd")
    path = resolve_for_tool(ctx, raw, reading=False) if isinstance(raw, str) and raw.strip() else None
    folder = path if path is not None else resolve_path(ctx.workspace, ".")
    if not folder.is_dir():
        raise ToolError(f"cwd {display_path(folder, ctx.workspace)} is not an existing folder.")
    return str(folder), display_path(folder, ctx.workspace)


def _timeout(args: dict[str, Any], default: float | None) -> float | None:
    value = args.get("timeout")
    if value is None:
        return default
    return min(float(value), MAX_TIMEOUT)


def make_shell_tools(settings: ShellSettings | None = None) -> tuple[Tool, Tool, Tool]:
    """`run_shell`, `task_output` and `task_stop` for a session whose commands run
    under `settings` (the sandbox and the environment)."""
    shell = settings or ShellSettings()

    def subject(args: Mapping[str, Any], workspace: Path) -> Subject:
        return shell_subject(args, workspace, shell)

    async def run(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        return await _run(args, ctx, shell)

    description = RUN_DESCRIPTION
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": dict(_PROPERTIES),
        "required": ["command"],
        "additionalProperties": False,
    }
    if shell.sandboxed:
        description += SANDBOX_DESCRIPTION.format(mode=shell.sandbox, what=SANDBOX_WHAT[shell.sandbox])
        parameters["properties"].update(_SANDBOX_PROPERTIES)
    tool = Tool(
        name="run_shell",
        description=description,
        parameters=parameters,
        run=run,
        requires_approval=True,
        kind="execute",
        path_args=("cwd",),
        preview=lambda args, ctx: _preview(tool, args, ctx),
        summary_arg="command",
        editable_fields=("command",),
        subject_of=subject,
        extra={"shell": shell},
    )
    return tool, task_output, task_stop


def shell_subject(args: Mapping[str, Any], workspace: Path, shell: ShellSettings) -> Subject:
    """The parsed command, the folder it runs in, and what must be asked every time."""
    command = args.get("command")
    if not isinstance(command, str):
        return Subject("none")
    raw_cwd = args.get("cwd")
    try:
        cwd = resolve_path(workspace, raw_cwd if isinstance(raw_cwd, str) and raw_cwd.strip() else ".")
    except ToolError:
        cwd = resolve_path(workspace, ".")
    escalations: list[str] = []
    if shell.sandboxed and args.get("unsandboxed"):
        escalations.append("running a command outside the sandbox (`unsandboxed: true`)")
    elif shell.sandboxed and args.get("network") and not shell.network:
        escalations.append("running a command with network access (`network: true`)")
    return Subject("command", command, command=parse_command(command), cwd=str(cwd),
                   escalations=tuple(escalations))  # fmt: skip


async def _run(args: dict[str, Any], ctx: ToolContext, shell: ShellSettings) -> ToolOutcome:
    command = str(args["command"])
    if not command.strip():
        raise ToolError("the command is empty.")
    folder, shown_cwd = _cwd(args, ctx)
    refused = sandbox_refusal(shell, args)
    if refused is not None:
        raise ToolError(refused)
    if args.get("background"):
        return _start_background(command, folder, shown_cwd, args, ctx, shell)
    timeout = _timeout(args, DEFAULT_TIMEOUT)
    if ctx.host_terminal is not None and not shell.required_by:  # an editor's terminal is no sandbox
        return await _run_in_host_terminal(ctx, command, Path(folder), shown_cwd, timeout)
    capture = OutputCapture(
        ctx.results_dir, f"run_shell-{ctx.call_id or int(time.time() * 1000)}", ctx.redact
    )
    sandbox = _sandbox(args, ctx, shell)
    result = await run_process(
        command, cwd=Path(folder), env=ctx.env, timeout=timeout, emit=ctx.emit_output, capture=capture,
        sandbox=sandbox, env_keep=shell.env_keep, env_remove=shell.env_remove,
    )  # fmt: skip
    body = result.output if result.output.strip() else "(no output)"
    text = f"{body.rstrip()}\n{result.status_line(timeout)}"
    display: dict[str, Any] = {"exit_code": result.exit_code, "cwd": shown_cwd}
    if shell.sandboxed:
        display["sandbox"] = sandbox.mode if sandbox is not None else "off"
    if result.timed_out:
        display["timed_out"] = True
    if result.saved_to is not None:
        display["full_output"] = str(result.saved_to)
    return ToolOutcome(text, display)


async def _run_in_host_terminal(
    ctx: ToolContext, command: str, folder: Path, shown_cwd: str, timeout: float | None
) -> ToolOutcome:
    assert ctx.host_terminal is not None
    limit = DEFAULT_TIMEOUT if timeout is None else timeout
    result = await ctx.host_terminal.run(ctx.call_id, command, folder, limit)
    body = result.output if result.output.strip() else "(no output)"
    if result.timed_out:
        status = f"[timed out after {limit:g} s: the command was stopped in the editor's terminal]"
    elif result.exit_code is None:
        status = "[killed by a signal]"
    else:
        status = f"[exit code {result.exit_code}]"
    display: dict[str, Any] = {"exit_code": result.exit_code, "cwd": shown_cwd, "host_terminal": True}
    if result.truncated:
        body = "[… the start of the output was cut by the terminal]\n" + body
    return ToolOutcome(f"{body.rstrip()}\n{status}", display)


def _sandbox(args: dict[str, Any], ctx: ToolContext, shell: ShellSettings) -> Any:
    if args.get("unsandboxed"):
        return None  # the person approved running it outside (the policy always asks)
    return sandbox_run(shell, ctx.workspace, network=bool(args.get("network")))


def _start_background(
    command: str, folder: str, shown_cwd: str, args: dict[str, Any], ctx: ToolContext, shell: ShellSettings
) -> ToolOutcome:
    manager = ctx.background
    if manager is None:
        raise ToolError(
            "background tasks are not available in this session; run the command without background."
        )
    timeout = _timeout(args, None)
    name = f"task-{ctx.call_id or int(time.time() * 1000)}"
    env = ctx.env
    results_dir = ctx.results_dir
    sandbox = _sandbox(args, ctx, shell)

    async def work(sink: Any) -> _BackgroundResult:
        capture = OutputCapture(results_dir, name, ctx.redact)
        result = await run_process(
            command, cwd=Path(folder), env=env, timeout=timeout, emit=sink, capture=capture,
            sandbox=sandbox, env_keep=shell.env_keep, env_remove=shell.env_remove,
        )  # fmt: skip
        if result.timed_out:
            raise CommandTimedOut(result.status_line(timeout).strip("[]"))
        return _BackgroundResult(
            f"{result.status_line(timeout)} after {result.elapsed:.1f} s", result.exit_code
        )

    task = manager.start("run_shell", command[:200], work)
    text = (
        f"Started in the background as task {task.id} (in {shown_cwd}). You will be told when it ends; "
        f"meanwhile read its output with task_output(task_id={task.id!r}) and stop it with "
        f"task_stop(task_id={task.id!r})."
    )
    return ToolOutcome(text, {"task_id": task.id, "cwd": shown_cwd, "background": True})


def _preview(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    raw = args.get("cwd")
    folder = resolve_path(ctx.workspace, raw if isinstance(raw, str) and raw.strip() else ".")
    preview: dict[str, Any] = {
        "kind": "command",
        "command": args.get("command", ""),
        "cwd": str(folder),
        "timeout": _timeout(args, None if args.get("background") else DEFAULT_TIMEOUT),
        "background": bool(args.get("background")),
    }
    shell: ShellSettings = tool.extra.get("shell", ShellSettings())
    if shell.sandboxed:
        preview["sandbox"] = "off" if args.get("unsandboxed") else shell.sandbox
        preview["network"] = bool(args.get("network") or shell.network)
    rule = preview_rule(tool, args, ctx)
    if rule:
        preview["rule"] = rule
    return preview


_PROPERTIES: dict[str, Any] = {
    "command": {"type": "string", "minLength": 1, "description": "The shell command."},
    "cwd": {"type": "string", "description": "Folder to run in (default: workspace root)."},
    "timeout": {
        "type": "number",
        "minimum": 0.1,
        "maximum": MAX_TIMEOUT,
        "description": "Seconds before the command is stopped (default 120).",
    },
    "background": {"type": "boolean", "description": "Run as a background task; returns a task id."},
}
_SANDBOX_PROPERTIES: dict[str, Any] = {
    "network": {"type": "boolean", "description": "Run with network access (asks the user)."},
    "unsandboxed": {"type": "boolean", "description": "Run outside the sandbox (asks the user)."},
}


# --------------------------------------------------------------------------- tasks


def _task(ctx: ToolContext, task_id: str) -> tuple[BackgroundTaskManager, BackgroundTask]:
    manager = ctx.background
    if manager is None:
        raise ToolError("background tasks are not available in this session.")
    task = manager.get(task_id)
    if task is None:
        known = ", ".join(t.id for t in manager.tasks()) or "none"
        raise ToolError(f"there is no background task {task_id!r} (tasks: {known}).")
    return manager, task


def _status(task: BackgroundTask) -> str:
    if task.status == "running":
        return f"running for {time.time() - task.started:.0f} s"
    code = f" with exit code {task.exit_code}" if task.exit_code is not None else ""
    detail = f" ({task.result})" if task.exit_code is None and task.result else ""
    return f"{task.status}{code}{detail}"


def _clean(text: str) -> str:
    return collapse_carriage_returns(strip_ansi(text))


async def _output_run(args: dict[str, Any], ctx: ToolContext) -> str:
    _, task = _task(ctx, args["task_id"])
    since = args.get("since")
    full, end = task.text_since(0)
    first = task.dropped
    start = max(first, end - PAGE_CHARS) if since is None else max(int(since), first)
    start = min(start, end)
    chunk = full[start - first : start - first + PAGE_CHARS]
    if start + len(chunk) < end and "\n" in chunk:
        chunk = chunk[: chunk.rfind("\n") + 1]  # whole lines when the page is full
    stop = start + len(chunk)
    lines = [f"Task {task.id} ({task.name}: {task.summary}) is {_status(task)}."]
    if since is not None and int(since) < first:
        lines.append(f"[output before character {first:,} was dropped from memory]")
    if not chunk:
        lines.append("No output" + (" yet." if task.status == "running" else " after that point."))
    else:
        lines.append(f"Output, characters {start:,}-{stop:,} of {end:,}:")
        lines.append(_clean(chunk).rstrip("\n"))
    if since is None and start > first:
        lines.append(f"[earlier output: task_output(task_id={task.id!r}, since={first})]")
    if stop < end:
        lines.append(f"[more output: task_output(task_id={task.id!r}, since={stop})]")
    elif task.status == "running":
        lines.append(f"[new output later: task_output(task_id={task.id!r}, since={stop})]")
    else:
        lines.append("[end of output]")
    return "\n".join(lines)


async def _stop_run(args: dict[str, Any], ctx: ToolContext) -> str:
    manager, task = _task(ctx, args["task_id"])
    if task.status != "running":
        return f"Task {task.id} had already ended: {_status(task)}."
    await manager.stop(task.id)
    tail, _ = task.text_since(0)
    tail = _clean(tail[-1_500:]).rstrip("\n")
    text = f"Stopped task {task.id} ({task.summary}); it is now {_status(task)}."
    return text + (f"\nLast output:\n{tail}" if tail else "")


task_output = Tool(
    name="task_output",
    description=OUTPUT_DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {
            "task_id": {"type": "string", "minLength": 1, "description": "The task id, e.g. bg-1."},
            "since": {"type": "integer", "minimum": 0, "description": "Show output after this offset."},
        },
        "required": ["task_id"],
        "additionalProperties": False,
    },
    run=_output_run,
    concurrency_safe=True,
    kind="read",
    summary_arg="task_id",
)

task_stop = Tool(
    name="task_stop",
    description=STOP_DESCRIPTION,
    parameters={
        "type": "object",
        "properties": {"task_id": {"type": "string", "minLength": 1, "description": "The task id."}},
        "required": ["task_id"],
        "additionalProperties": False,
    },
    run=_stop_run,
    kind="other",
    summary_arg="task_id",
)


run_shell, _, _ = make_shell_tools()  # unsandboxed; sessions build theirs from [shell] settings
