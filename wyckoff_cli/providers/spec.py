"""`ModelSpec`: everything needed to talk to one model, and `provider:model` ids.

The composition root resolves configuration into a spec; the factory and every
adapter read it. Imports no adapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wyckoff_cli.core.errors import ProviderConfigError
from wyckoff_cli.core.provider_table import PROVIDER_NAMES

PROVIDERS = PROVIDER_NAMES  # every `provider:` prefix (core/provider_table.py)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """Everything needed to talk to one model. `provider:model` is its id."""

    provider: str
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    thinking: str | None = None  # "off" | "budget" | "adaptive"
    thinking_budget: int | None = None
    reasoning_effort: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stream_idle_timeout: float = 60.0
    api: str | None = None  # "chat" or "responses" (OpenAI); None: per the catalogue
    extra: dict[str, Any] = field(default_factory=dict)
    # A key handed over by the composition root (e.g. from a credentials file); when
    # None, the environment is read. Never shown in reprs.
    api_key: str | None = field(default=None, repr=False, compare=False)

    @property
    def id(self) -> str:
        return f"{self.provider}:{self.model}"


def parse_model_id(model_id: str) -> tuple[str, str]:
    """Split `provider:model`; raises `ProviderConfigError` naming the known providers."""
    provider, sep, model = model_id.partition(":")
    if not sep or not model or provider not in PROVIDERS:
        raise ProviderConfigError(
            f"unknown model {model_id!r}: name a model as PROVIDER:MODEL with PROVIDER one of "
            f"{', '.join(PROVIDERS)} (e.g. anthropic:claude-sonnet-4-5), or use an alias from "
            "[models] in config.toml (`wyckoff model list` shows them)"
        )
    return provider, model
