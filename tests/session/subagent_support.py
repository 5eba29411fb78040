"""Helpers for the sub-agent tests: a builder over scripted or fake-server providers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.abort import AbortSignal
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.runtime.approval import Approver, answer_approvals, deny_without_approver
from wyckoff_cli.session.builder import Session, SessionBuilder, open_workspace
from wyckoff_cli.storage.redact import Redactor
from wyckoff_cli.storage.sessions import SessionStore
from wyckoff_cli.tools.builtin import default_registry


def flat_cost(model: str, usage: Usage) -> float:
    """$1 per million tokens in and out, for every model."""
    return (usage.input_tokens + usage.output_tokens) / 1_000_000


def task_call(
    agent: str, prompt: str, description: str = "look around", call_id: str | None = None
) -> dict[str, Any]:
    call: dict[str, Any] = {
        "name": "task",
        "args": {"agent": agent, "description": description, "prompt": prompt},
    }
    if call_id is not None:
        call["id"] = call_id
    return call


def make_builder(
    root: Path,
    providers: Callable[[str], LLMProvider],
    *,
    budget: float | None = None,
    store: SessionStore | None = None,
) -> SessionBuilder:
    return SessionBuilder(
        open_workspace(root),
        provider_factory=providers,
        tools_factory=default_registry,
        manage_context=False,
        fixed_prompt="SYSTEM",
        store=store or SessionStore(root.parent / "sessions", redactor=Redactor()),
        subagents=True,
        max_budget_usd=budget,
        cost=flat_cost,
    )


def build(builder: SessionBuilder, model: str, mode: str = "default") -> Session:
    return builder.build(model=model, mode=mode, recorder=builder.open_recorder(model))


async def run(
    session: Session, prompt: str, approver: Approver | None = None, abort: AbortSignal | None = None
) -> list[ev.RuntimeEvent]:
    events: list[ev.RuntimeEvent] = []
    stream = session.runtime.run_stream(
        session.conversation, prompt, system_prompt=session.system_prompt, abort=abort
    )
    async for event in answer_approvals(stream, approver or deny_without_approver):
        events.append(event)
        if session.recorder is not None:
            session.recorder.record(event)
    return events


def child_events(events: list[ev.RuntimeEvent], kind: type[Any] | None = None) -> list[Any]:
    inner = [e.event for e in events if isinstance(e, ev.SubagentEvent)]
    return [e for e in inner if kind is None or isinstance(e, kind)]


async def allow_all(request: ev.ApprovalRequested) -> ApprovalDecision:
    return ApprovalDecision.allow()
