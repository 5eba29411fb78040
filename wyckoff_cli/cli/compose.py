"""The composition root: config in, runtime out. Used by `run` and `chat`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.providers.factory import ModelSpec, build_fallback, parse_model_id
from wyckoff_cli.runtime.approval import Approver
from wyckoff_cli.runtime.loop import AgentRuntime, RuntimeSettings, child_environment
from wyckoff_cli.storage.config import Config, LoadedConfig, load_config
from wyckoff_cli.storage.paths import find_project_root
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.policy import ApprovalPolicy, PermissionMode


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
        )
    provider, model = parse_model_id(name)
    return ModelSpec(provider, model, stream_idle_timeout=config.stream_idle_timeout)


def build_model(name: str, config: Config) -> LLMProvider:
    """`name` (or the configured default) followed by `config.fallbacks`, each guarded
    by the stream watchdog; a failed model sits out `config.fallback_cooldown` seconds.
    A missing key or unknown model of any of them fails here, before any request."""
    names = [name, *(n for n in config.fallbacks if n != name)]
    specs = [resolve_model_spec(n, config) for n in names]
    return build_fallback(specs, cooldown=config.fallback_cooldown)


def build_policy(config: Config, mode: PermissionMode, extra_allow: list[str]) -> ApprovalPolicy:
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
) -> AgentRuntime:
    settings = RuntimeSettings(max_tool_rounds=max_tool_rounds or workspace.config.max_tool_rounds)
    return AgentRuntime(
        provider,
        default_registry(),
        workspace=workspace.root,
        policy=policy,
        approver=approver,
        settings=settings,
        results_dir=results_dir,
        tool_env=child_environment(),
    )
