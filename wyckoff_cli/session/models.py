"""From a model name (an alias or `provider:model`) to a provider ready to call."""

from __future__ import annotations

from typing import Any

from wyckoff_cli.core.errors import ConfigError, ProviderConfigError
from wyckoff_cli.core.events import UsageReported
from wyckoff_cli.providers.base import LLMProvider
from wyckoff_cli.providers.factory import build_fallback
from wyckoff_cli.providers.retry import RetryPolicy
from wyckoff_cli.providers.spec import ModelSpec, parse_model_id
from wyckoff_cli.storage.config import Config


def skip_to_fallback(session: Any) -> str | None:
    """Esc while a model's retries wait: the next fallback takes over now (its name is
    returned); None when nothing waits so, no fallback follows or no `session` (a built
    `Session`) runs yet — then Esc interrupts."""
    provider = session.runtime.provider if session is not None else None
    skip = getattr(provider, "skip_waiting", None)
    return skip() if callable(skip) else None


def resolve_model_spec(name: str, config: Config) -> ModelSpec:
    """An alias from `[models]`, else `provider:model`; marked to use the vendor's own
    web search where the model has one and `[web] server_search` is on."""
    from wyckoff_cli.providers.server_search import with_server_search

    return with_server_search(_model_spec(name, config), config.web.server_search)


def _model_spec(name: str, config: Config) -> ModelSpec:
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
            api=alias.api,
            stream_idle_timeout=config.stream_idle_timeout,
            api_key=_stored_key(alias.provider, alias.api_key_env),
        )
    try:
        provider, model = parse_model_id(name)
    except ProviderConfigError as exc:
        raise ProviderConfigError(exc.message + known_models_hint(name, config)) from None
    return ModelSpec(
        provider, model, stream_idle_timeout=config.stream_idle_timeout, api_key=_stored_key(provider, None)
    )


def known_models_hint(name: str, config: Config) -> str:
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


def known_model_name(name: str, config: Config) -> bool:
    """A name the configuration already knows: an alias's model, or figures saved
    under it before (the catalogue's names are looked up separately)."""
    return name in config.model_overrides or any(alias.model == name for alias in config.models.values())


def unknown_bare_name(name: str, config: Config) -> str:
    """The error for a model name without a provider that nothing knows."""
    return (
        f"unknown model {name!r}: not an alias and not in the catalogue. Name it as PROVIDER:MODEL "
        f"(a local server: ollama:{name}, lmstudio:{name} or vllm:{name}), or add an alias with "
        f"`wyckoff model add`" + known_models_hint(name, config)
    )


def _stored_key(provider: str, api_key_env: str | None) -> str | None:
    """A key pasted into the app's setup screen, used only when the environment has
    none for this provider (environment variables win)."""
    import os

    from wyckoff_cli.core.provider_table import key_owner
    from wyckoff_cli.providers.credentials import KEY_VARIABLES
    from wyckoff_cli.storage.credentials import load_credentials

    variables = (api_key_env,) if api_key_env else KEY_VARIABLES.get(provider, ())
    if not variables or any(os.environ.get(v, "").strip() for v in variables):
        return None
    return load_credentials().get(key_owner(provider))


def build_model(name: str, config: Config) -> LLMProvider:
    """`name` (or the configured default) followed by `config.fallbacks`, each guarded
    by the stream watchdog and retried per `retry_attempts` / `retry_max_delay`; a failed
    model sits out `config.fallback_cooldown` seconds (or its `retry-after`). A missing
    key or unknown model of any of them fails here, before any request."""
    names = [name, *(n for n in config.fallbacks if n != name)]
    specs = [resolve_model_spec(n, config) for n in names]
    if config.retry_attempts < 1 or config.retry_max_delay < 0:
        raise ConfigError(
            "retry_attempts must be at least 1 (1 turns retries off) and retry_max_delay at least 0, "
            f"got {config.retry_attempts} and {config.retry_max_delay:g}"
        )
    retry = RetryPolicy(
        attempts=config.retry_attempts,
        max_delay=config.retry_max_delay,
        stall_limit=config.stream_stall_limit,
    )
    return build_fallback(specs, cooldown=config.fallback_cooldown, retry=retry)


def model_id(name: str, config: Config) -> str:
    """The `provider:model` id a name stands for (the name itself when it names none)."""
    try:
        return resolve_model_spec(name, config).id
    except ProviderConfigError:
        return name


def check_model(name: str, config: Config) -> str | None:
    """Why `name` cannot be used (an unknown id, a missing key), or None."""
    from wyckoff_cli.providers.credentials import resolve_api_key

    try:
        spec = resolve_model_spec(name, config)
        if spec.provider != "scripted":
            resolve_api_key(spec)
    except ProviderConfigError as exc:
        return exc.message
    return None


def context_window_of(name: str, config: Config) -> int:
    """The context window of a model id or alias (the catalogue, then the overrides)."""
    from wyckoff_cli.models.facts import resolve_model_facts

    return resolve_model_facts(model_id(name, config), config.model_overrides).context_window


def call_price(name: str, usage: UsageReported, config: Config) -> tuple[float, float] | None:
    """(cost, saved by the cache) of one call in USD; None when unpriced."""
    from wyckoff_cli.models.costs import cost_of
    from wyckoff_cli.models.facts import resolve_model_facts

    facts = resolve_model_facts(model_id(name, config), config.model_overrides)
    cost = cost_of(usage.usage, facts.prices)
    return None if cost is None else (cost.total, cost.saved)
