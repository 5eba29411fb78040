"""User hooks with Claude Code's semantics, as a `RuntimeHooks`.

Each hook is a shell command run with the event as JSON on standard input (session
id, transcript path, cwd, permission mode, the event's name and its own fields: tool
name and input, the tool's response, the prompt, …), in the project folder, with the
scrubbed environment plus `WYCKOFF_PROJECT_DIR` (and `CLAUDE_PROJECT_DIR`, so Claude
Code's hook files work unchanged). A hook from a Claude Code file gets the event in
Claude Code's names (runtime/claude_payload.py) and its `updatedInput` is mapped back
to Wyckoff's keys. The hooks that match one event run concurrently,
as child processes awaited off the event loop (streaming never stalls), each killed
with its process group after its `timeout`.

What a hook's result means, as Claude Code documents it:
- exit 0: go on; for `UserPromptSubmit` and `SessionStart` plain stdout is added as
  context to the user's message. JSON on stdout is read: `continue: false` (+
  `stopReason`) ends the run; `decision: "block"` + `reason` blocks (a prompt, a
  stop, a tool result's acceptance); `hookSpecificOutput` carries
  `permissionDecision` (`allow` / `deny` / `ask`), `permissionDecisionReason`,
  `updatedInput` (PreToolUse) and `additionalContext`.
- exit 2: block, stderr is the reason: PreToolUse refuses the call with it (the model
  sees it), PostToolUse gives it to the model, Stop/SubagentStop make the turn go on
  with it as a reminder (at most 3 times in a row), UserPromptSubmit refuses the
  prompt (the person sees it); for the other events it is only shown.
- any other exit code, a timeout, a command that cannot start: a non-blocking error
  shown to the person.
Every run becomes a `hook_run` event (a line under the tool in the app, a record in
the scratchpad).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.claude_names import wyckoff_tool_input
from wyckoff_cli.core.errors import StopRun
from wyckoff_cli.core.messages import Message, TextPart, ToolCallPart
from wyckoff_cli.runtime.claude_payload import claude_payload
from wyckoff_cli.runtime.hook_config import HookSet, HookSpec
from wyckoff_cli.runtime.hooks import Emit, RuntimeHooks, ToolDecision, merge_decisions
from wyckoff_cli.runtime.http_hooks import run_http_hook
from wyckoff_cli.runtime.loop import child_environment
from wyckoff_cli.runtime.prompt_hooks import Judge, run_prompt_hook

log = logging.getLogger(__name__)

MAX_STOP_REMINDERS = 3
OUTPUT_LIMIT = 1_000_000  # characters of a hook's stdout/stderr kept
SHOWN_CHARS = 300


@dataclass(frozen=True, slots=True)
class HookResult:
    spec: HookSpec
    exit_code: int | None  # None: timed out or could not start
    stdout: str
    stderr: str
    elapsed_ms: int
    timed_out: bool = False

    @property
    def output(self) -> dict[str, Any] | None:
        """The JSON object on stdout (read only after exit 0), else None."""
        if self.exit_code != 0 or not self.stdout.lstrip().startswith("{"):
            return None
        try:
            value = json.loads(self.stdout)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    @property
    def specific(self) -> dict[str, Any]:
        output = self.output or {}
        value = output.get("hookSpecificOutput")
        return value if isinstance(value, dict) else {}

    @property
    def blocks(self) -> bool:
        """Exit 2, or JSON saying `decision: "block"`."""
        return self.exit_code == 2 or (self.output or {}).get("decision") == "block"

    @property
    def reason(self) -> str:
        if self.exit_code == 2:
            return self.stderr.strip()
        output = self.output or {}
        return str(output.get("reason") or output.get("stopReason") or "").strip()

    @property
    def stops(self) -> str | None:
        """The stop reason when the JSON says `continue: false`, else None."""
        output = self.output or {}
        if output.get("continue") is False:
            return str(output.get("stopReason") or f"a {self.spec.event} hook stopped the run")
        return None

    @property
    def context(self) -> str:
        """What exit 0 adds as context: `additionalContext`, or plain stdout."""
        if self.exit_code != 0:
            return ""
        extra = self.specific.get("additionalContext")
        if isinstance(extra, str):
            return extra.strip()
        return "" if self.output is not None else self.stdout.strip()

    def event(self, call_id: str | None = None) -> ev.HookRan:
        if self.timed_out:
            outcome, message = "timeout", f"timed out after {self.spec.timeout:g}s"
        elif self.exit_code is None:
            outcome, message = "error", self.stderr.strip()
        elif self.blocks or self.specific.get("permissionDecision") == "deny":
            outcome = "blocked"
            message = self.reason or str(self.specific.get("permissionDecisionReason") or "")
        elif self.exit_code == 0:
            outcome = "ok"
            system = (self.output or {}).get("systemMessage")
            message = str(system) if system else ""
        else:
            outcome, message = "error", self.stderr.strip() or f"exit code {self.exit_code}"
        return ev.HookRan(
            self.spec.event,
            self.spec.command,
            outcome,  # type: ignore[arg-type]
            self.elapsed_ms,
            self.exit_code,
            _short(message),
            self.spec.source,
            call_id,
        )


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def hook_environment(project_dir: Path) -> dict[str, str]:
    env = child_environment()
    env["WYCKOFF_PROJECT_DIR"] = str(project_dir)
    env["CLAUDE_PROJECT_DIR"] = str(project_dir)
    return env


async def run_hook(
    spec: HookSpec,
    payload: dict[str, Any],
    *,
    cwd: Path,
    env: dict[str, str],
    judge: Judge | None = None,
    agent_judge: Judge | None = None,
) -> HookResult:
    """Run one hook to its end or its timeout (then its process group is killed)."""
    started = time.monotonic()
    if spec.kind != "command":
        if spec.kind == "http":
            answer = await run_http_hook(spec, payload)
        else:  # prompt or agent: the session's model, alone or as a read-only sub-agent
            answer = await run_prompt_hook(spec, payload, judge if spec.kind == "prompt" else agent_judge)
        return HookResult(
            spec, answer.exit_code, answer.stdout, answer.stderr, _ms(started), timed_out=answer.timed_out
        )
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    try:
        process = await asyncio.create_subprocess_shell(
            spec.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        return HookResult(spec, None, "", f"cannot start the hook: {exc}", _ms(started))
    try:
        out, err = await asyncio.wait_for(process.communicate(data), spec.timeout)
    except TimeoutError:
        await _kill(process)
        return HookResult(spec, None, "", "", _ms(started), timed_out=True)
    except asyncio.CancelledError:
        await _kill(process)
        raise
    return HookResult(
        spec,
        process.returncode,
        out.decode("utf-8", "replace")[:OUTPUT_LIMIT],
        err.decode("utf-8", "replace")[:OUTPUT_LIMIT],
        _ms(started),
    )


async def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(process.wait(), 5)


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


class UserHooks(RuntimeHooks):
    """The configured hooks of one workspace, at the runtime's hook points and at the
    session's (`session_start`, `session_end`, `pre_compact`, `notification`).

    The session's facts are set by whoever builds the session: `session_id`,
    `transcript_path`, `permission_mode` (a callable: the mode can change). With
    `subagent=True` (a sub-agent's runtime) the end of a turn runs `SubagentStop`
    hooks instead of `Stop`. Events made outside a turn wait in `take_events()`."""

    def __init__(
        self,
        hooks: HookSet,
        *,
        project_dir: Path,
        cwd: Path | None = None,
        subagent: bool = False,
        max_stop_reminders: int = MAX_STOP_REMINDERS,
    ) -> None:
        self.hooks = hooks
        self.project_dir = project_dir
        self.cwd = cwd or project_dir
        self.subagent = subagent
        self.max_stop_reminders = max_stop_reminders
        self.session_id: str | None = None
        self.transcript_path: str | None = None
        self.permission_mode: Callable[[], str] = lambda: "default"
        self.judge: Judge | None = None  # the model `prompt` hooks ask (runtime/prompt_hooks.py)
        self.agent_judge: Judge | None = None  # the read-only sub-agent of `agent` hooks
        self._emit: Emit | None = None
        self._pending: list[ev.RuntimeEvent] = []
        self._context: list[str] = []  # SessionStart context for the next user message
        self._stop_blocks = 0
        self._stop_after_tools: str | None = None
        self._background: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------ running

    def active(self, event: str, value: str | None = None) -> list[HookSpec]:
        """The runnable hooks for `event` matching `value`, each command once."""
        chosen: dict[str, HookSpec] = {}
        for spec in self.hooks.runnable(event):
            if spec.matches(value):
                chosen.setdefault(spec.command, spec)
        return list(chosen.values())

    async def dispatch(
        self, event: str, fields: dict[str, Any], *, value: str | None = None, call_id: str | None = None
    ) -> list[HookResult]:
        specs = self.active(event, value)
        if not specs:
            return []
        payload = {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.cwd),
            "permission_mode": self.permission_mode(),
            "hook_event_name": event,
            **fields,
        }
        claude = claude_payload(payload) if any(s.claude for s in specs) else payload
        env = hook_environment(self.project_dir)
        results = await asyncio.gather(
            *(
                run_hook(
                    s,
                    claude if s.claude else payload,
                    cwd=self.project_dir,
                    env={**env, "CLAUDE_PLUGIN_ROOT": s.plugin_root} if s.plugin_root else env,
                    judge=self.judge,
                    agent_judge=self.agent_judge,
                )
                for s in specs
            )
        )
        for result in results:
            await self._announce(result.event(call_id))
        return list(results)

    async def _announce(self, event: ev.RuntimeEvent) -> None:
        if self._emit is not None:
            await self._emit(event)
        else:
            self._pending.append(event)

    def take_events(self) -> list[ev.RuntimeEvent]:
        """Events of hooks run outside a turn (session start or end, /compact)."""
        events, self._pending = self._pending, []
        return events

    # ------------------------------------------------------------ the runtime's hook points

    def attach(self, emit: Emit) -> None:
        self._emit = emit
        self._stop_blocks = 0
        self._stop_after_tools = None

    async def after_run(self, done: ev.TurnDone) -> None:
        self._emit = None

    async def before_run(self, user_message: Message) -> Message | None:
        for event in self.take_events():
            await self._announce(event)
        results = await self.dispatch("UserPromptSubmit", {"prompt": user_message.text})
        _raise_stop(results)
        for result in results:
            if result.blocks:
                reason = result.reason or "a UserPromptSubmit hook blocked it"
                raise StopRun(f"the prompt was blocked by a hook: {reason}")
        added = [*self._context, *(c for r in results if (c := r.context))]
        self._context = []
        if not added:
            return None
        block = "\n\n".join(f"<hook-context>\n{text}\n</hook-context>" for text in added)
        return _with_part(user_message, "\n\n" + block)

    async def decide_tool(self, call: ToolCallPart, args: dict[str, Any]) -> ToolDecision | None:
        fields = {"tool_name": call.name, "tool_input": args, "tool_use_id": call.id}
        results = await self.dispatch("PreToolUse", fields, value=call.name, call_id=call.id)
        _raise_stop(results)
        decisions: list[ToolDecision] = []
        for result in results:
            if result.exit_code == 2:
                decisions.append(ToolDecision("deny", result.reason or "a PreToolUse hook blocked it"))
                continue
            decision = _pre_tool_decision(result, call.name)
            if decision is not None:
                decisions.append(decision)
        return merge_decisions(decisions)

    async def permission_request(self, call: ToolCallPart, args: dict[str, Any]) -> ApprovalDecision | None:
        """`PermissionRequest` hooks may answer the question about to be asked: exit 2
        or `decision.behavior: "deny"` (+ `message`) refuses, `"allow"` approves, with
        `updatedInput` the changed call (checked again). Deny wins across hooks."""
        fields = {"tool_name": call.name, "tool_input": args, "tool_use_id": call.id}
        results = await self.dispatch("PermissionRequest", fields, value=call.name, call_id=call.id)
        answers = [a for r in results if (a := _permission_answer(r, call.name)) is not None]
        return next((a for a in answers if a.kind == "deny"), answers[0] if answers else None)

    async def after_tool(self, call: ToolCallPart, result: str, is_error: bool) -> str | None:
        if is_error:
            return None
        fields = {
            "tool_name": call.name,
            "tool_input": call.arguments,
            "tool_response": result,
            "tool_use_id": call.id,
        }
        results = await self.dispatch("PostToolUse", fields, value=call.name, call_id=call.id)
        stop = next((s for r in results if (s := r.stops) is not None), None)
        if stop is not None:
            self._stop_after_tools = stop  # the result is kept; the run stops before the next call
        notes = [f"[PostToolUse hook] {r.reason}" for r in results if r.blocks and r.reason]
        notes += [f"[PostToolUse hook] {c}" for r in results if (c := r.context)]
        return result + "\n\n" + "\n".join(notes) if notes else None

    async def before_model_call(self, request: Any) -> None:
        if self._stop_after_tools is not None:
            reason, self._stop_after_tools = self._stop_after_tools, None
            raise StopRun(reason)
        return None

    async def before_stop(self, text: str) -> str | None:
        event = "SubagentStop" if self.subagent else "Stop"
        results = await self.dispatch(event, {"stop_hook_active": self._stop_blocks > 0})
        if any(r.stops is not None for r in results):
            return None
        reasons = [r.reason or f"a {event} hook asks you to go on" for r in results if r.blocks]
        if not reasons:
            self._stop_blocks = 0
            return None
        if self._stop_blocks >= self.max_stop_reminders:
            await self._announce(
                ev.Notice(
                    "warning",
                    f"{event} hooks blocked the end of the turn {self._stop_blocks} times in a row; "
                    "the turn ends anyway.",
                )
            )
            self._stop_blocks = 0
            return None
        self._stop_blocks += 1
        return "\n\n".join(reasons)

    receives_deltas = False  # only approval requests matter here (the stream's hot path)

    async def on_event(self, event: ev.RuntimeEvent) -> None:
        if isinstance(event, ev.ApprovalRequested) and self.active("Notification"):
            message = f"Wyckoff needs your permission to use {event.name}"
            task = asyncio.create_task(self.notification(message, "permission_prompt"))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------ the session's hook points

    async def session_start(self, source: str) -> list[HookResult]:
        """`startup`, `resume`, `clear` or `compact`: context from the hooks goes into
        the next user message."""
        results = await self.dispatch("SessionStart", {"source": source}, value=source)
        self._context.extend(c for r in results if (c := r.context))
        return results

    async def session_end(self, reason: str) -> list[HookResult]:
        """`clear`, `exit` or `other`."""
        return await self.dispatch("SessionEnd", {"reason": reason}, value=reason)

    async def pre_compact(self, trigger: str, focus: str | None = None) -> None:
        """`manual` (/compact) or `auto`."""
        await self.dispatch(
            "PreCompact", {"trigger": trigger, "custom_instructions": focus or ""}, value=trigger
        )

    async def notification(self, message: str, kind: str = "") -> list[HookResult]:
        """`kind` is Claude Code's `notification_type` (`permission_prompt`, `idle_prompt`)."""
        fields = {"message": message, **({"notification_type": kind} if kind else {})}
        try:
            return await self.dispatch("Notification", fields, value=kind or None)
        except Exception:  # a notification must never break the turn
            log.exception("notification hook failed")
            return []

    async def aclose(self, wait: float = 5.0) -> None:
        """Let running notification hooks finish (at most `wait` seconds), then stop them."""
        tasks = set(self._background)
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=wait)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)


def _raise_stop(results: Sequence[HookResult]) -> None:
    for result in results:
        stop = result.stops
        if stop is not None:
            raise StopRun(stop)


def _pre_tool_decision(result: HookResult, tool: str) -> ToolDecision | None:
    specific = result.specific
    permission = specific.get("permissionDecision")
    reason = str(specific.get("permissionDecisionReason") or "")
    legacy = (result.output or {}).get("decision")
    if permission not in ("allow", "deny", "ask"):
        permission = {"approve": "allow", "block": "deny"}.get(str(legacy))
        reason = reason or str((result.output or {}).get("reason") or "")
    updated = specific.get("updatedInput")
    args = updated if isinstance(updated, dict) else None
    if args is not None and result.spec.claude:  # Claude Code's keys → ours, then checked as any call
        args = wyckoff_tool_input(tool, args)
    if permission is None and args is None:
        return None
    return ToolDecision(permission, reason, args)  # type: ignore[arg-type]


def _permission_answer(result: HookResult, tool: str) -> ApprovalDecision | None:
    if result.exit_code == 2:
        return ApprovalDecision.deny(result.reason or "a PermissionRequest hook refused it")
    decision = result.specific.get("decision")
    if not isinstance(decision, dict):
        return None
    behavior = decision.get("behavior")
    if behavior == "deny":
        return ApprovalDecision.deny(str(decision.get("message") or "a PermissionRequest hook refused it"))
    if behavior != "allow":
        return None
    updated = decision.get("updatedInput")
    if isinstance(updated, dict):
        args = wyckoff_tool_input(tool, updated) if result.spec.claude else updated
        return ApprovalDecision.edit(args)
    return ApprovalDecision.allow()


def _with_part(message: Message, text: str) -> Message:
    return Message(
        message.role,
        (*message.parts, TextPart(text)),
        tool_call_id=message.tool_call_id,
        tool_name=message.tool_name,
        is_error=message.is_error,
        meta=message.meta,
        id=message.id,
    )
