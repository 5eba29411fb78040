"""Shell commands a person asks for outside the model's turn: `!command` typed at the
start of the input, and a custom command's `` !`…` `` snippets.

Each runs as a `run_shell` call through the same policy as the model's calls: a deny
rule refuses it, a call the mode and rules do not allow asks through the host's
approval dialog (what a person typed is never an approval), and it never runs in plan
mode. The tool itself applies the sandbox and the scrubbed environment. Its events
(`tool_call`, streamed `tool_output`, `tool_result` / `tool_error`) are the same as a
model's call, so hosts show it with the same widget.

The output of a `!command` is offered to the next message: `attach()` puts each run
before the text the person types next, and the message's meta keeps what they typed
and which commands ran, so a resumed transcript shows both as they were.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalResponder
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.core.messages import Message
from wyckoff_cli.tools.base import ToolContext, ToolOutcome
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy
from wyckoff_cli.tools.registry import ToolRegistry

_STATUS_LINE = re.compile(r"^\[(exit code|timed out|killed|stopped)")
ATTACHED_CHARS = 30_000  # of one run's output sent with the next message; the middle is cut


@dataclass(frozen=True, slots=True)
class ShellRun:
    """One finished `!command`: what ran and what it printed."""

    command: str
    output: str  # the tool's result text (ends with its `[exit code N]` line)
    exit_code: int | None
    failed: bool = False  # the tool reported an error (it did not run to an exit code)

    @property
    def lines(self) -> int:
        """Lines of output, without the tool's closing status line (`[exit code 0]`)."""
        lines = self.output.rstrip().splitlines()
        if lines and _STATUS_LINE.match(lines[-1]):
            lines.pop()
        return 0 if lines == ["(no output)"] else len(lines)


@dataclass
class UserShell:
    """Runs one command at a time through the policy; `failed` says why one did not
    run, `result` holds the last one that did."""

    policy: ApprovalPolicy
    registry: ToolRegistry
    workspace: Path
    env: Mapping[str, str] | None
    results_dir: Callable[[], Path] | None = None
    approved: set[str] = field(default_factory=set)  # commands approved earlier this run
    failed: str | None = None
    result: ShellRun | None = None

    @classmethod
    def of(cls, session: Any, workspace: Path) -> UserShell:
        """The shell of `session` (a built `Session`): its policy, tools and environment."""
        runtime = session.runtime
        return cls(session.policy, session.registry, workspace, runtime.tool_env, lambda: runtime.results_dir)

    async def run(
        self, command: str, call_id: str, reason: str, abort: Any = None
    ) -> AsyncIterator[ev.RuntimeEvent]:
        """Run `command` (as `run_shell`), yielding its events; `reason` says in the
        approval dialog why it runs. `abort` (an AbortSignal) stops it."""
        self.failed, self.result = None, None
        tool = self.registry.get("run_shell")
        if tool is None:
            self.failed = f"`{command}` cannot run: this session has no run_shell tool"
            return
        if self.policy.mode == "plan":
            self.failed = f"`{command}` did not run: commands never run in plan mode"
            return
        args: dict[str, Any] = {"command": command}
        ctx = ToolContext(
            workspace=self.workspace,
            call_id=call_id,
            env=self.env,
            results_dir=self.results_dir() if self.results_dir is not None else None,
            mode=self.policy.mode,
        )
        verdict = await self.policy.decide(tool, args, ctx)
        if verdict.action == "deny":
            self.failed = f"`{command}` was refused: {verdict.reason}"
            return
        if verdict.action == "ask" and command not in self.approved:
            preview: dict[str, Any] = {"kind": "args"}
            if tool.preview is not None:
                with contextlib.suppress(Exception):
                    preview = dict(tool.preview(args, ctx))
            responder = ApprovalResponder(tool.arguments_problem)
            yield ev.ApprovalRequested(
                call_id,
                tool.name,
                args,
                preview,
                verdict.rule,
                f"{reason} ({verdict.reason})",
                list(tool.editable_fields),
                responder,
            )
            decision = await responder.wait()
            if decision.kind == "deny":
                yield ev.ApprovalDecided(call_id, tool.name, "deny", feedback=decision.feedback)
                self.failed = f"`{command}` was not approved"
                return
            if decision.kind == "edit" and decision.args is not None:
                args = decision.args
                again = await self.policy.decide(tool, args, ctx)
                if again.action == "deny":
                    self.failed = f"the edited command was refused: {again.reason}"
                    return
            rule = verdict.rule if decision.kind == "always" else None
            if rule:
                self.policy.remember(rule)
            yield ev.ApprovalDecided(call_id, tool.name, decision.kind, rule=rule)
            self.approved.add(command)
        async for event in self._execute(tool, args, ctx, abort):
            yield event

    async def _execute(
        self, tool: Any, args: dict[str, Any], ctx: ToolContext, abort: Any
    ) -> AsyncIterator[ev.RuntimeEvent]:
        """Run the tool, streaming its output as `tool_output` events."""
        call_id, command = ctx.call_id, str(args["command"])
        outputs: asyncio.Queue[str] = asyncio.Queue()
        ctx = dataclasses.replace(ctx, emit_output=outputs.put_nowait)
        yield ev.ToolStarted(call_id, tool.name, args)
        started = asyncio.get_running_loop().time()
        task = asyncio.ensure_future(tool.run(args, ctx))
        unsubscribe = abort.subscribe(task.cancel) if abort is not None else None
        try:
            while not task.done() or not outputs.empty():
                getter = asyncio.ensure_future(outputs.get())
                await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    yield ev.ToolOutput(call_id, getter.result())
                else:
                    getter.cancel()
        finally:
            if unsubscribe is not None:
                unsubscribe()
            if not task.done():
                task.cancel()
        elapsed = int((asyncio.get_running_loop().time() - started) * 1000)
        try:
            outcome = task.result()
        except asyncio.CancelledError:
            self.failed = f"`{command}` was interrupted"
            yield ev.ToolFailed(call_id, tool.name, "Interrupted by the user.", elapsed)
            return
        except ToolError as exc:
            self.result = ShellRun(command, exc.message, None, failed=True)
            yield ev.ToolFailed(call_id, tool.name, exc.message, elapsed)
            return
        text = outcome.text if isinstance(outcome, ToolOutcome) else str(outcome)
        display = outcome.display if isinstance(outcome, ToolOutcome) else None
        code = (display or {}).get("exit_code")
        self.result = ShellRun(command, text, code if isinstance(code, int) else None)
        yield ev.ToolSucceeded(call_id, tool.name, text, elapsed, None, display)


def attach(text: str, runs: Sequence[ShellRun]) -> Message:
    """The next user message: each `!command` run and its output, then what the person
    typed (`text`); the meta keeps both apart for the transcript."""
    blocks = [_block(run) for run in runs]
    meta: dict[str, Any] = {
        "typed": text,
        "shell_runs": [
            {"command": r.command, "output": r.output, "exit_code": r.exit_code, "failed": r.failed}
            for r in runs
        ],
    }
    return Message.user("\n\n".join([*blocks, text]) if text else "\n\n".join(blocks), **meta)


def _block(run: ShellRun) -> str:
    output = run.output
    if len(output) > ATTACHED_CHARS:
        half = ATTACHED_CHARS // 2
        cut = len(output) - 2 * half
        output = f"{output[:half]}\n[… {cut:,} characters cut …]\n{output[-half:]}"
    return (
        "<user-shell-command>\n"
        f"The user ran this command in the workspace shell themselves (not a call of yours): {run.command}\n"
        f"{output.rstrip()}\n"
        "</user-shell-command>"
    )
