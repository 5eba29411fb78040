"""`ContextManager`: the runtime's context hooks — system prompt, recall, compaction.

One per session. The composition root builds it with plain values (context window,
max output, paths, the memory store, the archive callback) and hands it to
`AgentRuntime(context=...)`; the runtime calls it at its hook points:

- `prepare_user_message`: memory recall (SPEC `build_memory_context` and
  `prepend_memory_context`). The `<relevant-memories>` block becomes the first part
  of the user message, which is then stored as sent (never removed afterwards, so
  later requests share the same prefix). Memories already shown earlier in the
  history are not repeated.
- `maybe_compact`: estimate the request; above the threshold, work out a compaction
  (the new history and its `compaction` event) for the runtime to apply to the
  conversation.
- `record_usage`: calibrate the estimator from the provider's real `input_tokens`.
- `refresh_system_prompt`: after a compaction the project instructions are re-read
  and the managed system prompt is rebuilt (the cache is cold then anyway).
- `compact`: manual `/compact [focus]` (via `AgentRuntime.compact`).
"""

from __future__ import annotations

import logging
import math
import sqlite3
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path

from wyckoff_cli.context.compaction import (
    ArchiveFn,
    CompactionResult,
    CompactionSettings,
    compact_history,
    compaction_threshold,
    is_synthetic,
)
from wyckoff_cli.context.hooks import Compaction, ContextHooks, SideCall
from wyckoff_cli.context.instructions import ProjectInstructions
from wyckoff_cli.context.memory import Memory, MemoryStore, format_memories
from wyckoff_cli.context.memory_tool import remember_tool
from wyckoff_cli.context.prompt import SystemPromptBuilder
from wyckoff_cli.context.tokens import TokenEstimator
from wyckoff_cli.core.events import Compacted
from wyckoff_cli.core.messages import Message, TextPart, ToolSpec
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.providers.routed import SmallModelRoute
from wyckoff_cli.tools.base import Tool

log = logging.getLogger(__name__)

SessionId = Callable[[], str | None] | str | None
SUMMARY_CALL_RESERVE = 4_000  # tokens of a summary call's window kept for its prompt and answer


class ContextManager(ContextHooks):
    """Context management for one session. Every argument is a plain value or a
    callback; nothing global is read.

    - `context_window`, `max_output`: from the model facts; `reserve_tokens`
      overrides the default reserve (see `compaction_threshold`).
    - `prompt`: builds the system prompt; `reload_instructions` re-reads AGENTS.md
      after a compaction.
    - `memory`, `project_root`: the memory store and the project memories belong to.
    - `archive`: `archive(before, after)` saves the replaced messages and returns
      where (`SessionRecorder.record_compaction`; may be set once the session
      exists); `session_id`: recorded on memories saved by the flush.
    - `tail_fraction`: share of the threshold kept verbatim after a compaction.
    """

    def __init__(
        self,
        *,
        context_window: int,
        max_output: int | None = None,
        reserve_tokens: int | None = None,
        prompt: SystemPromptBuilder | None = None,
        reload_instructions: Callable[[], ProjectInstructions] | None = None,
        memory: MemoryStore | None = None,
        project_root: Path | None = None,
        archive: ArchiveFn | None = None,
        session_id: SessionId = None,
        estimator: TokenEstimator | None = None,
        tail_fraction: float = 0.25,
        recall_limit: int = 5,
        recall_chars: int = 2_000,
        routes: Mapping[str, SmallModelRoute] | None = None,
    ) -> None:
        self.context_window = context_window
        self.max_output = max_output
        self.reserve_tokens = reserve_tokens
        self.prompt = prompt
        self.reload_instructions = reload_instructions
        self.memory = memory
        self.project_root = project_root
        self.archive = archive
        self.session_id = session_id
        self.estimator = estimator or TokenEstimator()
        self.tail_fraction = tail_fraction
        self.recall_limit = recall_limit
        self.recall_chars = recall_chars
        self.routes = dict(routes or {})  # `[routing]`: purpose -> the small model for it
        self._side_calls: list[SideCall] = []
        self.last_compaction: CompactionResult | None = None
        self._side_usage: Usage | None = None
        self._system_prompt: str | None = None
        self.prompt_append = (
            ""  # a host's text after the built prompt (the Python API's system_prompt_append)
        )
        self._superseded: set[str] = set()
        self._last_raw_estimate = 0
        # told before every compaction ("auto" or "manual", the focus): PreCompact hooks
        self.before_compact: Callable[[str, str | None], Awaitable[None]] | None = None

    def tools(self) -> list[Tool]:
        """The tools context management adds: `remember` when memory is on."""
        if self.memory is None or self.project_root is None:
            return []
        return [remember_tool(self.memory, self.project_root, session_id=self._session_id)]

    def _session_id(self) -> str | None:
        return self.session_id() if callable(self.session_id) else self.session_id

    # ------------------------------------------------------------- the numbers

    @property
    def threshold(self) -> int:
        return compaction_threshold(self.context_window, self.max_output, self.reserve_tokens)

    def set_model(self, context_window: int, max_output: int | None) -> None:
        """The user switched models: new window, and the calibration starts over."""
        self.context_window = context_window
        self.max_output = max_output
        self.estimator.ratio = 1.0

    # ---------------------------------------------------------- system prompt

    @property
    def system_prompt(self) -> str:
        """The session's system prompt, built once (empty without a builder)."""
        if self._system_prompt is None:
            built = self.prompt.build() if self.prompt is not None else ""
            self._system_prompt = f"{built}\n\n{self.prompt_append}" if self.prompt_append else built
        return self._system_prompt

    def rebuild_system_prompt(self, *, reload_instructions: bool = True) -> str:
        """Build the prompt again (after the user changed the model, the mode or the
        instructions). Returns the new prompt; the old one is superseded."""
        if self.prompt is None:
            return self.system_prompt
        if reload_instructions and self.reload_instructions is not None:
            try:
                self.prompt = self.prompt.with_instructions(self.reload_instructions())
            except OSError as exc:
                log.warning("could not re-read the project instructions: %s", exc)
        old = self._system_prompt
        built = self.prompt.build()
        self._system_prompt = f"{built}\n\n{self.prompt_append}" if self.prompt_append else built
        if old is not None and old != self._system_prompt:
            self._superseded.add(old)
        return self._system_prompt

    def refresh_system_prompt(self, system_prompt: str) -> str:
        if system_prompt in self._superseded:
            return self.system_prompt
        return system_prompt

    # ------------------------------------------------------------------ memory

    async def prepare_user_message(self, message: Message, history: Sequence[Message]) -> Message:
        if self.memory is None or is_synthetic(message):
            return message
        query = message.text.strip()
        if not query:
            return message
        shown = {i for m in history for i in m.meta.get("memory_ids", ()) if isinstance(i, int)}
        try:
            memories = self.memory.recall(
                query,
                project=self.project_root,
                limit=self.recall_limit,
                max_chars=self.recall_chars,
                exclude=shown,
            )
        except sqlite3.Error as exc:
            log.warning("memory recall failed: %s", exc)
            return message
        if not memories:
            return message
        return with_memories(message, memories)

    # -------------------------------------------------------------- compaction

    def take_side_usage(self) -> Usage | None:
        usage, self._side_usage = self._side_usage, None
        self._side_calls = []
        return usage

    def take_side_calls(self) -> list[SideCall]:
        calls, self._side_calls = self._side_calls, []
        self._side_usage = None
        return calls

    def take_notices(self) -> list[str]:
        return [notice for route in self.routes.values() for notice in route.take_notices()]

    def _routed(self, purpose: str, provider: LLMProvider) -> LLMProvider | None:
        route = self.routes.get(purpose)
        return route.over(provider) if route is not None else None

    def record_usage(self, usage: Usage) -> None:
        if self._last_raw_estimate and usage.input_tokens:
            self.estimator.calibrate(self._last_raw_estimate, usage.input_tokens)

    async def maybe_compact(
        self,
        history: Sequence[Message],
        system_prompt: str,
        tools: list[ToolSpec],
        provider: LLMProvider,
    ) -> Compaction | None:
        estimate = self.estimator.request(system_prompt, tools, history)
        self._last_raw_estimate = estimate.raw
        if estimate.total <= self.threshold:
            return None
        return await self._compact(history, system_prompt, tools, provider, focus=None, force=False)

    async def compact(
        self,
        history: Sequence[Message],
        system_prompt: str,
        tools: list[ToolSpec],
        provider: LLMProvider,
        focus: str | None = None,
    ) -> Compaction | None:
        """Manual compaction (`/compact [focus]`), whatever the size; None when there
        is nothing to compact."""
        return await self._compact(history, system_prompt, tools, provider, focus=focus, force=True)

    async def _compact(
        self,
        history: Sequence[Message],
        system_prompt: str,
        tools: Sequence[ToolSpec],
        provider: LLMProvider,
        *,
        focus: str | None,
        force: bool,
    ) -> Compaction | None:
        if self.before_compact is not None:
            await self.before_compact("manual" if force else "auto", focus)
        before = self.estimator.request(system_prompt, tools, history)
        ratio = self.estimator.ratio
        threshold = self.threshold
        fixed = math.ceil((before.system + before.tools) * ratio)

        def count(messages: Sequence[Message]) -> int:
            return math.ceil(self.estimator.messages(messages) * ratio)

        settings = CompactionSettings(
            tail_tokens=max(1, int(threshold * self.tail_fraction)),
            # the summary call's own window: room for its prompt and its answer
            transcript_tokens=max(1_000, int((self.context_window - SUMMARY_CALL_RESERVE) / ratio)),
            target_tokens=max(1_000, int(threshold * 0.6) - fixed),
        )
        result = await compact_history(
            history,
            provider=self._routed("compaction", provider) or provider,
            flush_provider=self._routed("memory_flush", provider),
            count=count,
            settings=settings,
            archive=self.archive,
            memory=self.memory,
            project=self.project_root,
            session_id=self._session_id(),
            focus=focus,
            force=force,
        )
        if result is None:
            if not force:
                log.warning(
                    "the request (~%d tokens) is over the compaction threshold (%d) but nothing can be "
                    "compacted",
                    before.total,
                    threshold,
                )
            return None
        self.last_compaction = result
        if result.usage.input_tokens or result.usage.output_tokens:
            self._side_usage = result.usage if self._side_usage is None else self._side_usage + result.usage
            self._side_calls += [SideCall(model, usage, purpose) for model, usage, purpose in result.calls]
        self.rebuild_system_prompt()
        after = self.estimator.request(self.refresh_system_prompt(system_prompt), tools, result.messages)
        self._last_raw_estimate = after.raw
        event = Compacted(
            before_messages=len(history),
            after_messages=len(result.messages),
            before_tokens=before.total,
            after_tokens=after.total,
            method=result.method,
            archive_path=str(result.archive_path) if result.archive_path else None,
        )
        return Compaction(result.messages, event)


def with_memories(message: Message, memories: Sequence[Memory]) -> Message:
    """`message` with the `<relevant-memories>` block as its first part and the ids in
    `meta["memory_ids"]` (a UI may hide part 0 of such a message)."""
    block = TextPart(format_memories(memories) + "\n\n")
    meta = {**message.meta, "memory_ids": [m.id for m in memories]}
    return Message(
        message.role,
        (block, *message.parts),
        tool_call_id=message.tool_call_id,
        tool_name=message.tool_name,
        is_error=message.is_error,
        meta=meta,
    )
