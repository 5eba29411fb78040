"""Build a provider from a `ModelSpec` (the composition root resolves config into it).

`build_provider` makes one model's provider (key and base URL resolved first, so a
missing key fails before any request) wrapped in the stream watchdog;
`build_fallback` makes the default model plus its fallbacks, each retried on
transient errors (`providers.retry`) before the next one is tried. Which class serves
a provider comes from the provider table (`providers.registry`). Vendor modules are
imported only when their provider is built; building one starts importing its SDK in
the background (`providers.preload`), so the first request does not wait for it.
Importing this module imports no SDK.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from wyckoff_cli.core.errors import ProviderConfigError
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.providers.registry import adapter_class, entry_for
from wyckoff_cli.providers.retry import RetryPolicy
from wyckoff_cli.providers.spec import ModelSpec

_DEFAULT_RETRY = RetryPolicy()


def build_provider(
    spec: ModelSpec, *, watchdog: bool = True, retry: RetryPolicy | None = None
) -> LLMProvider:
    """One model's provider, guarded by the stream watchdog (`spec.stream_idle_timeout`)
    and, with `retry`, retried on transient errors. Raises `ProviderConfigError` for an
    unknown provider or a missing API key."""
    provider = _build_vendor(spec)
    if watchdog:
        from wyckoff_cli.providers.watchdog import WatchdogProvider

        provider = WatchdogProvider(provider, spec.stream_idle_timeout)
    if retry is not None and retry.attempts > 1:
        from wyckoff_cli.providers.retry import RetryingProvider

        if watchdog and 0 < retry.stall_limit < spec.stream_idle_timeout:
            # one attempt may always stay silent as long as the watchdog allows (a model
            # that thinks for minutes before its first token, with a raised idle timeout)
            retry = dataclasses.replace(retry, stall_limit=spec.stream_idle_timeout)
        provider = RetryingProvider(provider, retry)
    return provider


def _build_vendor(spec: ModelSpec) -> LLMProvider:
    entry = entry_for(spec.provider)
    if entry.adapter == "scripted":
        from wyckoff_cli.providers.scripted import ScriptedProvider

        return ScriptedProvider.from_file(Path(spec.model).expanduser())
    from wyckoff_cli.providers.credentials import resolve_api_key, resolve_base_url
    from wyckoff_cli.providers.preload import preload

    api_key = resolve_api_key(spec)
    base_url = resolve_base_url(spec)
    preload(entry.sdk)
    provider: LLMProvider = adapter_class(spec)(spec, api_key=api_key, base_url=base_url)
    return provider


def build_fallback(
    specs: Sequence[ModelSpec],
    *,
    cooldown: float = 120.0,
    clock: Callable[[], float] | None = None,
    retry: RetryPolicy | None = _DEFAULT_RETRY,
) -> LLMProvider:
    """The first spec's provider, falling back to the others in order on retryable
    failures (see `providers.fallback`), each model first retried per `retry`. One spec
    gives that provider unwrapped; duplicates are dropped. Every model is built (and
    its key checked) up front."""
    unique: list[ModelSpec] = []
    for spec in specs:
        if all(spec.id != seen.id or spec.base_url != seen.base_url for seen in unique):
            unique.append(spec)
    if not unique:
        raise ProviderConfigError("no model configured: set `model` in config.toml or pass --model")
    providers = [build_provider(spec, retry=retry) for spec in unique]
    if len(providers) == 1:
        return providers[0]
    from wyckoff_cli.providers.fallback import FallbackProvider

    if clock is None:
        return FallbackProvider(providers, cooldown=cooldown)
    return FallbackProvider(providers, cooldown=cooldown, clock=clock)
