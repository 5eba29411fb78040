"""The approval policy: pure decisions on whether a call runs, asks or is refused.

Inputs are the tool, its arguments, the permission mode and the allow/deny rules;
output is a `Verdict`. Nothing here does I/O beyond resolving paths, or prompts anyone.

The order of the checks, first match deciding:

1. a deny rule matching the call (any part of a compound command) → deny;
2. a file tool writing inside `.git/` → deny;
3. plan mode and a tool that edits files or runs commands → deny, telling the model;
4. a path outside the workspace → ask, naming the paths (in every mode; "always"
   saves nothing for these);
5. a command on the built-in destructive list → ask (even in yolo, even over an
   allow rule; "always" saves nothing);
6. a tool that needs no approval (reads, the todo list) → allow;
7. an allow rule (from config, `--allow`, or "always" this session) → allow;
8. the mode: yolo allows everything, auto-edit allows file edits → allow;
9. otherwise ask, offering the narrowest sensible rule for "always".

Modes: `default` (reads free; edits and commands ask), `plan` (read-only), `auto-edit`
(edits inside the workspace free, commands ask), `yolo` (everything inside the
workspace free). Rules are described in rules.py and docs/TOOLS.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.destructive import find_danger
from wyckoff_cli.tools.rules import (
    Rule,
    RuleError,
    allowing_rule,
    denying_rule,
    parse_rule,
    subject_of,
    suggest_rule,
)
from wyckoff_cli.tools.workspace import is_git_internal, outside_paths

PermissionMode = Literal["default", "plan", "auto-edit", "yolo"]
PERMISSION_MODES: tuple[PermissionMode, ...] = ("default", "plan", "auto-edit", "yolo")

MODE_SUMMARIES: dict[str, str] = {
    "default": "reads run freely; file edits and commands ask first",
    "plan": "read-only: file edits and commands are refused",
    "auto-edit": "reads and file edits inside the workspace run freely; commands ask first",
    "yolo": "everything inside the workspace runs freely; outside paths and destructive commands ask",
}

_KIND_WORDS = {"edit": "changing files", "execute": "running commands", "external": "calling MCP tools"}


def next_permission_mode(mode: str) -> PermissionMode:
    """The mode after `mode` in the Shift+Tab cycle."""
    index = PERMISSION_MODES.index(mode) if mode in PERMISSION_MODES else -1
    return PERMISSION_MODES[(index + 1) % len(PERMISSION_MODES)]


def invalid_rules(rules: list[str]) -> list[str]:
    """Error messages for the rules in `rules` that do not parse."""
    problems: list[str] = []
    for text in rules:
        try:
            parse_rule(text)
        except RuleError as exc:
            problems.append(str(exc))
    return problems


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Literal["allow", "ask", "deny"]
    reason: str = ""
    rule: str | None = None  # the rule "always" would save, when asking
    outside_paths: tuple[Path, ...] = ()  # paths outside the workspace the call touches


def _parsed(texts: list[str]) -> list[Rule]:
    rules: list[Rule] = []
    for text in texts:
        try:
            rules.append(parse_rule(text))
        except RuleError:
            continue  # reported when the configuration is loaded (see invalid_rules)
    return rules


@dataclass
class ApprovalPolicy:
    """Decides per call. `allow`/`deny` hold rules (`TOOL` or `TOOL(PATTERN)`); deny
    always wins. `session_allow` collects the rules "always" granted this session."""

    mode: PermissionMode = "default"
    allow: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    session_allow: list[str] = field(default_factory=list)

    def evaluate(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Verdict:
        subject = subject_of(tool, args, ctx.workspace)
        denied = denying_rule(_parsed(self.deny), tool, subject)
        if denied is not None:
            return Verdict(
                "deny",
                f"{tool.name} is refused by the deny rule {denied.text} in the user's permissions. "
                "Do not retry it; find another way or ask the user.",
            )
        if tool.kind == "edit" and subject.kind == "path" and is_git_internal(Path(subject.absolute)):
            return Verdict(
                "deny",
                f"{subject.whole} is inside .git/: file tools never write git internals. "
                "Use git itself through run_shell.",
            )
        if self.mode == "plan" and tool.kind in _KIND_WORDS:
            return Verdict(
                "deny",
                f"{tool.name} is not available: the session is in plan mode, which is read-only "
                f"(no {_KIND_WORDS[tool.kind]}). Read and search to work out the plan, then present "
                "it; the user switches modes when they want it carried out.",
            )
        outside = outside_paths(tool, args, ctx)
        if outside:
            names = ", ".join(str(p) for p in outside)
            return Verdict(
                "ask",
                f"{tool.name} would use a path outside the workspace: {names}",
                None,
                outside,
            )
        command = args.get("command")
        if tool.kind == "execute" and isinstance(command, str):
            danger = find_danger(command)
            if danger:
                return Verdict("ask", f"destructive command ({danger}): always asked about, in every mode")
        if not tool.requires_approval:
            return Verdict("allow")
        allowed = allowing_rule(_parsed([*self.allow, *self.session_allow]), tool, subject)
        if allowed is not None:
            return Verdict("allow", f"allowed by rule {allowed.text}")
        if self.mode == "yolo":
            return Verdict("allow", "allowed by yolo mode")
        if self.mode == "auto-edit" and tool.kind == "edit":
            return Verdict("allow", "allowed by auto-edit mode")
        what = _KIND_WORDS.get(tool.kind, f"using {tool.name}")
        return Verdict("ask", f"{self.mode} mode asks before {what}", self.always_rule(tool, args, ctx))

    def always_rule(self, tool: Tool, args: dict[str, Any], ctx: ToolContext) -> str:
        """The narrowest sensible rule covering this call (what "always" saves)."""
        return suggest_rule(tool, args, ctx.workspace)

    def remember(self, rule: str) -> None:
        """Allow `rule` for the rest of the session (after "always")."""
        try:
            text = parse_rule(rule).text
        except RuleError:
            return
        if text not in self.session_allow:
            self.session_allow.append(text)
