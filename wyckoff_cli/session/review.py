"""A review's parts from a session's configuration, and `/review` as a request.

`review_agents(builder, model)` gives the reviewers the model `model`, and the check
pass the model of `[routing] review_check` (or `small`) when one is configured and can
be built, else the same model. The sub-agents' tools are the read-only file tools
(read_file, list_dir, glob, grep) plus the review's own; their policy is the
configuration's rules in `default` mode with the managed policy applied, so a deny rule
on a path holds for the review too. `wyckoff review` (cli/review_cmd.py) and `/review`
(`review_request_events`) run the same `ReviewRun`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.abort import AbortSignal
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.runtime.loop import child_environment
from wyckoff_cli.runtime.review.changes import ReviewError, ReviewTarget, TargetKind, collect_change
from wyckoff_cli.runtime.review.engine import ReviewAgents, ReviewRun, ReviewSettings
from wyckoff_cli.runtime.review.formats import markdown_report, summary_line
from wyckoff_cli.session.builder import SessionBuilder, apply_managed, build_policy
from wyckoff_cli.session.shell import protected_roots
from wyckoff_cli.tools.files import read_file
from wyckoff_cli.tools.listing import glob, list_dir
from wyckoff_cli.tools.search import grep

READ_TOOLS = (read_file, list_dir, glob, grep)
NOTHING_TO_REVIEW = "nothing to review"


@dataclass
class CheckModel:
    """The check pass's provider: the routed small model, or the reviewers' one."""

    provider: LLMProvider
    notice: str = ""


def review_provider(builder: SessionBuilder, model: str) -> LLMProvider:
    """`model` as the review uses it: without the vendor's server-side web search (a
    review reads the repository, nothing else)."""
    if builder.provider_factory is not None:
        return builder.provider_factory(model)
    from wyckoff_cli.session.models import build_model

    config = builder.config
    return build_model(
        model, dataclasses.replace(config, web=dataclasses.replace(config.web, server_search=False))
    )


def check_model(builder: SessionBuilder, reviewer: LLMProvider) -> CheckModel:
    routed = builder.config.routing.model_for("review_check")
    if not routed:
        return CheckModel(reviewer)
    try:
        return CheckModel(review_provider(builder, routed))
    except Exception as exc:  # an unknown id, a missing key: the reviewers' model checks
        why = getattr(exc, "message", None) or str(exc)
        return CheckModel(
            reviewer, f"The check model {routed} cannot be used ({why}); using {reviewer.name}."
        )


def review_agents(builder: SessionBuilder, model: str) -> tuple[ReviewAgents, list[str]]:
    """The sub-agents' parts, and notices (a check model that could not be built)."""
    reviewer = review_provider(builder, model)
    checker = check_model(builder, reviewer)
    policy = build_policy(builder.config, "default", [], builder.workspace.ignored_allow())
    apply_managed(policy, model)
    policy.protected_roots = protected_roots
    agents = ReviewAgents(
        reviewer=reviewer,
        checker=lambda: checker.provider,
        read_tools=list(READ_TOOLS),
        policy=policy,
        price=builder.call_cost(),
        tool_env=child_environment(),
    )
    return agents, [checker.notice] if checker.notice else []


async def close_agents(agents: ReviewAgents) -> None:
    for provider in {id(p): p for p in (agents.reviewer, agents.checker())}.values():
        close = getattr(provider, "aclose", None)
        if close is not None:
            await close()


class ReviewHost(Protocol):
    """What `/review` uses of the chat controller."""

    builder: SessionBuilder
    model: str

    @property
    def root(self) -> Path: ...
    def observe(self, event: ev.RuntimeEvent, *, record: bool = True) -> None: ...


async def review_request_events(
    host: ReviewHost,
    kind: str,
    ref: str = "",
    abort: AbortSignal | None = None,
    settings: ReviewSettings | None = None,
) -> AsyncIterator[ev.RuntimeEvent]:
    """`/review`: progress notices and usage (recorded and counted in the session),
    then the findings as a `command_output` in Markdown. `abort` (an `Interrupt`)
    stops the review."""
    target = ReviewTarget(cast(TargetKind, kind), ref)
    try:
        change = await collect_change(host.root, target)
    except ReviewError as exc:
        yield ev.Notice("warning", f"/review: {exc.message}")
        return
    if not change.files:
        yield ev.Notice("info", f"/review: {NOTHING_TO_REVIEW} ({target.describe()} are empty)")
        return
    try:
        agents, notices = review_agents(host.builder, host.model)
    except Exception as exc:
        yield ev.Notice("error", f"/review: {getattr(exc, 'message', None) or exc}")
        return
    run = ReviewRun(change, agents, settings or ReviewSettings())
    unsubscribe = abort.subscribe(run.interrupt) if abort is not None else None
    try:
        for notice in notices:
            yield ev.Notice("warning", notice)
        async for event in run.events():
            host.observe(event)
            yield event
    finally:
        if unsubscribe is not None:
            unsubscribe()
        await close_agents(agents)
    if run.result is not None:
        result = run.result
        yield ev.CommandOutput("review", summary_line(result), markdown_report(result))
