"""Approval as data plus an awaitable: the host supplies the approver.

When the policy says a call must be asked about, the runtime builds an
`ApprovalRequest` and awaits the host's approver: a modal in the TUI, a fixed policy
in headless mode, a script in tests. The answer is an `ApprovalDecision`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

DecisionKind = Literal["allow", "always", "edit", "deny"]


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    id: str
    name: str
    args: dict[str, Any]
    preview: dict[str, Any] = field(default_factory=dict)
    rule: str | None = None  # the rule "always" would save
    reason: str = ""  # why the policy asks (e.g. "path outside the workspace")


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    kind: DecisionKind
    args: dict[str, Any] | None = None  # the edited arguments, with `edit`
    feedback: str | None = None  # a message to the model, with `deny`

    @classmethod
    def allow(cls) -> ApprovalDecision:
        return cls("allow")

    @classmethod
    def always(cls) -> ApprovalDecision:
        return cls("always")

    @classmethod
    def edit(cls, args: dict[str, Any]) -> ApprovalDecision:
        return cls("edit", args=args)

    @classmethod
    def deny(cls, feedback: str | None = None) -> ApprovalDecision:
        return cls("deny", feedback=feedback)


Approver = Callable[[ApprovalRequest], Awaitable[ApprovalDecision]]


async def deny_without_approver(request: ApprovalRequest) -> ApprovalDecision:
    """The approver of headless runs: whatever the policy did not allow is denied."""
    return ApprovalDecision.deny(
        f"{request.name} needs approval and this run has no one to ask. "
        "It was not run. Do without it, or tell the user which permission to grant "
        "(--permission-mode or --allow)."
    )
