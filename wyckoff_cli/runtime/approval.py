"""Hosts that answer approval requests by a rule rather than by asking a person.

The runtime emits `approval_request` events carrying a responder (core/approval.py)
and waits for the answer. A host that asks a person (the app) answers from its dialog;
`answer_approvals` lets any other host answer with a function — headless runs use
`deny_without_approver`, tests script their answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision, ApprovalResponder

Approver = Callable[[ev.ApprovalRequested], Awaitable[ApprovalDecision]]


async def deny_without_approver(request: ev.ApprovalRequested) -> ApprovalDecision:
    """The answer of headless runs: whatever the policy did not allow is denied."""
    return ApprovalDecision.deny(
        f"{request.name} needs approval and this run has no one to ask. "
        "It was not run. Do without it, or tell the user which permission to grant "
        "(--permission-mode or --allow)."
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
