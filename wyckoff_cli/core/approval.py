"""An approval answer, and the way a host gives it.

The runtime asks by emitting an `approval_request` event that carries an
`ApprovalResponder`; whoever hosts the turn (the app's dialog, a headless policy, a
sub-agent's parent, an ACP client) answers through it, once. No host reaches into the
runtime. Imports only `core/`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

DecisionKind = Literal["allow", "always", "edit", "deny"]
Validator = Callable[[dict[str, Any]], "str | None"]  # an error message, or None when valid


@dataclass(frozen=True, slots=True)
class ApprovalDecision:
    kind: DecisionKind
    args: dict[str, Any] | None = None  # the edited arguments, with `edit`
    feedback: str | None = None  # a message to the model, with `deny`
    unattended: bool = False  # no person was asked: a headless rule answered (`deny_without_approver`)
    rule: str | None = None  # with `always`: a wider rule the person chose (an MCP tool's, its server's)

    @classmethod
    def allow(cls) -> ApprovalDecision:
        return cls("allow")

    @classmethod
    def always(cls, rule: str | None = None) -> ApprovalDecision:
        """Allow, and calls like it from now on: the request's rule, or `rule` when it
        is one of the wider ones offered for the call (tools/mcp/names.py)."""
        return cls("always", rule=rule)

    @classmethod
    def edit(cls, args: dict[str, Any]) -> ApprovalDecision:
        return cls("edit", args=args)

    @classmethod
    def deny(cls, feedback: str | None = None, *, unattended: bool = False) -> ApprovalDecision:
        return cls("deny", feedback=feedback, unattended=unattended)


class ApprovalResponder:
    """Answers one approval request. `validate` checks edited arguments against the
    tool's schema before a host accepts them (the runtime checks them again)."""

    def __init__(self, validate: Validator | None = None) -> None:
        self._future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._validate = validate

    @property
    def answered(self) -> bool:
        return self._future.done()

    def validate(self, args: dict[str, Any]) -> str | None:
        return self._validate(args) if self._validate is not None else None

    def respond(self, decision: ApprovalDecision) -> bool:
        """Give the answer; False when the request was already answered or withdrawn
        (the turn ended meanwhile)."""
        if self._future.done():
            return False
        self._future.set_result(decision)
        return True

    async def wait(self) -> ApprovalDecision:
        return await self._future

    async def settled(self) -> None:
        """Returns once the request is answered or withdrawn (the turn was aborted)."""
        await asyncio.wait({self._future})


class Confirmation:
    """Answers one yes/no question of the session (a restore's preview: "restore these
    files?"), once. Hosts answer it as they answer an approval: the app's preview
    screen, or the host itself when the person's typed command is the consent (ACP,
    headless). `withdraw()` answers no when the question can no longer be shown."""

    def __init__(self) -> None:
        self._future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    @property
    def answered(self) -> bool:
        return self._future.done()

    def respond(self, yes: bool) -> bool:
        if self._future.done():
            return False
        self._future.set_result(yes)
        return True

    def withdraw(self) -> None:
        self.respond(False)

    async def wait(self) -> bool:
        return await self._future
