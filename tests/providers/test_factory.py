"""Building providers: watchdog around every model, fallback chains from config."""

from __future__ import annotations

import pytest

from wyckoff_cli.core.errors import ProviderConfigError
from wyckoff_cli.providers.anthropic import AnthropicProvider
from wyckoff_cli.providers.factory import build_fallback, build_provider
from wyckoff_cli.providers.fallback import FallbackProvider
from wyckoff_cli.providers.gemini import GeminiProvider
from wyckoff_cli.providers.openai_compat import OpenAICompatProvider
from wyckoff_cli.providers.retry import RetryingProvider
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.providers.watchdog import WatchdogProvider
from wyckoff_cli.session.models import build_model
from wyckoff_cli.storage.config import Config, ModelAlias


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-key")
    monkeypatch.setenv("OPENAI_API_KEY", "o-key")
    monkeypatch.setenv("GEMINI_API_KEY", "g-key")


@pytest.mark.parametrize(
    ("vendor", "cls"),
    [("anthropic", AnthropicProvider), ("openai", OpenAICompatProvider), ("gemini", GeminiProvider)],
)
def test_every_provider_is_guarded_by_the_watchdog(vendor: str, cls: type) -> None:
    provider = build_provider(ModelSpec(vendor, "m", stream_idle_timeout=12.5))
    assert isinstance(provider, WatchdogProvider)
    assert isinstance(provider.inner, cls)
    assert provider.idle_timeout == 12.5
    assert provider.name == f"{vendor}:m"


def test_fallback_chain_from_config_with_aliases_and_cooldown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", "d-key")
    config = Config(
        model="anthropic:claude-sonnet-4-5",
        fallbacks=["ds", "gemini:gemini-2.5-pro", "anthropic:claude-sonnet-4-5"],
        fallback_cooldown=30,
        stream_idle_timeout=45,
        models={
            "ds": ModelAlias(
                provider="openai",
                model="deepseek-chat",
                base_url="https://api.deepseek.com",
                api_key_env="DEEPSEEK_API_KEY",
            )
        },
    )
    chain = build_model(config.model, config)
    assert isinstance(chain, FallbackProvider)
    assert [p.name for p in chain.providers] == [
        "anthropic:claude-sonnet-4-5",
        "openai:deepseek-chat",
        "gemini:gemini-2.5-pro",
    ]
    assert chain.cooldown == 30
    # each model: retried on transient errors, inside that guarded by the watchdog
    assert all(isinstance(p, RetryingProvider) and p.policy.attempts == 3 for p in chain.providers)
    watchdogs = [p.inner for p in chain.providers if isinstance(p, RetryingProvider)]
    assert all(isinstance(w, WatchdogProvider) and w.idle_timeout == 45 for w in watchdogs)


def test_a_single_model_is_not_wrapped_in_a_chain() -> None:
    provider = build_model("openai:gpt-5", Config(fallbacks=[]))
    assert isinstance(provider, RetryingProvider) and isinstance(provider.inner, WatchdogProvider)
    assert isinstance(build_model("openai:gpt-5", Config(retry_attempts=1)), WatchdogProvider)


def test_a_fallback_without_its_key_fails_up_front(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    with pytest.raises(ProviderConfigError, match="GEMINI_API_KEY"):
        build_model("anthropic:claude-sonnet-4-5", Config(fallbacks=["gemini:gemini-2.5-pro"]))


def test_build_fallback_needs_a_model() -> None:
    with pytest.raises(ProviderConfigError):
        build_fallback([])


async def test_chat_collects_a_whole_answer_through_watchdog_and_chain() -> None:
    from tests.providers.conftest import TEST_KEY
    from wyckoff_cli.core.messages import Message
    from wyckoff_cli.testing.fake_server import FakeServer

    with FakeServer() as server:
        server.script({"status": 503}, {"text": "Whole answer.", "chunk_size": 3})
        specs = [
            ModelSpec("gemini", "gemini-2.5-pro", base_url=server.url, api_key=TEST_KEY),
            ModelSpec("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key=TEST_KEY),
        ]
        response = await build_fallback(specs).chat([Message.user("hi")], [], "")
    assert response.text == "Whole answer."
    assert response.usage.input_tokens == 100


@pytest.mark.parametrize(("attempts", "delay"), [(0, 30.0), (3, -1.0)])
def test_bad_retry_settings_are_a_config_error(attempts: int, delay: float) -> None:
    from wyckoff_cli.core.errors import ConfigError

    with pytest.raises(ConfigError, match="retry_attempts must be at least 1"):
        build_model("openai:gpt-5", Config(retry_attempts=attempts, retry_max_delay=delay))
