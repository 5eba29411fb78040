"""Sub-agents: the `task` tool runs a focused child agent and returns its answer.

The child gets a fresh `Conversation` (its system prompt, the project instructions and
the task prompt only), its own tool set (never `task`: no nesting), its own round
limit, and the parent's permission mode or a narrower one. Its parts come from a
`ChildFactory` (the session builder's, session/subagents.py), never from a global.

Every event the child produces reaches the parent's stream wrapped in a
`SubagentEvent` (through `ToolContext.emit_event`), so hosts render the child and
answer its approvals as they do the parent's. Cancelling the parent's call cancels the
child. The result is the child's final answer plus a one-line footer; the child's
transcript is saved in the session folder and named in the footer.

`SessionBudget` and `BudgetHook` (runtime/budget.py) stop every runtime of a session
(parent and children share one budget) once its calls cost `max_budget_usd`.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.core.messages import Message
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.runtime.agent_files import AgentCatalog, AgentDefinition
from wyckoff_cli.runtime.budget import BudgetHook as BudgetHook  # re-exported: the builder's import
from wyckoff_cli.runtime.budget import SessionBudget as SessionBudget
from wyckoff_cli.runtime.child_watch import ChildWatch
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.runtime.worktree_tasks import (
    ISOLATION,
    ParallelLimit,
    close_worktree,
    isolated,
    open_worktree,
)
from wyckoff_cli.runtime.worktrees import Worktree
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, Verdict
from wyckoff_cli.tools.permissions.rules import Rule, RuleError, allowing_rule, parse_rule
from wyckoff_cli.tools.registry import ToolRegistry

TASK_TOOL = "task"


# --------------------------------------------------------------------------- the child's parts


@dataclass
class ChildRun:
    """What one task runs: its runtime and system prompt."""

    runtime: AgentRuntime
    system_prompt: str
    model: str
    max_seconds: float | None = None  # `[agents] max_seconds`: wall time
    idle_seconds: float | None = None  # `[agents] idle_seconds`: no new tool call or text


class ChildFactory(Protocol):
    def child(self, agent: AgentDefinition, workspace: Path | None = None) -> ChildRun:
        """Build the child's parts (provider, tools, policy, runtime) for `agent`;
        `workspace`: its own (a worktree), else the parent's."""
        ...

    def save_transcript(
        self, agent_id: str, agent: AgentDefinition, messages: Sequence[Message]
    ) -> str | None:
        """Keep the child's messages; returns where (relative to the session folder)."""
        ...

    def price(self, model: str, usage: Usage) -> float | None: ...


class ScopedPolicy(ApprovalPolicy):
    """The parent's policy for a child, plus the definition's `TOOL(PATTERN)` scopes:
    a call of a scoped tool that matches none of its patterns is refused unasked."""

    scopes: dict[str, list[Rule]]
    agent: str

    def evaluate(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Verdict:
        rules = getattr(self, "scopes", {}).get(tool.name)
        if rules:
            subject = tool.subject(args, ctx.workspace)
            if allowing_rule(rules, tool, subject) is None:
                allowed = ", ".join(rule.text for rule in rules)
                return Verdict(
                    "deny",
                    f"the {self.agent} agent may use {tool.name} only as {allowed}. Do not retry it.",
                )
        return super().evaluate(tool, args, ctx)


def child_policy(parent: ApprovalPolicy, mode: str, agent: AgentDefinition) -> ScopedPolicy:
    """The child's policy: the parent's rules (the same lists, so an "always" answer
    holds for the whole session) in `mode`, scoped by the definition's rules."""
    policy = ScopedPolicy(
        mode=mode,  # type: ignore[arg-type]
        allow=parent.allow,
        deny=parent.deny,
        session_allow=parent.session_allow,
        protected_roots=parent.protected_roots,
        worktree_dirty=parent.worktree_dirty,
    )
    policy.scopes = scoped_rules(agent.tools or ())
    policy.agent = agent.name
    return policy


def scoped_rules(entries: Sequence[str]) -> dict[str, list[Rule]]:
    scopes: dict[str, list[Rule]] = {}
    for entry in entries:
        if "(" in entry:
            try:
                rule = parse_rule(entry)
            except RuleError:
                continue
            scopes.setdefault(rule.tool, []).append(rule)
    return scopes


def child_registry(parent: ToolRegistry, agent: AgentDefinition) -> ToolRegistry:
    """The child's tools: the named ones the parent has (or all the parent's), never `task`
    nor the parent's answer format (`Tool.answer`: the schema is the parent's answer's)."""
    if agent.tools is None:
        return ToolRegistry(tool for tool in parent if tool.name != TASK_TOOL and not tool.answer)
    wanted = [entry.split("(", 1)[0] for entry in agent.tools]
    return ToolRegistry(
        tool
        for name in dict.fromkeys(wanted)
        if name != TASK_TOOL and (tool := parent.get(name)) is not None and not tool.answer
    )


def read_only(registry: ToolRegistry) -> bool:
    return len(registry) > 0 and all(tool.kind == "read" and tool.concurrency_safe for tool in registry)


# --------------------------------------------------------------------------- the task tool


def task_tool(
    catalog: AgentCatalog, factory: ChildFactory, parent_tools: ToolRegistry, max_parallel: int = 4
) -> Tool:
    """The `task` tool over `catalog`'s agents, building children with `factory`;
    at most `max_parallel` children in worktrees run at once."""
    agents = list(catalog.agents.values())
    listing = "\n".join(
        f"- {agent.name}: {agent.description}" + (" (runs in its own worktree)" if agent.isolation else "")
        for agent in agents
    )
    safe = {agent.name for agent in agents if read_only(child_registry(parent_tools, agent))}
    limit = ParallelLimit(max_parallel)

    async def run(args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        agent = catalog.get(str(args.get("agent", "")))
        if agent is None:
            raise ToolError(f"Unknown agent {args.get('agent')!r}. Agents: {', '.join(catalog.names())}.")
        description, prompt = str(args["description"]), str(args["prompt"])
        if not isolated(agent, args):
            return await run_task(agent, description, prompt, factory, ctx)
        async with limit.semaphore:
            return await run_task(agent, description, prompt, factory, ctx, in_worktree=True)

    def concurrent(args: dict[str, Any]) -> bool:
        agent = catalog.get(str(args.get("agent", "")))
        return (agent is not None and agent.name in safe) or isolated(agent, args)

    return Tool(
        name=TASK_TOOL,
        description=(
            "Hand a focused task to a sub-agent with its own fresh context and tools; you get back "
            "only its final answer. Use it for broad searches or self-contained work whose details "
            'you do not need; several read-only tasks run in parallel. With isolation "worktree" the '
            "agent works in a git worktree of its own made from your current files, so several such "
            "tasks may change files in parallel; their changes reach your files only through "
            "merge_worktree. The agent sees only your prompt, so include every detail it needs."
            "\n\nAgents:\n" + listing
        ),
        parameters={
            "type": "object",
            "properties": {
                "agent": {"type": "string", "enum": [agent.name for agent in agents]},
                "description": {"type": "string", "description": "3-5 words saying what the task is"},
                "prompt": {"type": "string", "description": "The task, with all the context it needs"},
                "isolation": {
                    "type": "string",
                    "enum": [ISOLATION],
                    "description": "worktree: run in a git worktree of its own (its changes come back "
                    "through merge_worktree)",
                },
            },
            "required": ["agent", "description", "prompt"],
            "additionalProperties": False,
        },
        run=run,
        kind="other",
        summary_arg="description",
        safe_for=concurrent,
    )


@dataclass
class TaskStats:
    rounds: int = 0
    tool_calls: int = 0
    usage: Usage = Usage()
    cost: float = 0.0
    priced: bool = True
    reason: str = ""
    answer: str = ""
    failure: str = ""
    warning: str = ""  # the child's last warning notice (why it stopped, for a loop)

    def footer(self, agent_id: str, seconds: float, transcript: str | None) -> str:
        tokens = self.usage.input_tokens + self.usage.output_tokens
        cost = f"${self.cost:.4f}" + ("" if self.priced else "+?")
        parts = [
            f"{self.rounds} round{'s' * (self.rounds != 1)}",
            f"{self.tool_calls} tool call{'s' * (self.tool_calls != 1)}",
            f"{tokens:,} tokens",
            cost,
            f"{seconds:.1f}s",
        ]
        where = f"; transcript {transcript}" if transcript else ""
        return f"[{agent_id}: {self.reason or 'ended'}; {', '.join(parts)}{where}]"


async def run_task(
    agent: AgentDefinition,
    description: str,
    prompt: str,
    factory: ChildFactory,
    ctx: ToolContext,
    *,
    in_worktree: bool = False,
) -> ToolOutcome:
    """Run one child to its end; its events go to `ctx.emit_event`, wrapped.
    `in_worktree`: in a worktree of its own (runtime/worktree_tasks.py)."""
    agent_id = f"{agent.name}-{uuid.uuid4().hex[:8]}"
    worktree = await open_worktree(ctx.workspace, agent_id, description) if in_worktree else None
    try:
        outcome = await _run_child(agent, agent_id, description, prompt, factory, ctx, worktree)
    except ToolError as exc:  # the child failed: what it changed is kept, and said
        if worktree is None:
            raise
        raise ToolError(f"{exc.message}\n{(await close_worktree(worktree))[0]}") from None
    except BaseException:
        if worktree is not None:
            await close_worktree(worktree)  # removed when the child changed nothing
        raise
    if worktree is None:
        return outcome
    note, shown = await close_worktree(worktree)
    return ToolOutcome(f"{outcome.text}\n{note}", {**(outcome.display or {}), **shown})


async def _run_child(
    agent: AgentDefinition,
    agent_id: str,
    description: str,
    prompt: str,
    factory: ChildFactory,
    ctx: ToolContext,
    worktree: Worktree | None,
) -> ToolOutcome:
    child = factory.child(agent, worktree.path) if worktree is not None else factory.child(agent)
    conversation = Conversation()
    stats = TaskStats()
    started = time.monotonic()
    stream = child.runtime.run_stream(conversation, prompt, system_prompt=child.system_prompt)
    watch = ChildWatch(child.max_seconds, child.idle_seconds)
    try:
        while True:
            try:
                event = await asyncio.wait_for(anext(stream), watch.next_timeout())
            except StopAsyncIteration:
                break
            except TimeoutError:  # the child is cancelled with its stream; say why, as its end
                limit = watch.reached()
                stats.reason, stats.warning = limit, watch.message(limit)
                for end in (
                    ev.Notice("warning", stats.warning),
                    ev.TurnDone(stats.answer, "stopped", stats.rounds),
                ):
                    ctx.emit_event(ev.SubagentEvent(agent_id, agent.name, ctx.call_id, end))
                break
            watch.saw(event)
            ctx.emit_event(ev.SubagentEvent(agent_id, agent.name, ctx.call_id, event))
            _count(stats, event, factory)
    finally:
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
        await child.runtime.close()
        transcript = factory.save_transcript(agent_id, agent, list(conversation))
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError  # the parent's call was cancelled (Esc): the child was too
    footer = stats.footer(agent_id, time.monotonic() - started, transcript)
    display = {
        "agent": agent.name,
        "agent_id": agent_id,
        "description": description,
        "transcript": transcript,
        "footer": footer,
        "reason": stats.reason,
    }
    if stats.failure:
        raise ToolError(f"The {agent.name} agent failed: {stats.failure}\n{footer}")
    answer = stats.answer.strip() or "(The agent ended without a final answer.)"
    if stats.reason == "loop":
        answer += f"\n(The agent ended in a loop. {stats.warning})"
    elif stats.reason in ("max_seconds", "idle_seconds"):
        answer += f"\n({stats.warning})"
    elif stats.reason not in ("completed", "completed_by_tool"):
        answer += f"\n(The agent stopped early: {stats.reason}.)"
    return ToolOutcome(f"{answer}\n\n{footer}", display)


def _count(stats: TaskStats, event: ev.RuntimeEvent, factory: ChildFactory) -> None:
    if isinstance(event, ev.ToolCallsReceived):
        stats.tool_calls += len(event.calls)
    elif isinstance(event, ev.UsageReported):
        stats.usage = stats.usage + event.usage
        cost = factory.price(event.model, event.usage)
        if cost is None:
            stats.priced = False
        else:
            stats.cost += cost
    elif isinstance(event, ev.Notice) and event.level == "warning":
        stats.warning = event.message
    elif isinstance(event, ev.TurnFailed):
        stats.failure = f"{event.kind}: {event.message}"
    elif isinstance(event, ev.TurnDone):
        stats.rounds, stats.reason, stats.answer = event.rounds, event.reason, event.text


def transcript_path(session_dir: Path, agent_id: str) -> Path:
    return session_dir / "agents" / f"{agent_id}.jsonl"
