"""Running one round's tool calls: checks, approval, batching and results.

Calls are partitioned into groups: consecutive `concurrency_safe` calls form one group
run in parallel (at most `max_parallel` at once), every other call is a group of its
own. Within a group, each call is first checked in order (hook, unknown tool, argument
parsing and schema, doom-loop guard, policy and approval), then the approved calls
run. Results are returned in call order, every call answered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision, ApprovalResponder
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.core.messages import ImagePart, ToolCallPart
from wyckoff_cli.runtime.assembly import ArgumentsError, clean_text, parse_arguments
from wyckoff_cli.runtime.call_asks import CallAsker
from wyckoff_cli.runtime.guards import GuardPipeline, Refuser, TurnState
from wyckoff_cli.runtime.hooks import RuntimeHooks, ToolDecision, merge_decisions
from wyckoff_cli.runtime.offload import OFFLOAD_THRESHOLD, offload_result
from wyckoff_cli.storage.images import ImageStore
from wyckoff_cli.tools.background import BackgroundTaskManager
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.client_io import HostFiles, HostTerminal
from wyckoff_cli.tools.mcp.names import always_rule
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, Verdict
from wyckoff_cli.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

Emit = Callable[[ev.RuntimeEvent], Awaitable[None]]
ABORTED = "Aborted: the user interrupted the turn before this call finished."
NOT_RUN = "Not run: an earlier call in this batch was refused, so the rest of the batch was skipped."


@dataclass
class CallResult:
    call: ToolCallPart
    text: str
    is_error: bool
    display: dict[str, Any] | None = None
    offloaded_path: Path | None = None
    elapsed_ms: int = 0
    completes_run: bool = False
    proposed_args: dict[str, Any] | None = None  # set when a person edited the call before it ran
    images: tuple[ImagePart, ...] = ()  # ToolOutcome.images: parts of the tool message, beside the text
    refused_by: Refuser | None = None  # set when the call was refused, not run

    @property
    def meta(self) -> dict[str, Any]:
        """What the tool message records beside the text (never sent to the model):
        an edit by the person, and what a resumed transcript shows (time, diff)."""
        meta: dict[str, Any] = {"elapsed_ms": self.elapsed_ms}
        if self.display:
            meta["display"] = self.display
        if self.proposed_args is not None:
            meta["edited"] = {"proposed": self.proposed_args, "ran": self.call.arguments}
        return meta


@dataclass
class _Prepared:
    call: ToolCallPart
    tool: Tool
    args: dict[str, Any]
    outside: frozenset[Path] = frozenset()
    proposed_args: dict[str, Any] | None = None


def edited_note(args: dict[str, Any]) -> str:
    """The first line of an edited call's result, so the model knows what really ran."""
    shown = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    return f"[The user edited this call before it ran. It ran with these arguments: {shown}]\n"


@dataclass
class ToolCallRunner:
    registry: ToolRegistry
    policy: ApprovalPolicy
    hooks: Sequence[RuntimeHooks]
    guards: GuardPipeline
    workspace: Path
    background: BackgroundTaskManager
    results_dir: Callable[[], Path]
    tool_env: dict[str, str] | None
    max_parallel: int = 5
    offload_threshold: int = OFFLOAD_THRESHOLD
    redact: Callable[[str], str] | None = None  # for what is written to disk
    host_files: HostFiles | None = None
    host_terminal: HostTerminal | None = None
    images: ImageStore | None = None  # ToolContext.images: None when the models take no images
    answered: dict[str, CallResult] = field(default_factory=dict)

    async def run_batch(
        self, calls: Sequence[ToolCallPart], state: TurnState, emit: Emit
    ) -> list[CallResult]:
        """Run `calls`; returns one result per call, in call order."""
        self.answered = {}
        aborted_rest = False
        tools = [self.registry.get(call.name) for call in calls]
        for hook in self.hooks:  # e.g. checkpoints, before anything in the round runs
            for event in await hook.before_tool_round(calls, tools):
                await emit(event)
        for group in _partition(calls, self.registry):
            if aborted_rest:
                for call in group:
                    await self._answer(CallResult(call, NOT_RUN, True), emit)
                continue
            ready: list[_Prepared] = []
            for call in group:
                if aborted_rest:
                    await self._answer(CallResult(call, NOT_RUN, True), emit)
                    continue
                prepared, abort = await self._prepare(call, state, emit)
                aborted_rest = aborted_rest or abort
                if prepared is not None:
                    ready.append(prepared)
            await self._run_group(ready, emit)
        return [self.answered[c.id] for c in calls]

    def unanswered(self, calls: Sequence[ToolCallPart]) -> list[ToolCallPart]:
        return [c for c in calls if c.id not in self.answered]

    async def _answer(self, result: CallResult, emit: Emit) -> None:
        call = result.call
        for hook in self.hooks:
            changed = await hook.after_tool(call, result.text, result.is_error)
            if changed is not None:
                result.text = changed
        if result.proposed_args is not None:
            result.text = edited_note(call.arguments) + result.text
        result.text = clean_text(result.text)  # e.g. a file name that is not UTF-8 (assembly.py)
        self.answered[call.id] = result
        if result.is_error:
            await emit(ev.ToolFailed(call.id, call.name, result.text, result.elapsed_ms))
        else:
            await emit(
                ev.ToolSucceeded(
                    call.id,
                    call.name,
                    result.text,
                    result.elapsed_ms,
                    str(result.offloaded_path) if result.offloaded_path else None,
                    result.display,
                    [image.label for image in result.images],  # the app shows them as chips
                )
            )

    async def _prepare(
        self, call: ToolCallPart, state: TurnState, emit: Emit
    ) -> tuple[_Prepared | None, bool]:
        """Check one call; answer it with an error if it may not run.
        Returns (prepared call or None, whether the rest of the batch is aborted)."""
        for hook in self.hooks:
            changed = await hook.before_tool(call)
            if changed is not None:
                call = changed
        tool = self.registry.get(call.name)
        if tool is None:
            known = ", ".join(self.registry.names()) or "none"
            await self._answer(
                CallResult(call, f"Unknown tool {call.name!r}. Available tools: {known}.", True),
                emit,
            )
            return None, False
        args = call.arguments
        if call.raw_arguments is not None:
            try:
                args = parse_arguments(call.raw_arguments)
            except ArgumentsError as exc:
                await self._answer(CallResult(call, f"Invalid arguments for {call.name}: {exc}", True), emit)
                return None, False
        verdict = self.guards.check_call(state, call)
        if verdict is not None and verdict.refuse:
            await self._answer(CallResult(call, verdict.refuse, True, refused_by="guard"), emit)
            return None, verdict.abort_rest
        try:
            tool.check_arguments(args)
        except ToolError as exc:
            await self._answer(CallResult(call, exc.message, True), emit)
            return None, False
        decision = merge_decisions([await hook.decide_tool(call, args) for hook in self.hooks])
        if decision is not None and decision.args is not None:  # a hook changed the arguments
            problem = tool.arguments_problem(decision.args)
            if problem is not None:
                text = f"A hook changed the arguments, but they are invalid: {problem}"
                await self._answer(CallResult(call, text, True), emit)
                return None, False
            args = decision.args
            call = ToolCallPart(call.id, call.name, args, None, dict(call.extra))
        if decision is not None and decision.permission == "deny":
            reason = decision.reason or "a hook refused it"
            await emit(ev.ApprovalDecided(call.id, call.name, "auto_deny", feedback=reason))
            text = f"Not run: blocked by a hook: {reason}"
            await self._answer(CallResult(call, text, True, refused_by="hook"), emit)
            return None, False
        return await self._approve(call, tool, args, emit, decision), False

    async def _approve(
        self,
        call: ToolCallPart,
        tool: Tool,
        args: dict[str, Any],
        emit: Emit,
        hook: ToolDecision | None = None,
    ) -> _Prepared | None:
        ctx = self._context(call.id)
        verdict = await self.policy.decide(tool, args, ctx)  # off the event loop for long commands
        verdict = hooked_verdict(verdict, hook, self.policy, tool, args, ctx)
        if verdict.action == "allow":
            if tool.requires_approval:
                await emit(
                    ev.ApprovalDecided(call.id, call.name, "auto_allow", feedback=verdict.reason or None)
                )
            return _Prepared(call, tool, args)
        if verdict.action == "deny":
            await emit(ev.ApprovalDecided(call.id, call.name, "auto_deny", feedback=verdict.reason))
            await self._answer(
                CallResult(call, f"Not run: {verdict.reason}", True, refused_by="policy"), emit
            )
            return None
        preview = _safe_preview(tool, args, ctx)
        if verdict.reason:
            preview.setdefault("reason", verdict.reason)
        if "rule" in preview and preview["rule"] != verdict.rule:  # what "always" saves: the policy's word
            if verdict.rule is None:
                del preview["rule"]
            else:
                preview["rule"] = verdict.rule
        outside = frozenset(verdict.outside_paths)
        if outside:
            preview["outside_paths"] = sorted(str(p) for p in outside)
        decision = await self._permission_hooks(call, args)  # a PermissionRequest hook may answer
        if decision is None:
            responder = ApprovalResponder(tool.arguments_problem)
            await emit(
                ev.ApprovalRequested(
                    call.id,
                    call.name,
                    args,
                    preview,
                    verdict.rule,
                    verdict.reason,
                    list(tool.editable_fields),
                    responder,
                )
            )
            decision = await responder.wait()
        if decision.kind == "deny":
            await emit(ev.ApprovalDecided(call.id, call.name, "deny", feedback=decision.feedback))
            await self._answer(denied_result(call, decision), emit)
            return None
        saved = always_rule(decision.rule, verdict.rule, call.name) if decision.kind == "always" else None
        if saved:
            self.policy.remember(saved)
        proposed = None
        if decision.kind == "edit" and decision.args is not None and decision.args != args:
            proposed, args = args, decision.args
            problem = tool.arguments_problem(args)
            if problem is not None:
                await emit(ev.ApprovalDecided(call.id, call.name, "edit", args=args))
                await self._answer(
                    CallResult(call, f"The user edited the arguments, but they are invalid: {problem}", True),
                    emit,
                )
                return None
            hooked = await self._hooks_on_edited(call, tool, args, emit)
            if hooked is None:
                return None
            args = hooked
            again = await self.policy.decide(tool, args, ctx)
            if again.action == "deny":
                await emit(ev.ApprovalDecided(call.id, call.name, "auto_deny", feedback=again.reason))
                text = f"Not run: {again.reason}"
                await self._answer(CallResult(call, text, True, refused_by="policy"), emit)
                return None
            outside = outside | frozenset(again.outside_paths)
            call = ToolCallPart(call.id, call.name, args, None, dict(call.extra))
        rule = saved
        ran = args if proposed is not None else None
        await emit(ev.ApprovalDecided(call.id, call.name, decision.kind, rule=rule, args=ran))
        return _Prepared(call, tool, args, outside, proposed)

    async def _permission_hooks(self, call: ToolCallPart, args: dict[str, Any]) -> ApprovalDecision | None:
        answers = [a for hook in self.hooks if (a := await hook.permission_request(call, args)) is not None]
        return next((a for a in answers if a.kind == "deny"), answers[0] if answers else None)

    async def _hooks_on_edited(
        self, call: ToolCallPart, tool: Tool, args: dict[str, Any], emit: Emit
    ) -> dict[str, Any] | None:
        """PreToolUse again on the arguments a person edited (they are what will run):
        the arguments to run (a hook may change them), or None when the call is answered
        (a hook blocked it, or changed it into invalid arguments)."""
        edited = ToolCallPart(call.id, call.name, args, None, dict(call.extra))
        decision = merge_decisions([await hook.decide_tool(edited, args) for hook in self.hooks])
        if decision is None:
            return args
        if decision.permission == "deny":
            reason = decision.reason or "a hook refused it"
            await emit(ev.ApprovalDecided(call.id, call.name, "auto_deny", feedback=reason))
            text = f"Not run: the edited call was blocked by a hook: {reason}"
            await self._answer(CallResult(call, text, True), emit)
            return None
        if decision.args is None:
            return args  # allow or ask: the person has just approved these arguments
        problem = tool.arguments_problem(decision.args)
        if problem is not None:
            text = f"A hook changed the edited arguments, but they are invalid: {problem}"
            await emit(ev.ApprovalDecided(call.id, call.name, "auto_deny", feedback=text))
            await self._answer(CallResult(call, text, True), emit)
            return None
        return decision.args

    def _context(
        self, call_id: str, outside: frozenset[Path] = frozenset(), sink: Callable[[str], None] | None = None
    ) -> ToolContext:
        ctx = ToolContext(
            workspace=self.workspace,
            call_id=call_id,
            background=self.background,
            env=self.tool_env,
            approved_outside_paths=outside,
            extra_roots=tuple(self.policy.extra_roots),
            mode=self.policy.mode,
            host_files=self.host_files,
            host_terminal=self.host_terminal,
            read_denied=lambda path: self.policy.read_denied(path, self.workspace),
            images=self.images,
        )
        ctx.results_dir = self.results_dir()
        if self.redact is not None:
            ctx.redact = self.redact
        if sink is not None:
            ctx.emit_output = sink
        return ctx

    async def _run_group(self, group: list[_Prepared], emit: Emit) -> None:
        if not group:
            return
        outputs: asyncio.Queue[ev.RuntimeEvent] = asyncio.Queue()  # output and sub-agent events
        limit = asyncio.Semaphore(self.max_parallel)

        async def run_one(item: _Prepared) -> CallResult:
            async with limit:
                return await self._execute(item, outputs)

        for item in group:
            await emit(ev.ToolStarted(item.call.id, item.call.name, item.args, item.tool.background))
        tasks = {asyncio.create_task(run_one(item)): item for item in group}
        pending: set[asyncio.Task[Any]] = set(tasks)
        getter: asyncio.Future[ev.RuntimeEvent] | None = None
        try:
            while pending:
                getter = asyncio.ensure_future(outputs.get())
                done, _ = await asyncio.wait(pending | {getter}, return_when=asyncio.FIRST_COMPLETED)
                if getter in done:
                    await emit(getter.result())
                else:
                    getter.cancel()
                pending -= done
            while not outputs.empty():
                await emit(outputs.get_nowait())
        except asyncio.CancelledError:
            if getter is not None:
                getter.cancel()  # else it is destroyed pending when the app quits mid-call
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)
            raise
        results = {tasks_item.call.id: task.result() for task, tasks_item in tasks.items()}
        for item in group:
            await self._answer(results[item.call.id], emit)

    async def _execute(self, item: _Prepared, outputs: asyncio.Queue[ev.RuntimeEvent]) -> CallResult:
        call, tool = item.call, item.tool
        ctx = self._context(
            call.id, item.outside, lambda text: outputs.put_nowait(ev.ToolOutput(call.id, text))
        )
        ctx.emit_event = outputs.put_nowait
        ctx.ask = CallAsker(self.policy, ctx, call.id, outputs.put_nowait)  # an MCP server's sampling, ...
        started = time.monotonic()
        if tool.background:
            task = self.background.start(
                call.name, _summary(tool, item.args), lambda sink: tool.run(item.args, _with_sink(ctx, sink))
            )
            text = (
                f"Started in the background as task {task.id}. You will be told when it "
                f"finishes; meanwhile read its output with task_output(task_id={task.id!r})."
            )
            return CallResult(call, text, False, elapsed_ms=_ms(started), proposed_args=item.proposed_args)
        try:
            outcome = await tool.run(item.args, ctx)
        except ToolError as exc:
            return CallResult(
                call, exc.message, True, elapsed_ms=_ms(started), proposed_args=item.proposed_args
            )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug in a tool: the model is told, the loop goes on
            log.exception("tool %s crashed", call.name)
            return CallResult(
                call,
                f"{call.name} failed unexpectedly: {type(exc).__name__}: {exc}",
                True,
                elapsed_ms=_ms(started),
                proposed_args=item.proposed_args,
            )
        text, display = (
            (outcome.text, outcome.display) if isinstance(outcome, ToolOutcome) else (str(outcome), None)
        )
        offloaded = None
        if len(text) > self.offload_threshold:
            text, offloaded = offload_result(text, self.results_dir(), call.id, call.name, self.redact)
        images = outcome.images if isinstance(outcome, ToolOutcome) else ()
        return CallResult(
            call,
            text,
            False,
            display,
            offloaded,
            _ms(started),
            tool.completes_run,
            item.proposed_args,
            images,
        )


def denied_result(call: ToolCallPart, decision: ApprovalDecision) -> CallResult:
    """The answer to a call its approval request denied: by the person asked, or, in a
    run with no one to ask, by the host's rule (whose feedback says how to allow it)."""
    if decision.unattended:
        text = (
            decision.feedback or f"{call.name} needs approval and this run has no one to ask; it was not run."
        )
        return CallResult(call, text, True, refused_by="no_approver")
    text = f"The user denied this {call.name} call; it was not run."
    if decision.feedback:
        text += f" Their feedback: {decision.feedback}"
    return CallResult(call, text, True, refused_by="user")


def hooked_verdict(
    verdict: Verdict,
    hook: ToolDecision | None,
    policy: ApprovalPolicy,
    tool: Tool,
    args: dict[str, Any],
    ctx: ToolContext,
) -> Verdict:
    """The policy's verdict after a hook's `allow` or `ask`: `ask` asks where the
    policy allowed; `allow` skips an ordinary question (one "always" could answer), never
    a deny or the questions asked in every mode (outside paths, destructive commands)."""
    if hook is None:
        return verdict
    reason = hook.reason or "a hook asks for approval"
    if hook.permission == "ask" and verdict.action == "allow":
        return Verdict(
            "ask", reason, policy.saveable_rule(tool, args, ctx) if tool.requires_approval else None
        )
    if hook.permission == "allow" and verdict.action == "ask" and verdict.rule is not None:
        return Verdict("allow", hook.reason or "allowed by a hook")
    return verdict


def _partition(calls: Sequence[ToolCallPart], registry: ToolRegistry) -> list[list[ToolCallPart]]:
    """Consecutive concurrency-safe calls share a group; every other call is alone."""
    groups: list[list[ToolCallPart]] = []
    previous_safe = False
    for call in calls:
        tool = registry.get(call.name)
        safe = tool is not None and tool.concurrency_safe_for(call.arguments)
        if safe and previous_safe:
            groups[-1].append(call)
        else:
            groups.append([call])
        previous_safe = safe
    return groups


def _safe_preview(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if tool.preview is None:
        return {"kind": "args"}
    try:
        return dict(tool.preview(args, ctx))
    except Exception as exc:  # a preview must never stop the approval itself
        log.warning("preview of %s failed: %s", tool.name, exc)
        return {"kind": "args", "error": str(exc)}


def _summary(tool: Tool, args: dict[str, Any]) -> str:
    if tool.summary_arg and isinstance(args.get(tool.summary_arg), str):
        return str(args[tool.summary_arg])[:200]
    return tool.name


def _with_sink(ctx: ToolContext, sink: Callable[[str], None]) -> ToolContext:
    ctx.emit_output = sink
    return ctx


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)
