"""Build a provider from a `ModelSpec` (the composition root resolves config into it).

`build_provider` makes one model's provider (key and base URL resolved first, so a
missing key fails before any request) wrapped in the stream watchdog;
`build_fallback` makes the default model plus its fallbacks. Vendor modules are
imported only when their provider is built, and their SDKs only at the first request,
so importing this module imports no SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from wyckoff_cli.core.errors import ProviderConfigError
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.providers.spec import PROVIDERS, ModelSpec


def build_provider(spec: ModelSpec, *, watchdog: bool = True) -> LLMProvider:
    """One model's provider, guarded by the stream watchdog (`spec.stream_idle_timeout`).
    Raises `ProviderConfigError` for an unknown provider or a missing API key."""
    provider = _build_vendor(spec)
    if not watchdog:
        return provider
    from wyckoff_cli.providers.watchdog import WatchdogProvider

    return WatchdogProvider(provider, spec.stream_idle_timeout)


def _build_vendor(spec: ModelSpec) -> LLMProvider:
    if spec.provider == "scripted":
        from wyckoff_cli.providers.scripted import ScriptedProvider

        return ScriptedProvider.from_file(Path(spec.model).expanduser())
    if spec.provider not in PROVIDERS:
        raise ProviderConfigError(f"the {spec.provider} provider is not available in this build")
    from wyckoff_cli.providers.credentials import resolve_api_key, resolve_base_url

    api_key = resolve_api_key(spec)
    base_url = resolve_base_url(spec)
    if spec.provider == "anthropic":
        from wyckoff_cli.providers.anthropic import AnthropicProvider

        return AnthropicProvider(spec, api_key=api_key, base_url=base_url)
    if spec.provider == "openai":
        from wyckoff_cli.providers.openai_compat import OpenAICompatProvider

        return OpenAICompatProvider(spec, api_key=api_key, base_url=base_url)
    from wyckoff_cli.providers.gemini import GeminiProvider

    return GeminiProvider(spec, api_key=api_key, base_url=base_url)


def build_fallback(
    specs: Sequence[ModelSpec],
    *,
    cooldown: float = 120.0,
    clock: Callable[[], float] | None = None,
) -> LLMProvider:
    """The first spec's provider, falling back to the others in order on retryable
    failures (see `providers.fallback`). One spec gives that provider unwrapped;
    duplicates are dropped. Every model is built (and its key checked) up front."""
    unique: list[ModelSpec] = []
    for spec in specs:
        if all(spec.id != seen.id or spec.base_url != seen.base_url for seen in unique):
            unique.append(spec)
    if not unique:
        raise ProviderConfigError("no model configured: set `model` in config.toml or pass --model")
    providers = [build_provider(spec) for spec in unique]
    if len(providers) == 1:
        return providers[0]
    from wyckoff_cli.providers.fallback import FallbackProvider

    if clock is None:
        return FallbackProvider(providers, cooldown=cooldown)
    return FallbackProvider(providers, cooldown=cooldown, clock=clock)
