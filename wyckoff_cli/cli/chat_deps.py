"""Build the app's `ChatDeps` from a workspace's configuration."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from wyckoff_cli.cli.compose import (
    Workspace,
    build_context,
    build_model,
    build_policy,
    build_runtime,
    resolve_model_spec,
)
from wyckoff_cli.core.errors import ProviderError
from wyckoff_cli.core.events import UsageReported
from wyckoff_cli.providers.credentials import KEY_VARIABLES, resolve_api_key
from wyckoff_cli.runtime.approval import Approver
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.credentials import load_credentials, save_credential
from wyckoff_cli.storage.recorder import SessionRecorder
from wyckoff_cli.tui.chat_session import ChatDeps


def build_chat_deps(workspace: Workspace, model: str | None, mode: str | None) -> ChatDeps:
    from wyckoff_cli.cli.sessions_cmd import build_session_store

    config = workspace.config
    root = workspace.root
    store = build_session_store(config)

    def model_id(name: str) -> str:
        try:
            return resolve_model_spec(name, config).id
        except ProviderError:
            return name

    def context_window(name: str) -> int:
        from wyckoff_cli.models.facts import resolve_model_facts

        return resolve_model_facts(model_id(name), config.model_overrides).context_window

    def price(name: str, usage: UsageReported) -> tuple[float, float] | None:
        from wyckoff_cli.models.costs import cost_of
        from wyckoff_cli.models.facts import resolve_model_facts

        cost = cost_of(usage.usage, resolve_model_facts(model_id(name), config.model_overrides).prices)
        return None if cost is None else (cost.total, cost.saved)

    def check_model(name: str) -> str | None:
        try:
            spec = resolve_model_spec(name, config)
            if spec.provider != "scripted":
                resolve_api_key(spec)
        except ProviderError as exc:
            return exc.message
        return None

    def make_runtime(
        name: str, permission_mode: str, approver: Approver, recorder: SessionRecorder
    ) -> tuple[AgentRuntime, Callable[[], str]]:
        provider = build_model(name, config)
        context = build_context(
            workspace, provider, cwd=Path.cwd(), archive=recorder.record_compaction, session_id=recorder.id
        )
        policy = build_policy(config, permission_mode, [])  # type: ignore[arg-type]
        runtime = build_runtime(
            workspace,
            provider,
            policy=policy,
            approver=approver,
            results_dir=recorder.results_dir,
            context=context,
        )
        return runtime, lambda: context.system_prompt

    def have_key(provider: str) -> bool:
        return provider in load_credentials() or any(
            os.environ.get(v) for v in KEY_VARIABLES.get(provider, ())
        )

    def list_memories(query: str) -> str:
        from wyckoff_cli.cli.memory_cmd import open_store

        with open_store() as memories:
            if query:
                found = [scored.memory for scored in memories.search(query, project=root)]
            else:
                found = memories.list_memories(project=root)
        return "\n".join(f"#{m.id} [{m.scope}/{m.kind}] {m.text}" for m in found)

    def list_rules() -> str:
        from wyckoff_cli.storage.permissions import list_rules as saved_rules

        return "\n".join(f"{r.kind:<5} {r.rule}  ({r.scope}: {r.file})" for r in saved_rules(root))

    def remove_rule(rule: str) -> str:
        from wyckoff_cli.storage.permissions import remove_rule as remove

        removed = remove(rule, root=root)
        return f"Removed {rule} from {len(removed)} list(s)" if removed else f"No saved rule {rule}"

    def save_rule(rule: str) -> None:
        from wyckoff_cli.storage.permissions import save_rule as save

        save(rule, root=root)

    def export_session(session_id: str, target: Path | None) -> Path:
        from wyckoff_cli.cli.sessions_cmd import export_text
        from wyckoff_cli.storage.atomic import write_atomic

        path = target or root / f"wyckoff-session-{session_id}.md"
        write_atomic(path, export_text(store, session_id, "json" if path.suffix == ".json" else "md"))
        return path

    from wyckoff_cli.cli.mcp_session import open_mcp
    from wyckoff_cli.tools.mcp.host import McpHost

    mcp = McpHost(lambda on_event: open_mcp(workspace, None, model=model, on_event=on_event))
    models = [config.model, *config.fallbacks, *config.models]
    return ChatDeps(
        project_root=root,
        model=model or config.model,
        mode=mode or config.permission_mode,
        store=store,
        build_runtime=make_runtime,
        context_window=context_window,
        price=price,
        save_rule=save_rule,
        input_history_file=paths.data_dir() / "input-history" / f"{_project_slug(root)}.jsonl",
        models=list(dict.fromkeys(models)),
        check_model=check_model,
        list_memories=list_memories,
        list_rules=list_rules,
        remove_rule=remove_rule,
        export_session=export_session,
        have_key=have_key,
        save_key=save_credential,
        mcp=mcp,
    )


def _project_slug(root: Path) -> str:
    from wyckoff_cli.storage.sessions import project_key

    return project_key(root)
