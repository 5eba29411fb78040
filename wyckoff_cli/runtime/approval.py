"""Hosts that answer approval requests by a rule rather than by asking a person.

The runtime emits `approval_request` events carrying a responder (core/approval.py)
and waits for the answer. A host that asks a person (the app) answers from its dialog;
`answer_approvals` lets any other host answer with a function — headless runs use
`deny_without_approver`, tests script their answers.
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision, ApprovalResponder

Approver = Callable[[ev.ApprovalRequested], Awaitable[ApprovalDecision]]


async def deny_without_approver(request: ev.ApprovalRequested) -> ApprovalDecision:
    """The answer of headless runs: whatever the policy did not allow is denied, and
    the model is told that no one was asked and how the call could be allowed."""
    return ApprovalDecision.deny(unattended_denial(request), unattended=True)


def unattended_denial(request: ev.ApprovalRequested) -> str:
    """`edit_file needs approval and this run has no one to ask …`: the rule that would
    allow the call (`--allow` or `[permissions] allow`) and the mode that would; or, for a
    call no rule can allow (`rule` None: outside paths, destructive commands), that only
    a person can. Short: `wyckoff run` shows its first 300 characters on stderr."""
    head = f"Not run: denied without asking: {request.name} needs approval and this run has no one to ask."
    if request.rule is None:
        why = f" ({request.reason})" if request.reason else ""
        return (
            f"{head} It is asked about in every mode{why}: only a person can approve it, in "
            "`wyckoff chat`. Do without it, or tell the user so."
        )
    mode = "auto-edit" if request.preview.get("kind") == "diff" else "yolo"
    return (
        f"{head} To allow it: --allow {shlex.quote(request.rule)} (or that rule in [permissions] "
        f"allow), or --permission-mode {mode}. Do without it, or tell the user which to use."
    )


async def answer_approvals(
    events: AsyncIterator[ev.RuntimeEvent], approver: Approver
) -> AsyncIterator[ev.RuntimeEvent]:
    """Pass `events` through, answering each approval request with `approver` once the
    consumer has seen it; an answer still pending when the turn withdraws the request
    (an abort) is cancelled. Closing this stream closes `events` (the turn is aborted)."""
    try:
        async for event in events:
            yield event
            request = ev.approval_of(event)  # a sub-agent's request is answered the same way
            if request is not None and request.responder is not None and not request.answered:
                await _answer(request, request.responder, approver)
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()


async def _answer(event: ev.ApprovalRequested, responder: ApprovalResponder, approver: Approver) -> None:
    answer = asyncio.ensure_future(approver(event))
    withdrawn = asyncio.ensure_future(responder.settled())
    try:
        await asyncio.wait({answer, withdrawn}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        withdrawn.cancel()
        if not answer.done():
            answer.cancel()
    if answer.done() and not answer.cancelled():
        responder.respond(answer.result())
