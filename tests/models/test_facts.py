"""`resolve_model_facts()`: override → catalogue (exact, then without suffix) →
pattern → 64K, each figure with its source."""

from __future__ import annotations

from wyckoff_cli.models.facts import KNOWN_PROVIDERS, find_override, resolve_model_facts, split_model_id
from wyckoff_cli.providers.spec import PROVIDERS
from wyckoff_cli.storage.config import ModelOverride


def test_known_providers_match_the_provider_factory() -> None:
    assert KNOWN_PROVIDERS == PROVIDERS


def test_split_model_id_only_takes_a_known_provider_as_prefix() -> None:
    assert split_model_id("anthropic:claude-sonnet-4-5") == ("anthropic", "claude-sonnet-4-5")
    assert split_model_id("openai:qwen3:8b") == ("openai", "qwen3:8b")
    assert split_model_id("qwen3:8b") == (None, "qwen3:8b")
    assert split_model_id("gpt-5") == (None, "gpt-5")
    assert split_model_id("openai:") == (None, "openai:")


def test_a_catalogue_model_by_exact_id() -> None:
    facts = resolve_model_facts("anthropic:claude-sonnet-4-5")
    assert (facts.provider, facts.model) == ("anthropic", "claude-sonnet-4-5")
    assert (facts.context_window, facts.context_window_source) == (200_000, "catalogue")
    assert facts.in_catalogue and facts.exact_match and facts.override_key is None
    assert facts.prices.as_dict() == {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}
    assert set(facts.price_sources.values()) == {"catalogue"}
    assert facts.max_output == 64_000 and facts.reasoning == "budget" and facts.images is True


def test_a_dated_id_falls_back_to_the_entry_without_its_suffix() -> None:
    facts = resolve_model_facts("anthropic:claude-sonnet-4-5-20250929")
    assert facts.entry is not None and facts.entry.name == "claude-sonnet-4-5"
    assert not facts.exact_match and facts.context_window_source == "catalogue"
    assert facts.model == "claude-sonnet-4-5-20250929"


def test_the_catalogue_matches_whatever_adapter_reaches_the_model() -> None:
    via_anthropic_api = resolve_model_facts("anthropic:deepseek-chat")
    assert via_anthropic_api.entry is not None and via_anthropic_api.entry.vendor == "deepseek"
    assert resolve_model_facts("deepseek-chat").prices == via_anthropic_api.prices


def test_a_user_override_wins_figure_by_figure() -> None:
    overrides = {"anthropic:claude-sonnet-4-5": ModelOverride(context_window=1_000_000, output=20.0)}
    facts = resolve_model_facts("anthropic:claude-sonnet-4-5", overrides)
    assert (facts.context_window, facts.context_window_source) == (1_000_000, "configured")
    assert facts.prices.output == 20.0 and facts.price_sources["output"] == "configured"
    assert facts.prices.input == 3.0 and facts.price_sources["input"] == "catalogue"
    assert facts.override_key == "anthropic:claude-sonnet-4-5"


def test_overriding_a_price_drops_the_catalogues_long_prompt_tiers() -> None:
    assert resolve_model_facts("gemini:gemini-2.5-pro").prices.tiers
    window_only = {"gemini:gemini-2.5-pro": ModelOverride(context_window=500_000)}
    assert resolve_model_facts("gemini:gemini-2.5-pro", window_only).prices.tiers
    priced = {"gemini:gemini-2.5-pro": ModelOverride(input=1.0)}
    assert resolve_model_facts("gemini:gemini-2.5-pro", priced).prices.tiers == ()


def test_a_smaller_configured_window_caps_max_output() -> None:
    overrides = {"openai:gpt-5.1": ModelOverride(context_window=32_000)}
    assert resolve_model_facts("openai:gpt-5.1", overrides).max_output == 32_000


def test_an_override_under_the_bare_name_applies_under_any_provider() -> None:
    overrides = {"qwen3:8b": ModelOverride(context_window=40_960, input=0.0, output=0.0)}
    facts = resolve_model_facts("openai:qwen3:8b", overrides)
    assert (facts.context_window, facts.context_window_source, facts.override_key) == (
        40_960,
        "configured",
        "qwen3:8b",
    )
    exact = {**overrides, "openai:qwen3:8b": ModelOverride(context_window=8_192)}
    assert resolve_model_facts("openai:qwen3:8b", exact).context_window == 8_192
    assert find_override("gemini:other", exact) is None
    assert find_override("x", None) is None


def test_an_unknown_model_gets_an_inferred_window_and_no_prices() -> None:
    facts = resolve_model_facts("openai:llama-3.3-70b-versatile")
    assert (facts.context_window, facts.context_window_source) == (131_072, "inferred")
    assert facts.context_pattern == "*llama-3.[123]*"
    assert not facts.in_catalogue and facts.max_output is None and facts.reasoning is None
    assert facts.prices.as_dict() == dict.fromkeys(("input", "output", "cache_read", "cache_write"))
    assert not facts.prices.known and facts.price_sources == {}


def test_a_model_nobody_knows_counts_as_64k() -> None:
    facts = resolve_model_facts("openai:my-local-model")
    assert (facts.context_window, facts.context_window_source, facts.context_pattern) == (
        65_536,
        "default",
        None,
    )


def test_partial_prices_for_an_unknown_model_are_known_enough_to_cost() -> None:
    overrides = {"openai:my-local-model": ModelOverride(input=0.5, output=1.0)}
    facts = resolve_model_facts("openai:my-local-model", overrides)
    assert facts.prices.known and facts.prices.cache_read is None
    assert dict(facts.price_sources) == {"input": "configured", "output": "configured"}
    assert facts.to_dict()["price_sources"] == {"input": "configured", "output": "configured"}
