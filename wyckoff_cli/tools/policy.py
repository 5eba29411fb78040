"""The approval policy: pure decisions on whether a call runs, asks or is refused.

Inputs are the tool, its arguments, the permission mode and the allow/deny rules;
output is a `Verdict`. Nothing here does I/O or prompts anyone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from wyckoff_cli.tools.base import Tool, ToolContext

PermissionMode = Literal["default", "plan", "auto-edit", "yolo"]
PERMISSION_MODES: tuple[PermissionMode, ...] = ("default", "plan", "auto-edit", "yolo")


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Literal["allow", "ask", "deny"]
    reason: str = ""
    rule: str | None = None  # the rule "always" would save, when asking
    outside_paths: tuple[Path, ...] = ()  # paths outside the workspace the call touches


@dataclass
class ApprovalPolicy:
    """Decides per call. `allow`/`deny` hold rules (`TOOL`); deny always wins."""

    mode: PermissionMode = "default"
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    session_allow: list[str] = field(default_factory=list)

    def evaluate(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Verdict:
        if tool.name in self.deny:
            return Verdict("deny", f"{tool.name} is denied by a rule ({tool.name}).")
        if self.mode == "plan" and tool.kind in ("edit", "execute"):
            return Verdict(
                "deny",
                f"{tool.name} is not available in plan mode: only reading is allowed. "
                "Describe the change instead, or ask the user to switch modes.",
            )
        if not tool.requires_approval:
            return Verdict("allow")
        if tool.name in self.allow or tool.name in self.session_allow:
            return Verdict("allow", f"allowed by rule {tool.name}")
        if self.mode == "yolo" or (self.mode == "auto-edit" and tool.kind == "edit"):
            return Verdict("allow", f"allowed by {self.mode} mode")
        return Verdict("ask", rule=self.always_rule(tool, args, ctx))

    def always_rule(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> str:
        return tool.name

    def remember(self, rule: str) -> None:
        """Allow `rule` for the rest of the session (after "always")."""
        if rule not in self.session_allow:
            self.session_allow.append(rule)
