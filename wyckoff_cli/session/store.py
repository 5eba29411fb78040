"""The session store every host uses: redaction of every known key, per-call pricing."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wyckoff_cli.core.usage import Usage
    from wyckoff_cli.models.facts import Prices
    from wyckoff_cli.storage.config import Config
    from wyckoff_cli.storage.session_info import CallCost
    from wyckoff_cli.storage.sessions import SessionStore


def build_session_store(config: Config | None = None) -> SessionStore:
    """The session store with redaction of every known key and per-call pricing."""
    from wyckoff_cli.storage import paths
    from wyckoff_cli.storage.redact import Redactor
    from wyckoff_cli.storage.sessions import SessionStore

    key_envs = [a.api_key_env for a in config.models.values() if a.api_key_env] if config else []
    redactor = Redactor.from_environment(key_env_names=key_envs, credentials_file=paths.credentials_file())
    return SessionStore(redactor=redactor, call_cost=call_coster(config))


def call_coster(config: Config | None) -> CallCost:
    """Prices one call with the catalogue and the config's `model_overrides` (the
    catalogue is read at the first call priced, not before)."""
    prices: dict[str, Prices | None] = {}

    def cost(model: str, usage: Usage) -> float | None:
        from wyckoff_cli.models.costs import cost_of
        from wyckoff_cli.models.facts import resolve_model_facts

        if model not in prices:
            facts = resolve_model_facts(model, config.model_overrides if config else None)
            prices[model] = facts.prices if facts.prices.known else None
        known = prices[model]
        result = cost_of(usage, known) if known is not None else None
        return None if result is None else result.total

    return cost
