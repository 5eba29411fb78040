"""Requests a running call makes on the user's behalf, asked about like a tool call.

An MCP server may ask, during one of its tool calls, for the model (sampling) or for
the user's input (elicitation). `CallAsker` answers each the way a tool call is
answered: the policy first (its allow, deny and ask rules and the mode name the
request's pseudo tool, e.g. `McpSampling(SERVER)`), else a person, through an
`approval_request` on the turn's stream (ids `CALL_ID.ask-N`), so the app, ACP, a
headless rule and a sub-agent's parent all answer it the same way. "Always" saves the
policy's rule for the session, as for a tool.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision, ApprovalResponder
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, Verdict


@dataclass
class CallAsker:
    """Asks for one running call (`call_id`); `put` adds an event to the turn's stream."""

    policy: ApprovalPolicy
    ctx: ToolContext
    call_id: str
    put: Callable[[ev.RuntimeEvent], None]
    _numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def __call__(self, tool: Tool, args: dict[str, Any], preview: dict[str, Any]) -> ApprovalDecision:
        ask_id = f"{self.call_id}.ask-{next(self._numbers)}"
        verdict = await self.policy.decide(tool, args, self.ctx)
        person = bool(tool.extra.get("asks_person"))  # a form only a person fills: never allowed by a rule
        if person and verdict.action != "deny":
            verdict = Verdict("ask", f"{tool.name} asks the user for input", None)
        if verdict.action == "allow":
            self.put(ev.ApprovalDecided(ask_id, tool.name, "auto_allow", feedback=verdict.reason or None))
            return ApprovalDecision.allow()
        if verdict.action == "deny":
            self.put(ev.ApprovalDecided(ask_id, tool.name, "auto_deny", feedback=verdict.reason))
            return ApprovalDecision.deny(verdict.reason, unattended=True)
        shown = dict(preview)
        if verdict.reason:
            shown.setdefault("reason", verdict.reason)
        responder = ApprovalResponder()
        self.put(
            ev.ApprovalRequested(ask_id, tool.name, args, shown, verdict.rule, verdict.reason, [], responder)
        )
        decision = await responder.wait()
        saved = verdict.rule if decision.kind == "always" else None
        if saved:
            self.policy.remember(saved)
        self.put(ev.ApprovalDecided(ask_id, tool.name, decision.kind, rule=saved, feedback=decision.feedback))
        return decision
