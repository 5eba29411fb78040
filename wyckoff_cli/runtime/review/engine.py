"""A review's run: reviewer sub-agents in parallel over file groups, then a check of
every finding by a second agent that must confirm it against the code.

Each sub-agent is an `AgentRuntime` with a fresh conversation and a read-only tool set
(the file reading tools, `changed_file`, and `report_finding` or the two verdict tools):
no tool that writes or runs a command is in its registry, whatever the permission mode,
and any call the policy would ask about is denied unasked (`deny_without_approver`).
At most `max_parallel` sub-agents run at once. A finding the checker rejects, or does
not decide on, is dropped. A routed check model (`[routing] review_check` / `small`)
that fails is replaced by the reviewers' model for the rest of the review, with one
warning, as the other small jobs fall back.

`ReviewRun.events()` yields progress notices and each model call's `usage` event with
its purpose (`review` for reviewers, `review_check` for checkers); `result` is the
`ReviewResult` once the stream has ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.messages import Message
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.runtime.approval import answer_approvals, deny_without_approver
from wyckoff_cli.runtime.loop import AgentRuntime, RuntimeSettings
from wyckoff_cli.runtime.review.changes import Change
from wyckoff_cli.runtime.review.findings import RANK, Finding, ReviewResult, UsageTotals
from wyckoff_cli.runtime.review.groups import MAX_GROUP_CHARS, MAX_GROUP_FILES, FileGroup, split_groups
from wyckoff_cli.runtime.review.prompts import CHECKER_PROMPT, REVIEWER_PROMPT, checker_task, reviewer_task
from wyckoff_cli.runtime.review.tools import (
    FindingCollector,
    Verdict,
    changed_file_tool,
    report_finding_tool,
    verdict_tools,
)
from wyckoff_cli.runtime.tally import CallPricer
from wyckoff_cli.tools.base import Tool
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy
from wyckoff_cli.tools.registry import ToolRegistry

REVIEW, REVIEW_CHECK = "review", "review_check"


@dataclass(frozen=True, slots=True)
class ReviewSettings:
    max_parallel: int = 4
    max_group_files: int = MAX_GROUP_FILES
    max_group_chars: int = MAX_GROUP_CHARS
    reviewer_rounds: int = 30
    checker_rounds: int = 12


@dataclass
class ReviewAgents:
    """What the sub-agents are made of (the session layer builds it)."""

    reviewer: LLMProvider
    checker: Callable[[], LLMProvider]  # `[routing] review_check` / `small`, or the reviewer
    read_tools: list[Tool]  # read-only tools: read_file, list_dir, glob, grep
    policy: ApprovalPolicy
    price: CallPricer | None = None
    tool_env: dict[str, str] | None = None


@dataclass
class _Outcome:
    failure: str = ""
    reason: str = ""


@dataclass
class ReviewRun:
    change: Change
    agents: ReviewAgents
    settings: ReviewSettings = field(default_factory=ReviewSettings)
    result: ReviewResult | None = None
    _emit: Callable[[ev.RuntimeEvent], None] = field(default=lambda _e: None, repr=False)
    _usage: dict[str, UsageTotals] = field(default_factory=dict, repr=False)
    _check_failed: bool = field(default=False, repr=False)  # the routed check model failed once
    _task: asyncio.Task[None] | None = field(default=None, repr=False)
    _interrupted: bool = field(default=False, repr=False)

    def interrupt(self) -> None:
        """Stop every sub-agent now (Esc in the app, an ACP cancel); `events()` then
        ends with a warning and `result` stays None."""
        self._interrupted = True
        if self._task is not None:
            self._task.cancel()

    async def events(self) -> AsyncIterator[ev.RuntimeEvent]:
        queue: asyncio.Queue[ev.RuntimeEvent | None] = asyncio.Queue()
        self._emit = queue.put_nowait

        async def main() -> None:
            try:
                self.result = await self._review()
            finally:
                queue.put_nowait(None)

        task = self._task = asyncio.create_task(main())
        try:
            while (event := await queue.get()) is not None:
                yield event
            if self._interrupted:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                yield ev.Notice("warning", "The review was interrupted: no findings are reported")
                return
            await task  # its exception, if any
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _review(self) -> ReviewResult:
        change, settings = self.change, self.settings
        groups = split_groups(change.files, settings.max_group_files, settings.max_group_chars)
        files = [f.path for f in change.files]
        result = ReviewResult(
            change.target.describe(), files, groups=len(groups), model=self.agents.reviewer.name
        )
        self._emit(
            ev.Notice(
                "info",
                f"Reviewing {len(files)} file{'s' * (len(files) != 1)} ({change.target.describe()}) "
                f"with {len(groups)} reviewer{'s' * (len(groups) != 1)} on {result.model}",
            )
        )
        gate = asyncio.Semaphore(settings.max_parallel)
        reported = await asyncio.gather(*(self._reviewer(group, gate, result) for group in groups))
        found = _unique([finding for group in reported for finding in group])
        result.reported = len(found)
        checker = self.agents.checker()
        result.check_model = checker.name
        if found:
            self._emit(
                ev.Notice("info", f"Checking {len(found)} finding{'s' * (len(found) != 1)} on {checker.name}")
            )
        verdicts = await asyncio.gather(*(self._checker(checker, f, gate, result) for f in found))
        kept = [
            dataclasses.replace(finding, confirmation=verdict.reason)
            for finding, verdict in zip(found, verdicts, strict=True)
            if verdict.confirmed
        ]
        result.findings = sorted(kept, key=lambda f: (-RANK[f.severity], f.file, f.start_line))
        result.rejected = len(found) - len(kept)
        result.usage = dict(self._usage)
        return result

    async def _reviewer(
        self, group: FileGroup, gate: asyncio.Semaphore, result: ReviewResult
    ) -> list[Finding]:
        collector = FindingCollector(self.change)
        tools = [*self.agents.read_tools, changed_file_tool(self.change), report_finding_tool(collector)]
        prompt = reviewer_task(self.change, group)
        async with gate:
            outcome = await self._run(
                self.agents.reviewer, tools, REVIEWER_PROMPT, prompt, REVIEW, self.settings.reviewer_rounds
            )
        if outcome.failure:
            result.problems.append(f"a reviewer of {', '.join(group.reviewable)} failed: {outcome.failure}")
        return collector.findings

    async def _checker(
        self, provider: LLMProvider, finding: Finding, gate: asyncio.Semaphore, result: ReviewResult
    ) -> Verdict:
        fallback = self.agents.reviewer
        while True:
            if provider is not fallback and self._check_failed:
                provider = fallback  # the small model failed once: the reviewers' model checks from now on
            verdict = Verdict()
            tools = [*self.agents.read_tools, changed_file_tool(self.change), *verdict_tools(verdict)]
            task = checker_task(self.change, finding)
            async with gate:
                outcome = await self._run(
                    provider, tools, CHECKER_PROMPT, task, REVIEW_CHECK, self.settings.checker_rounds
                )
            if not outcome.failure:
                return verdict
            if provider is not fallback:
                if not self._check_failed:
                    self._check_failed = True
                    self._emit(
                        ev.Notice(
                            "warning",
                            f"The check model {provider.name} failed ({outcome.failure}); "
                            f"using {fallback.name} for the check from now on.",
                        )
                    )
                result.check_model = fallback.name
                continue
            result.problems.append(f"the check of {finding.file}:{finding.lines} failed: {outcome.failure}")
            return verdict

    async def _run(
        self, provider: LLMProvider, tools: list[Tool], system: str, prompt: str, purpose: str, rounds: int
    ) -> _Outcome:
        runtime = AgentRuntime(
            provider,
            ToolRegistry(tools),
            workspace=self.change.root,
            policy=self.agents.policy,
            settings=RuntimeSettings(max_tool_rounds=rounds),
            tool_env=self.agents.tool_env,
            price=self.agents.price,
        )
        outcome = _Outcome()
        # `typed`: what the turn's expectations read — not the diff, whose `@name` or
        # "I changed …" lines are the change's text, not requests to this agent
        task = Message.user(prompt, typed=prompt.split("\n", 1)[0])
        stream = answer_approvals(
            runtime.run_stream(Conversation(), task, system_prompt=system), deny_without_approver
        )
        try:
            async for event in stream:
                if isinstance(event, ev.UsageReported):
                    self._count(dataclasses.replace(event, purpose=purpose))
                elif isinstance(event, ev.TurnFailed):
                    outcome.failure = f"{event.kind}: {event.message}"
                elif isinstance(event, ev.TurnDone):
                    outcome.reason = event.reason
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
            await runtime.background.stop_all()  # the providers are shared: their owner closes them
        return outcome

    def _count(self, event: ev.UsageReported) -> None:
        before = self._usage.get(event.purpose, UsageTotals())
        cost = self.agents.price(event.model, event.usage) if self.agents.price is not None else None
        total = None if before.cost_usd is None or cost is None else before.cost_usd + cost
        self._usage[event.purpose] = UsageTotals(
            before.calls + 1,
            before.input_tokens + event.input_tokens,
            before.output_tokens + event.output_tokens,
            total,
        )
        self._emit(event)


def _unique(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, int, int, str]] = set()
    unique = []
    for finding in findings:
        key = (finding.file, finding.start_line, finding.end_line, finding.title.lower())
        if key not in seen:
            seen.add(key)
            unique.append(finding)
    return unique
