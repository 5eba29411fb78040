"""AgentRuntime: one user message in, a stream of `RuntimeEvent`s out.

The runtime is stateless between turns: `run_stream` gets the session's
`Conversation` (it appends each final message through it, and also announces it with
a `message` event), the tools and the settings, runs the turn to its end and returns.
The session above it owns the conversation and persistence. Approvals travel on the
event stream: an `approval_request` carries the responder the host answers through.
See docs/ARCHITECTURE.md for the turn's steps.

The turn runs in a producer task that feeds a queue; the generator yields from it.
Cancelling the consumer (or `AbortSignal.abort()`) cancels the producer, which closes
the provider stream, cancels running tools, answers every outstanding tool call as
aborted and ends with `done(reason="aborted")`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.context.hooks import ContextHooks
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.abort import AbortSignal as AbortSignal  # re-exported: hosts import it from core/
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.errors import BadRequest, ImageError, ProviderError, StopRun
from wyckoff_cli.core.messages import Message, TextPart, ToolCallPart
from wyckoff_cli.providers.base import (
    FallbackChunk,
    LLMProvider,
    RetryChunk,
    ServerToolChunk,
    StopChunk,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
    UsageChunk,
)
from wyckoff_cli.providers.registry import vendor_of
from wyckoff_cli.runtime.assembly import ResponseAssembler, clean_chunk
from wyckoff_cli.runtime.event_queue import EventQueue
from wyckoff_cli.runtime.expectation import resolve_turn_expectation
from wyckoff_cli.runtime.guards import (
    DoomLoopGuard,
    GuardPipeline,
    RequiredToolsGuard,
    RoundLimitGuard,
    TurnState,
)
from wyckoff_cli.runtime.hooks import ModelRequest, RuntimeHooks, event_listeners
from wyckoff_cli.runtime.image_support import ImageSupport, image_refusal, refuse_before_sending
from wyckoff_cli.runtime.mentions import attach_mentioned_images
from wyckoff_cli.runtime.offload import OFFLOAD_THRESHOLD
from wyckoff_cli.runtime.repeats import RepeatGuard
from wyckoff_cli.runtime.stop_reasons import StopReasonReview
from wyckoff_cli.runtime.tally import CallPricer, ResentShares, TurnTally
from wyckoff_cli.runtime.tool_calls import ABORTED, CallResult, ToolCallRunner
from wyckoff_cli.storage.images import ImageStore
from wyckoff_cli.tools.background import BackgroundTask, BackgroundTaskManager
from wyckoff_cli.tools.client_io import HostFiles, HostTerminal
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy
from wyckoff_cli.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

_END = object()


@dataclass(frozen=True, slots=True)
class RuntimeSettings:
    max_tool_rounds: int = 15
    max_parallel_tools: int = 5
    offload_threshold: int = OFFLOAD_THRESHOLD
    loop_guard_retries: int = 2
    doom_loop_repeats: int = 3
    doom_loop_window: int = 6


@dataclass
class _Turn:
    conversation: Conversation
    queue: EventQueue
    state: TurnState
    runner: ToolCallRunner
    listeners: list[RuntimeHooks] = field(default_factory=list)  # hooks with an on_event
    delta_listeners: list[RuntimeHooks] = field(default_factory=list)  # ... that want deltas too
    rounds: int = 0
    tally: TurnTally = field(default_factory=TurnTally)  # usage and cost, children's included
    streaming: ResponseAssembler | None = None
    pending_calls: Sequence[ToolCallPart] = ()
    last_text: str = ""
    stops: StopReasonReview = field(default_factory=StopReasonReview)
    aborted_before: bool = False  # the abort signal fired before the turn started


class AgentRuntime:
    def __init__(
        self,
        provider: LLMProvider,
        tools: ToolRegistry,
        *,
        workspace: Path,
        policy: ApprovalPolicy | None = None,
        settings: RuntimeSettings | None = None,
        hooks: Iterable[RuntimeHooks] = (),
        context: ContextHooks | None = None,
        background: BackgroundTaskManager | None = None,
        results_dir: Path | None = None,
        tool_env: Mapping[str, str] | None = None,
        redact: Callable[[str], str] | None = None,
        host_files: HostFiles | None = None,
        host_terminal: HostTerminal | None = None,
        images: ImageStore | None = None,
        attachments: ImageStore | None = None,
        image_support: ImageSupport | None = None,
        price: CallPricer | None = None,
    ) -> None:
        self.provider = provider
        self.tools = tools
        self.workspace = workspace.resolve()
        self.policy = policy or ApprovalPolicy()
        self.settings = settings or RuntimeSettings()
        self.hooks = list(hooks)
        self.context = context or ContextHooks()
        self.background = background or BackgroundTaskManager()
        self._results_dir = results_dir
        self.tool_env = dict(tool_env) if tool_env is not None else None
        self.redact = redact  # removes secrets from what is written to disk (offloaded results)
        self.host_files = host_files  # an editor's files and terminal, when the host offers them
        self.host_terminal = host_terminal
        self.images = images  # the session's image store, for tools when the models take images
        self.attachments = attachments  # where `@image.png` mentions are kept (None: not attached)
        self.image_support = image_support  # which models may be sent images (runtime/image_support.py)
        self.price = price  # (model, usage) -> USD: `done.cost_usd`
        self._resent = ResentShares()  # each usage event's `resent`

    @property
    def results_dir(self) -> Path:
        """Where large results are offloaded (a private temp folder if none was given)."""
        if self._results_dir is None:
            self._results_dir = Path(tempfile.mkdtemp(prefix="wyckoff-results-"))
        return self._results_dir

    async def close(self) -> None:
        """Stop every background task and close the provider's HTTP clients (call when
        the session closes; a later call recreates a client)."""
        await self.background.stop_all()
        close_provider = getattr(self.provider, "aclose", None)
        if close_provider is not None:
            await close_provider()

    async def compact(
        self, conversation: Conversation, system_prompt: str, focus: str | None = None
    ) -> ev.Compacted | None:
        """Compact the conversation now (`/compact [focus]`, between turns), with the
        context hooks; returns the `compaction` event, or None if nothing was done."""
        compaction = await self.context.compact(
            conversation, system_prompt, self.tools.specs(), self.provider, focus
        )
        if compaction is None:
            return None
        conversation.replace_all(compaction.messages, archive_path=compaction.event.archive_path)
        await self.announce(compaction.event)
        return compaction.event

    async def announce(self, event: ev.RuntimeEvent) -> None:
        """Tell the hooks about an event made outside a turn (a `/compact` and its
        usage), as they are told about every event of a turn."""
        for hook in self.hooks:
            await hook.on_event(event)

    def side_usage(self) -> ev.UsageReported | None:
        """One `usage` event for all of the context manager's own calls since the last
        time (their total, on the session's model), or None; `side_events` tells them apart."""
        usage = self.context.take_side_usage()
        if usage is None:
            return None
        return ev.UsageReported.from_usage(self.provider.name, usage, purpose="compaction")

    def side_events(self) -> list[ev.RuntimeEvent]:
        """The context manager's own model calls (compaction summary, memory flush)
        since the last time: a notice for a small model that failed, then one `usage`
        event per purpose, naming the model that served it."""
        events: list[ev.RuntimeEvent] = [ev.Notice("warning", text) for text in self.context.take_notices()]
        for call in self.context.take_side_calls():
            model = call.model or self.provider.name
            events.append(ev.UsageReported.from_usage(model, call.usage, purpose=call.purpose))
        return events

    async def run_stream(
        self,
        conversation: Conversation,
        user_message: str | Message,
        *,
        system_prompt: str = "",
        required_tools: Iterable[str] = (),
        abort: AbortSignal | None = None,
    ) -> AsyncIterator[ev.RuntimeEvent]:
        message = Message.user(user_message) if isinstance(user_message, str) else user_message
        if self.attachments is not None:
            try:
                message = attach_mentioned_images(message, self.workspace, self.attachments)
            except ImageError as exc:  # nothing is sent; the prompt is the host's to keep
                yield ev.TurnFailed("image", exc.message)
                yield ev.TurnDone("", "error", 0)
                return
        queue = EventQueue()
        expectation = resolve_turn_expectation(
            str(message.meta.get("typed", message.text)),  # not what was attached (`!command` output)
            self.workspace,
            required_tools=required_tools,
            tool_kinds={tool.name: tool.kind for tool in self.tools},
        )
        guards = GuardPipeline(
            [
                RoundLimitGuard(self.settings.max_tool_rounds),
                DoomLoopGuard(self.settings.doom_loop_repeats, self.settings.doom_loop_window),
                RepeatGuard(),
                RequiredToolsGuard(expectation, self.settings.loop_guard_retries),
            ]
        )
        runner = ToolCallRunner(
            registry=self.tools,
            policy=self.policy,
            hooks=self.hooks,
            guards=guards,
            workspace=self.workspace,
            background=self.background,
            results_dir=lambda: self.results_dir,
            tool_env=self.tool_env,
            max_parallel=self.settings.max_parallel_tools,
            offload_threshold=self.settings.offload_threshold,
            redact=self.redact,
            host_files=self.host_files,
            host_terminal=self.host_terminal,
            images=self.images,
        )
        turn = _Turn(
            conversation,
            queue,
            TurnState(),
            runner,
            *event_listeners(self.hooks),
            tally=TurnTally(self.price),
        )
        producer = asyncio.create_task(self._drive(turn, message, system_prompt, guards))
        # A signal aborted before the turn (Esc while the host waited for an MCP server)
        # is not a cancel: a task cancelled before its first step would end without its
        # `done`. The turn sees it after committing the message (`_run_turn`).
        turn.aborted_before = abort is not None and abort.aborted
        unsubscribe = abort.subscribe(producer.cancel) if abort is not None and not abort.aborted else None
        try:
            while True:
                await queue.wait()
                while not queue.empty():  # the batch: everything put since the last wake-up
                    item = queue.get_nowait()
                    if item is _END:
                        return
                    yield item
        except asyncio.CancelledError:
            # The consumer was cancelled: end the turn cleanly and deliver its last events.
            producer.cancel()
            await asyncio.wait({producer})
            while not queue.empty():
                item = queue.get_nowait()
                if item is _END:
                    break
                yield item
        finally:
            if unsubscribe is not None:
                unsubscribe()
            if not producer.done():
                producer.cancel()
                await asyncio.wait({producer})

    # ------------------------------------------------------------------ the turn

    async def _emit(self, turn: _Turn, event: ev.RuntimeEvent) -> None:
        turn.tally.observe(event)
        for hook in turn.listeners:
            await hook.on_event(event)
        turn.queue.put_nowait(event)

    async def _emit_delta(self, turn: _Turn, event: ev.TextDelta | ev.ThinkingDelta) -> None:
        for hook in turn.delta_listeners:
            await hook.on_event(event)
        turn.queue.put_nowait(event)

    async def _commit(self, turn: _Turn, message: Message) -> None:
        turn.conversation.append(message)
        await self._emit(turn, ev.MessageCommitted(message.to_dict()))

    async def _drive(self, turn: _Turn, message: Message, system_prompt: str, guards: GuardPipeline) -> None:
        try:
            try:
                reason, text = await self._run_turn(turn, message, system_prompt, guards)
            except StopRun as stop:
                await self._settle(turn, f"Not run: the run was stopped ({stop.reason}).")
                await self._emit(turn, ev.Notice("warning", f"Run stopped: {stop.reason}"))
                reason, text = "budget" if stop.done_reason == "budget" else "stopped", turn.last_text
            except ProviderError as exc:
                await self._settle(turn, ABORTED)
                await self._emit(turn, ev.TurnFailed(exc.kind, exc.message, exc.retryable))
                reason, text = "error", turn.last_text
            except asyncio.CancelledError:
                await self._settle(turn, ABORTED)
                reason, text = "aborted", turn.last_text
            except Exception as exc:  # a bug: report it as a failed turn, keep history valid
                log.exception("turn failed")
                await self._settle(turn, ABORTED)
                await self._emit(turn, ev.TurnFailed("internal", f"{type(exc).__name__}: {exc}"))
                reason, text = "error", turn.last_text
            try:  # the turn's last calls (a title), counted in its totals
                for hook in self.hooks:
                    for event in await hook.before_done(reason, text):
                        await self._emit(turn, event)
            except asyncio.CancelledError:  # Esc while a title was made: the turn still ends
                pass
            tally = turn.tally
            done = ev.TurnDone(
                text, reason, turn.rounds, tally.usage.to_dict(), turn.stops.last, tally.rounded_cost
            )
            await self._emit(turn, done)
            for hook in self.hooks:
                await hook.after_run(done)
        except (StopRun, asyncio.CancelledError):
            pass
        except Exception:
            log.exception("error while ending a turn")
        finally:
            turn.queue.put_nowait(_END)

    async def _settle(self, turn: _Turn, answer: str) -> None:
        """Leave the history valid after an interruption: keep partial text, answer
        every outstanding tool call."""
        if turn.streaming is not None:
            text = turn.streaming.text
            turn.streaming = None
            if text:
                turn.last_text = text
                await self._commit(turn, Message("assistant", (TextPart(text),), meta={"interrupted": True}))
        for call in turn.runner.unanswered(turn.pending_calls):
            result = CallResult(call, answer, True)
            turn.runner.answered[call.id] = result
            await self._emit(turn, ev.ToolFailed(call.id, call.name, answer))
            await self._commit(turn, Message.tool_result(call.id, call.name, answer, is_error=True))
        turn.pending_calls = ()

    async def _run_turn(
        self, turn: _Turn, message: Message, system_prompt: str, guards: GuardPipeline
    ) -> tuple[ev.DoneReason, str]:
        for hook in self.hooks:
            hook.attach(lambda event: self._emit(turn, event))
        for hook in self.hooks:
            changed = await hook.before_run(message)
            if changed is not None:
                message = changed
        message = await self.context.prepare_user_message(message, turn.conversation)
        await self._commit(turn, message)
        if turn.aborted_before:
            raise asyncio.CancelledError  # ends as "aborted", like Esc right after Enter
        system_prompt = self.context.refresh_system_prompt(system_prompt)
        specs = self.tools.specs()
        while True:
            turn.rounds += 1
            await self._deliver_background_updates(turn)
            compaction = await self.context.maybe_compact(
                turn.conversation, system_prompt, specs, self.provider
            )
            if compaction is not None:
                turn.conversation.replace_all(compaction.messages, archive_path=compaction.event.archive_path)
                system_prompt = self.context.refresh_system_prompt(system_prompt)
                await self._emit(turn, compaction.event)
                for side in self.side_events():
                    await self._emit(turn, side)
            request = ModelRequest(system_prompt, tuple(turn.conversation), tuple(specs), turn.rounds)
            for hook in self.hooks:
                changed_request = await hook.before_model_call(request)
                if changed_request is not None:
                    request = changed_request
            assistant = await self._model_round(turn, request)
            for hook in self.hooks:
                changed_message = await hook.after_model_call(assistant)
                if changed_message is not None:
                    assistant = changed_message
            if assistant.parts:
                await self._commit(turn, assistant)
            turn.last_text = turn.stops.full_text(assistant.text) or turn.last_text
            stop = turn.stops.review(assistant)  # output limit, truncated call, safety stop
            if stop is not None:
                for event in stop.events:
                    await self._emit(turn, event)
                for extra in stop.messages:
                    await self._commit(turn, extra)
                if stop.then != "proceed":
                    if stop.then == "continue":
                        continue
                    return "completed", turn.last_text
            calls = assistant.tool_calls
            if not calls:
                verdict = guards.check_final(turn.state, assistant.text)
                if verdict is None:
                    reminder = await self._stop_reminder(assistant.text)
                    if reminder:  # a Stop hook makes the turn go on
                        await self._commit(turn, Message.user(reminder, synthetic="stop_hook"))
                        continue
                    return "completed", turn.stops.full_text(assistant.text)
                if verdict.unreliable:
                    names = ", ".join(req.describe() for req in verdict.missing)
                    await self._emit(
                        turn,
                        ev.Notice(
                            "warning",
                            verdict.warning
                            or "This answer may be unreliable: the model did not call the tools it "
                            f"needed after {turn.state.retries} reminders ({names}).",
                        ),
                    )
                    return "unreliable", assistant.text
                turn.state.retries += 1
                missing = [req.tool or req.kind or "" for req in verdict.missing]
                retry_text = verdict.retry_message or ""
                retry = ev.RetryInjected(
                    turn.state.retries,
                    missing,
                    retry_text,
                    verdict.reason,
                    self.settings.loop_guard_retries,
                    list(verdict.calls),
                )
                await self._emit(turn, retry)
                note = Message.user(retry_text, synthetic="loop_guard", notice=retry.notice)  # core/shown.py
                await self._commit(turn, note)
                continue
            turn.pending_calls = calls
            await self._emit(
                turn,
                ev.ToolCallsReceived([{"id": c.id, "name": c.name, "args": c.arguments} for c in calls]),
            )
            turn.state.tool_rounds += 1
            limit = guards.check_round(turn.state)
            if limit is not None and limit.stop:
                await self._settle(turn, limit.message)
                return "max_tool_rounds", turn.last_text
            results = await turn.runner.run_batch(calls, turn.state, lambda e: self._emit(turn, e))
            looping: str | None = None
            for result in results:
                seen = guards.check_result(turn.state, result.call, result.text, result.refused_by)
                text = result.text if seen is None or seen.note is None else f"{result.text}\n\n{seen.note}"
                await self._commit(
                    turn,
                    Message.tool_result(
                        result.call.id,
                        result.call.name,
                        text,
                        is_error=result.is_error,
                        images=result.images,
                        **result.meta,
                    ),
                )
                turn.state.record_result(result.call, result.text, result.is_error, result.refused_by)
                looping = looping or (seen.stop if seen is not None else None)
            turn.pending_calls = ()
            if looping is not None:
                await self._emit(turn, ev.Notice("warning", looping))
                return "loop", turn.last_text
            finisher = next((r for r in results if r.completes_run and not r.is_error), None)
            if finisher is not None:
                return "completed_by_tool", finisher.text

    async def _stop_reminder(self, text: str) -> str:
        reminders = [r for hook in self.hooks if (r := await hook.before_stop(text))]
        return "\n\n".join(reminders)

    async def _model_round(self, turn: _Turn, request: ModelRequest) -> Message:
        model = self.provider.name
        await self._emit(turn, ev.ModelStart(request.round, model))
        assembler = ResponseAssembler(provider=_vendor(model))
        turn.streaming = assembler
        thinking_started: float | None = None
        thinking_ms = 0
        with_images = refuse_before_sending(self.image_support, model, request.messages)
        stream = self.provider.chat_stream(request.messages, request.tools, request.system_prompt)
        try:
            async for received in stream:
                chunk = clean_chunk(received)  # lone surrogates → U+FFFD, before any event
                if isinstance(chunk, TextChunk):
                    if thinking_started is not None:
                        thinking_ms += _ms_since(thinking_started)
                        thinking_started = None
                    assembler.add(chunk)
                    if chunk.text:
                        if turn.delta_listeners:  # else no await per delta: the hot path
                            await self._emit_delta(turn, ev.TextDelta(chunk.text))
                        else:
                            turn.queue.put_nowait(ev.TextDelta(chunk.text))
                elif isinstance(chunk, ThinkingChunk):
                    if thinking_started is None and chunk.text:
                        thinking_started = time.monotonic()
                    assembler.add(chunk)
                    if chunk.text:
                        if turn.delta_listeners:
                            await self._emit_delta(turn, ev.ThinkingDelta(chunk.text))
                        else:
                            turn.queue.put_nowait(ev.ThinkingDelta(chunk.text))
                elif isinstance(chunk, ToolCallChunk):
                    assembler.add(chunk)
                elif isinstance(chunk, UsageChunk):
                    self.context.record_usage(chunk.usage)
                    usage = ev.UsageReported.from_usage(chunk.model or model, chunk.usage)
                    resent = self._resent.of(request.messages)
                    await self._emit(turn, dataclasses.replace(usage, resent=resent))
                elif isinstance(chunk, ServerToolChunk | StopChunk):
                    assembler.add(chunk)
                    if isinstance(chunk, ServerToolChunk):
                        sources = [dict(s) for s in chunk.sources]
                        await self._emit(
                            turn, ev.ServerToolUsed(chunk.name, chunk.summary, _vendor(model), sources)
                        )
                elif isinstance(chunk, FallbackChunk | RetryChunk):
                    discarded = assembler.text
                    model = chunk.to_model if isinstance(chunk, FallbackChunk) else model
                    assembler = ResponseAssembler(provider=_vendor(model))
                    turn.streaming = assembler
                    thinking_started, thinking_ms = None, 0
                    if isinstance(chunk, RetryChunk):
                        retry = (chunk.model, chunk.attempt, chunk.attempts, chunk.delay, chunk.error)
                        waits = (discarded, chunk.waited, chunk.limit, chunk.fallback)
                        await self._emit(turn, ev.Retrying(*retry, *waits))
                    else:
                        await self._emit(
                            turn,
                            ev.FallbackSwitched(chunk.from_model, chunk.to_model, chunk.error, discarded),
                        )
        except BadRequest as exc:
            refused = image_refusal(self.image_support, with_images, exc, model)
            if refused is None:
                raise
            raise refused from None
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
        if thinking_started is not None:
            thinking_ms += _ms_since(thinking_started)
        thinking = assembler.thinking_text
        if thinking:
            await self._emit(turn, ev.ThinkingDone(thinking, thinking_ms))
        turn.streaming = None
        meta: dict[str, Any] = {"model": model}
        if thinking:
            meta["thinking_ms"] = thinking_ms  # a resumed transcript shows how long it took
        if assembler.stop is not None:
            meta.update(stop_reason=assembler.stop.reason, stop_raw=assembler.stop.raw)
        return Message("assistant", tuple(assembler.parts()), meta=meta)

    async def _deliver_background_updates(self, turn: _Turn) -> None:
        finished = self.background.drain_finished()
        if not finished:
            return
        for task in finished:
            await self._emit(
                turn, ev.BackgroundTaskUpdate(task.id, task.status, task.name, task.summary, task.exit_code)
            )
        note = "\n\n".join(_background_note(task) for task in finished)
        await self._commit(turn, Message.user(note, synthetic="background"))


def _background_note(task: BackgroundTask) -> str:
    tail, _ = task.text_since(0)
    tail = tail[-2_000:]
    code = f" with exit code {task.exit_code}" if task.exit_code is not None else ""
    lines = [f"<background-task-update>Task {task.id} ({task.name}: {task.summary}) {task.status}{code}."]
    if task.result:
        lines.append(f"Result: {task.result[:2_000]}")
    if tail:
        lines.append(f"Output tail:\n{tail}")
    lines.append(f"Full output: task_output(task_id={task.id!r}).</background-task-update>")
    return "\n".join(lines)


def _vendor(model: str) -> str:
    return vendor_of(model)


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def child_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for tool child processes: secrets removed (tools/process.py)."""
    from wyckoff_cli.tools.process import child_env

    return child_env(base)
