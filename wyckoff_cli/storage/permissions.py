"""Saved permission rules: `[permissions] allow/deny` in the project's
`.wyckoff/config.toml` and in the user's `config.toml`.

"Always" in the approval dialog saves its rule to the project file with
`save_rule(rule, root=…)`; `wyckoff permissions list|add|remove` and `/permissions`
manage them. Files are rewritten atomically and validated (other keys are kept).
Rule syntax is checked by the callers (`wyckoff_cli.tools.permissions.rules.check_rule`): this
module only stores text.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.config import read_toml, update_config_file

RuleKind = Literal["allow", "deny"]
Scope = Literal["project", "user"]
KINDS: tuple[RuleKind, ...] = ("allow", "deny")
SCOPES: tuple[Scope, ...] = ("project", "user")


@dataclass(frozen=True, slots=True)
class SavedRule:
    rule: str
    kind: RuleKind
    scope: Scope
    file: Path


def rules_file(scope: Scope, root: Path | None) -> Path:
    if scope == "project":
        if root is None:
            raise ConfigError("there is no project here to save a project rule in")
        return paths.project_config_file(root)
    return paths.config_file()


def _rules_in(path: Path, kind: RuleKind) -> list[str]:
    data = read_toml(path) or {}
    section = data.get("permissions", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: permissions must be a table")
    values = section.get(kind, [])
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ConfigError(f"{path}: permissions.{kind} must be a list of strings")
    return list(values)


def list_rules(root: Path | None) -> list[SavedRule]:
    """Every saved rule: the user's file first, then the project's; allow before deny."""
    found: list[SavedRule] = []
    for scope in ("user", "project"):
        if scope == "project" and root is None:
            continue
        path = rules_file(scope, root)
        for kind in KINDS:
            found.extend(SavedRule(rule, kind, scope, path) for rule in _rules_in(path, kind))
    return found


def save_rule(rule: str, *, root: Path | None, kind: RuleKind = "allow", scope: Scope = "project") -> Path:
    """Add `rule` to a list (nothing changes when it is already there). Returns the file."""
    rule = rule.strip()
    if not rule:
        raise ConfigError("an empty rule cannot be saved")
    path = rules_file(scope, root)
    current = _rules_in(path, kind)
    if rule not in current:
        if scope == "project":
            paths.ensure_private_dir(path.parent)
        update_config_file(path, {f"permissions.{kind}": [*current, rule]})
    return path


def remove_rule(
    rule: str, *, root: Path | None, kind: RuleKind | None = None, scope: Scope | None = None
) -> list[SavedRule]:
    """Remove `rule` from every list it is in (or only the given kind/scope).
    Returns what was removed (empty when the rule was not saved anywhere)."""
    rule = rule.strip()
    removed: list[SavedRule] = []
    for saved in list_rules(root):
        if saved.rule != rule or (kind and saved.kind != kind) or (scope and saved.scope != scope):
            continue
        remaining = [r for r in _rules_in(saved.file, saved.kind) if r != rule]
        update_config_file(saved.file, {f"permissions.{saved.kind}": remaining or None})
        removed.append(saved)
    return removed
