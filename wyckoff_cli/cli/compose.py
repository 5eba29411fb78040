"""The composition root: config in, runtime out. Used by `run` and `chat`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from wyckoff_cli.core.errors import ProviderConfigError
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.providers.factory import build_fallback
from wyckoff_cli.providers.spec import ModelSpec, parse_model_id
from wyckoff_cli.runtime.approval import Approver
from wyckoff_cli.runtime.loop import AgentRuntime, RuntimeSettings, child_environment
from wyckoff_cli.storage.config import Config, LoadedConfig, load_config
from wyckoff_cli.storage.paths import find_project_root
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.policy import ApprovalPolicy, PermissionMode

if TYPE_CHECKING:
    from wyckoff_cli.context.compaction import ArchiveFn
    from wyckoff_cli.context.instructions import ProjectInstructions
    from wyckoff_cli.context.manager import ContextManager, SessionId
    from wyckoff_cli.runtime.hooks import RuntimeHooks


@dataclass
class Workspace:
    root: Path
    loaded: LoadedConfig

    @property
    def config(self) -> Config:
        return self.loaded.config


def open_workspace(cwd: Path) -> Workspace:
    root = find_project_root(cwd)
    return Workspace(root, load_config(root))


def resolve_model_spec(name: str, config: Config) -> ModelSpec:
    """An alias from `[models]`, else `provider:model`."""
    alias = config.models.get(name)
    if alias is not None:
        return ModelSpec(
            provider=alias.provider,
            model=alias.model,
            base_url=alias.base_url,
            api_key_env=alias.api_key_env,
            thinking=alias.thinking,
            thinking_budget=alias.thinking_budget,
            reasoning_effort=alias.reasoning_effort,
            max_tokens=alias.max_tokens,
            temperature=alias.temperature,
            top_p=alias.top_p,
            stream_idle_timeout=config.stream_idle_timeout,
            api_key=_stored_key(alias.provider, alias.api_key_env),
        )
    try:
        provider, model = parse_model_id(name)
    except ProviderConfigError as exc:
        raise ProviderConfigError(exc.message + _known_models(name, config)) from None
    return ModelSpec(
        provider, model, stream_idle_timeout=config.stream_idle_timeout, api_key=_stored_key(provider, None)
    )


def _known_models(name: str, config: Config) -> str:
    """Which ids exist: the configured aliases and the closest catalogue models."""
    import difflib

    from wyckoff_cli.models.catalogue import default_catalogue

    catalogue = [f"{entry.provider}:{entry.name}" for entry in default_catalogue().entries]
    close = difflib.get_close_matches(name, catalogue, n=3, cutoff=0.4)
    close += [c for c in catalogue if name and name.split(":")[-1] in c and c not in close][:3]
    text = ""
    if config.models:
        text += ". Your aliases: " + ", ".join(sorted(config.models))
    if close:
        text += ". Did you mean " + " or ".join(close[:3]) + "?"
    return text


def _stored_key(provider: str, api_key_env: str | None) -> str | None:
    """A key pasted into the app's setup screen, used only when the environment has
    none for this provider (environment variables win)."""
    import os

    from wyckoff_cli.providers.credentials import KEY_VARIABLES
    from wyckoff_cli.storage.credentials import load_credentials

    variables = (api_key_env,) if api_key_env else KEY_VARIABLES.get(provider, ())
    if not variables or any(os.environ.get(v, "").strip() for v in variables):
        return None
    return load_credentials().get(provider)


def build_model(name: str, config: Config) -> LLMProvider:
    """`name` (or the configured default) followed by `config.fallbacks`, each guarded
    by the stream watchdog; a failed model sits out `config.fallback_cooldown` seconds.
    A missing key or unknown model of any of them fails here, before any request."""
    names = [name, *(n for n in config.fallbacks if n != name)]
    specs = [resolve_model_spec(n, config) for n in names]
    return build_fallback(specs, cooldown=config.fallback_cooldown)


def build_policy(config: Config, mode: PermissionMode, extra_allow: list[str]) -> ApprovalPolicy:
    """The session's policy: config rules plus `--allow` rules; a malformed rule is a
    configuration error naming it (never silently ignored)."""
    from wyckoff_cli.core.errors import ConfigError
    from wyckoff_cli.tools.policy import invalid_rules

    problems = invalid_rules([*config.permissions.allow, *config.permissions.deny, *extra_allow])
    if problems:
        raise ConfigError("; ".join(problems))
    return ApprovalPolicy(
        mode=mode,
        allow=[*config.permissions.allow, *extra_allow],
        deny=list(config.permissions.deny),
    )


def build_runtime(
    workspace: Workspace,
    provider: LLMProvider,
    *,
    policy: ApprovalPolicy,
    approver: Approver | None = None,
    max_tool_rounds: int | None = None,
    results_dir: Path | None = None,
    context: ContextManager | None = None,
    hooks: Sequence[RuntimeHooks] = (),
) -> AgentRuntime:
    """The runtime for one session. With `context` (see `build_context`), its tools
    (`remember`) are added and it manages the context."""
    settings = RuntimeSettings(max_tool_rounds=max_tool_rounds or workspace.config.max_tool_rounds)
    tools = default_registry()
    for tool in context.tools() if context is not None else ():
        tools.add(tool)
    return AgentRuntime(
        provider,
        tools,
        workspace=workspace.root,
        policy=policy,
        approver=approver,
        settings=settings,
        results_dir=results_dir,
        tool_env=child_environment(),
        context=context,
        redact=offload_redactor(workspace.config),
        hooks=hooks,
    )


def offload_redactor(config: Config) -> Callable[[str], str]:
    """Removes every known key (environment, `api_key_env` variables, the credentials
    file) and key-looking values from tool results written to disk."""
    from wyckoff_cli.storage.paths import credentials_file
    from wyckoff_cli.storage.redact import Redactor

    names = [alias.api_key_env for alias in config.models.values() if alias.api_key_env]
    return Redactor.from_environment(key_env_names=names, credentials_file=credentials_file()).secrets


def build_context(
    workspace: Workspace,
    provider: LLMProvider,
    *,
    cwd: Path | None = None,
    archive: ArchiveFn | None = None,
    session_id: SessionId = None,
) -> ContextManager:
    """The session's context manager: the model's window and max output from the
    model facts, `[context]` settings, AGENTS.md / WYCKOFF.md from the project root
    down to `cwd` plus the user-level ones in the config dir, the memory database in
    the data dir (when `context.memory` is on), and the system prompt over all of it.
    `archive` is `SessionRecorder.record_compaction` (settable later as
    `manager.archive`). Reads files; opens nothing yet (the database opens on use)."""
    from wyckoff_cli.cli.memory_cmd import memory_db_path
    from wyckoff_cli.context.instructions import load_project_instructions
    from wyckoff_cli.context.manager import ContextManager
    from wyckoff_cli.context.memory import MemoryStore
    from wyckoff_cli.context.prompt import Environment, SystemPromptBuilder
    from wyckoff_cli.models.facts import resolve_model_facts
    from wyckoff_cli.storage.paths import config_dir

    config = workspace.config
    root = workspace.root
    here = (cwd or root).resolve()
    facts = resolve_model_facts(provider.name, config.model_overrides)
    user_dir = config_dir()

    def instructions() -> ProjectInstructions:
        return load_project_instructions(root, here, user_dir)

    manager = ContextManager(
        context_window=facts.context_window,
        max_output=facts.max_output,
        reserve_tokens=config.context.reserve_tokens,
        reload_instructions=instructions,
        memory=MemoryStore(memory_db_path()) if config.context.memory else None,
        project_root=root,
        archive=archive,
        session_id=session_id,
    )
    tool_names = [*default_registry().names(), *(tool.name for tool in manager.tools())]
    manager.prompt = SystemPromptBuilder(Environment.detect(root), tuple(tool_names), instructions())
    return manager
