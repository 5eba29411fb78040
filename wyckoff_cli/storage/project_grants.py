"""What a project's own files may grant, and whether the user trusted them to.

A cloned repository must not give itself permissions. Two kinds of project files can:
- the `permissions.allow` rules of `.wyckoff/config.toml` (kind `permissions`; the
  hash of the sorted rule list, so reordering or unrelated edits do not ask again);
- a project command file (`.wyckoff/commands/`, `.claude/commands/`) whose front matter
  has `allowed-tools` or whose body has `` !`…` `` snippets (kind `command`; the hash of
  the whole file, so any edit, by a person or a model, asks again).

Until trusted (storage/trust.py, the same records as project hooks), the allow rules
are ignored and a command's `allowed-tools` grant nothing; its snippets go through the
policy like any `run_shell` call. Deny rules always apply: they only narrow. The
user's own files (the Wyckoff home) need no trust. `wyckoff permissions trust` and
`/permissions trust` record the trust.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.config import read_toml
from wyckoff_cli.storage.trust import TrustState, TrustStore, canonical_hash, content_hash

ALLOW_KIND = "permissions"
COMMAND_KIND = "command"
TRUST_HINT = "`wyckoff permissions trust` (or /permissions trust in the app) trusts it"


@dataclass(frozen=True, slots=True)
class ProjectGrant:
    """One project file that grants something, with what it grants and its trust."""

    path: Path
    kind: str  # ALLOW_KIND or COMMAND_KIND
    digest: str
    state: TrustState
    grants: tuple[str, ...]  # the rules (and, for a command, its snippets) it grants

    @property
    def trusted(self) -> bool:
        return self.state == "trusted"


def allow_digest(rules: Iterable[str]) -> str:
    return canonical_hash(sorted(set(rules)))


def command_digest(data: bytes) -> str:
    return content_hash(data)


def project_allow_rules(root: Path) -> list[str]:
    """The `permissions.allow` rules of the project's own `.wyckoff/config.toml`."""
    path = paths.project_config_file(root)
    data = read_toml(path) or {}
    section = data.get("permissions", {})
    values = section.get("allow", []) if isinstance(section, dict) else []
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ConfigError(f"{path}: permissions.allow must be a list of strings")
    return list(values)


def allow_grant(root: Path, store: TrustStore | None = None) -> ProjectGrant | None:
    """The project's allow rules and their trust; None when it has none."""
    rules = project_allow_rules(root)
    if not rules:
        return None
    path = paths.project_config_file(root)
    digest = allow_digest(rules)
    state = (store or TrustStore()).state(path, ALLOW_KIND, digest)
    return ProjectGrant(path, ALLOW_KIND, digest, state, tuple(rules))


def user_allow_rules() -> list[str]:
    data = read_toml(paths.config_file()) or {}
    section = data.get("permissions", {})
    values = section.get("allow", []) if isinstance(section, dict) else []
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


def ignored_allow_rules(root: Path, store: TrustStore | None = None) -> list[str]:
    """The project's allow rules that do not apply: not trusted, and not also the user's."""
    grant = allow_grant(root, store)
    if grant is None or grant.trusted:
        return []
    own = set(user_allow_rules())
    return [rule for rule in grant.grants if rule not in own]


def untrusted_allow_notice(root: Path, store: TrustStore | None = None) -> str:
    """The one-line notice for ignored project allow rules ("" when none are)."""
    grant = allow_grant(root, store)
    if grant is None or grant.trusted or not ignored_allow_rules(root, store):
        return ""
    why = "changed since you trusted them" if grant.state == "changed" else "not trusted"
    return (
        f"the allow rules in {grant.path} are {why} and are ignored ({', '.join(grant.grants)}); {TRUST_HINT}"
    )


def command_state(path: Path, digest: str, store: TrustStore | None = None) -> TrustState:
    return (store or TrustStore()).state(path, COMMAND_KIND, digest)


def trust_grants(grants: Iterable[ProjectGrant], store: TrustStore | None = None) -> None:
    store = store or TrustStore()
    for grant in grants:
        store.trust(grant.path, grant.kind, grant.digest)


def revoke_grants(grants: Iterable[ProjectGrant], store: TrustStore | None = None) -> list[Path]:
    store = store or TrustStore()
    return [g.path for g in grants if store.revoke(g.path, g.kind)]


def keep_allow_trust(root: Path, before: ProjectGrant | None, store: TrustStore | None = None) -> None:
    """After the user changed the project's allow rules themselves (an "always" answer,
    `wyckoff permissions add|remove`): the list stays trusted when it was trusted (or
    empty) before; rules a repository brought in stay untrusted."""
    if before is not None and not before.trusted:
        return
    after = allow_grant(root, store)
    if after is not None and not after.trusted:
        trust_grants([after], store)
