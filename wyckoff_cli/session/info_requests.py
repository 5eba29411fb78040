"""How the chat controller answers `Cost`, `Memory`, `Permissions` and `Export`:
what there is in the session, as events (kept beside the controller so it stays small)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.session.status import (
    StatusModel,
    agent_rows,
    purpose_rows,
    resent_rows,
    saved_cell,
    totals_row,
)

if TYPE_CHECKING:
    from wyckoff_cli.storage.permissions import RuleKind
    from wyckoff_cli.storage.recorder import SessionRecorder
    from wyckoff_cli.storage.sessions import SessionStore
    from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

log = logging.getLogger(__name__)

# (store, session id, "md" | "json") -> the exported text; the CLI's `sessions export`
Exporter = Callable[["SessionStore", str, str], str]

COST_COLUMNS = [
    "model",
    "calls",
    "input",
    "output",
    "cache read",
    "cache write",
    "searches",
    "cost",
    "cache saved",
]


async def events_of(events: Sequence[ev.RuntimeEvent]) -> AsyncIterator[ev.RuntimeEvent]:
    """A request's answer that is ready at once, as the stream `handle()` returns."""
    for event in events:
        yield event


def cost_output(status: StatusModel) -> ev.RuntimeEvent:
    if not status.per_model:
        return ev.Notice("info", "No model calls in this session yet")
    rows = [totals_row(model, totals) for model, totals in status.per_model.items()]
    rows += agent_rows(status)  # sub-agents' share, already in the models' rows
    rows += purpose_rows(status)  # compaction, titles, ...: also in the models' rows
    rows += resent_rows(status)  # the tool results that cost most in resent context
    rows.append(
        [
            "total",
            "",
            f"{status.input_tokens:,}",
            f"{status.output_tokens:,}",
            f"{status.cache_read_tokens:,}",
            f"{status.cache_write_tokens:,}",
            f"{sum(t.web_searches for t in status.per_model.values()):,}",
            (f"${status.cost:.4f}" if status.all_priced else f"${status.cost:.4f} + unpriced")
            if status.any_priced
            else "unpriced",
            saved_cell(status.saved),
        ]
    )
    return ev.CommandOutput("cost", title="This session", columns=list(COST_COLUMNS), rows=rows)


def memories_output(root: Path, query: str) -> ev.RuntimeEvent:
    from wyckoff_cli.context.memory import MemoryStore
    from wyckoff_cli.storage.paths import memory_db_path

    with MemoryStore(memory_db_path()) as memories:
        if query:
            found = [scored.memory for scored in memories.search(query, project=root)]
        else:
            found = memories.list_memories(project=root)
    text = "\n".join(f"#{m.id} [{m.scope}/{m.kind}] {m.text}" for m in found)
    return ev.CommandOutput("memory", text=text or "No memories yet.")


def permissions_output(
    root: Path,
    remove: str | None,
    always_allowed: list[str],
    policy: ApprovalPolicy | None,
    ignored: Sequence[str] = (),
    auto_allow: str = "",
) -> ev.RuntimeEvent:
    """The saved rules and this session's (`ignored`: the project's allow rules not
    trusted, so marked; `auto_allow`: a line on sandbox auto-allow); `remove`: take a
    saved rule out (and out of this run's `always_allowed` and the session's allow-list)."""
    from wyckoff_cli.storage.permissions import list_rules, remove_rule

    if remove:
        removed = remove_rule(remove, root=root)
        if remove in always_allowed:
            always_allowed.remove(remove)
        if policy is not None and remove in policy.session_allow:
            policy.session_allow.remove(remove)
        text = f"Removed {remove} from {len(removed)} list(s)" if removed else f"No saved rule {remove}"
        return ev.Notice("info", text)
    saved = "\n".join(
        f"{r.kind:<5} {r.rule}  ({r.scope}: {r.file})"
        + (
            " [not trusted: ignored]"
            if r.scope == "project" and r.kind == "allow" and r.rule in ignored
            else ""
        )
        for r in list_rules(root)
    )
    session = ", ".join(policy.session_allow) if policy is not None else ""
    return ev.CommandOutput(
        "permissions",
        text=f"{saved or 'No saved rules.'}\nAllowed for this session: {session or 'none'}\n"
        + (f"{auto_allow}\n" if auto_allow else "")
        + "/permissions remove RULE removes a saved rule; /permissions trust trusts the project's "
        "allow rules and command files.",
    )


def export_output(
    root: Path,
    argument: str,
    session_id: str | None,
    recorder: SessionRecorder | None,
    store: Callable[[], SessionStore],
    exporter: Exporter | None,
) -> ev.RuntimeEvent:
    from wyckoff_cli.storage.atomic import write_atomic

    if session_id is None or recorder is None or exporter is None:
        return ev.Notice("warning", "Nothing to export yet")
    recorder.flush()
    # a relative FILE is in the project folder
    path = root / (Path(argument).expanduser() if argument else f"wyckoff-session-{session_id}.md")
    try:
        write_atomic(path, exporter(store(), session_id, "json" if path.suffix == ".json" else "md"))
    except Exception as exc:
        return ev.Notice("error", f"Export failed: {getattr(exc, 'message', exc)}")
    return ev.Notice("info", f"Exported to {path}")


def save_rule_quietly(rule: str, root: Path, kind: RuleKind) -> None:
    """Save an "always" answer's rule (`kind` allow or deny); a failure is logged, the
    rule still holds for this run. The user's own allow rule keeps a trusted project
    list trusted (issue 27)."""
    from wyckoff_cli.storage.permissions import save_rule
    from wyckoff_cli.storage.project_grants import allow_grant, keep_allow_trust

    try:
        before = allow_grant(root) if kind == "allow" else None
        save_rule(rule, root=root, kind=kind)
        if kind == "allow":
            keep_allow_trust(root, before)
    except (OSError, ConfigError) as exc:
        log.warning("cannot save the rule %s: %s", rule, exc)


def untrusted_allow_notice(root: Path) -> str:
    """The notice for the project's allow rules when they are ignored ("" otherwise)."""
    from wyckoff_cli.storage.project_grants import untrusted_allow_notice as notice

    try:
        return notice(root)
    except ConfigError as exc:
        return str(exc)
