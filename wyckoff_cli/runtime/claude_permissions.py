"""The `permissions` block of Claude Code's settings files, read in Claude Code's rule syntax.

`.claude/settings.json`, `.claude/settings.local.json` (and `~/.claude/settings.json`):

    {"permissions": {"allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"],
                     "ask": ["Bash(git push:*)"], "deny": ["WebFetch", "Read(./.env)"],
                     "additionalDirectories": ["../docs/"], "defaultMode": "acceptEdits"}}

Rules are Claude Code's (`Bash(git diff:*)`, `Edit(src/**)`, `WebFetch(domain:…)`), which
Wyckoff's rule parser reads as they are (tools/permissions/rules.py, the one table in
core/claude_names.py). They merge with Wyckoff's rules: deny wins over ask over allow.
What narrows (`deny`, `ask`) applies at once; what widens (`allow`,
`additionalDirectories`: more folders the tools may read and write and the sandbox
leaves writable; `defaultMode`: the start-up mode, Claude Code's names mapped through
core/claude_names.py) only once the project file is trusted, with the same trust as its
hooks (runtime/hook_config.py). Keys Wyckoff does not use are listed once (`wyckoff
hooks list`, `/hooks`), never dropped without a word.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wyckoff_cli.core.claude_names import CLAUDE_MODES
from wyckoff_cli.tools.permissions.rules import RuleError, parse_rule

RULE_KEYS = ("allow", "ask", "deny")
# Claude Code's settings keys Wyckoff reads (the rest are listed as not used)
USED_SETTINGS = {"hooks", "permissions", "statusLine", "$schema"}


@dataclass
class ClaudePermissions:
    allow: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    directories: list[str] = field(default_factory=list)  # `additionalDirectories`, as written
    default_mode: str | None = None  # `defaultMode` as Wyckoff's mode name

    @property
    def widening(self) -> dict[str, Any]:
        """What needs trust, as data (hashed into the file's trust record)."""
        found: dict[str, Any] = {"allow": sorted(self.allow)} if self.allow else {}
        if self.directories:
            found["additionalDirectories"] = sorted(self.directories)
        if self.default_mode is not None:
            found["defaultMode"] = self.default_mode
        return found

    def grants(self) -> tuple[str, ...]:
        """The lines the trust question shows."""
        lines = [f"allow {rule}" for rule in self.allow]
        lines += [f"read and write files in {folder}" for folder in self.directories]
        if self.default_mode is not None:
            lines.append(f"start in {self.default_mode} mode")
        return tuple(lines)


def read_permissions(data: dict[str, Any], where: str, problems: list[str]) -> ClaudePermissions | None:
    """The settings file's `permissions` (None when it has none); what is wrong or unused
    goes to `problems`, once each."""
    unused = sorted(key for key in data if key not in USED_SETTINGS)
    if unused:
        problems.append(f"{where}: settings Wyckoff does not use: {', '.join(unused)}")
    block = data.get("permissions")
    if block is None:
        return None
    if not isinstance(block, dict):
        problems.append(f"{where}: `permissions` must be an object")
        return None
    found = ClaudePermissions()
    for key in RULE_KEYS:
        for rule in _strings(block.get(key, []), f"{where}: permissions.{key}", problems):
            try:
                parse_rule(rule)
            except RuleError as exc:
                problems.append(f"{where}: permissions.{key}: {exc}; skipped")
                continue
            getattr(found, key).append(rule)
    directories = _strings(
        block.get("additionalDirectories", []), f"{where}: additionalDirectories", problems
    )
    found.directories = directories
    mode = block.get("defaultMode")
    if mode is not None:
        if mode in CLAUDE_MODES:
            found.default_mode = CLAUDE_MODES[mode]
        else:
            problems.append(
                f"{where}: permissions.defaultMode {mode!r} is not one of {', '.join(CLAUDE_MODES)}"
            )
    other = sorted(set(block) - {*RULE_KEYS, "additionalDirectories", "defaultMode"})
    if other:
        problems.append(f"{where}: permissions keys Wyckoff does not use: {', '.join(other)}")
    return found


def _strings(value: Any, where: str, problems: list[str]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where} must be a list of strings")
        return []
    return [v.strip() for v in value if v.strip()]
