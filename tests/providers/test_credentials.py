"""Keys and base URLs: where they come from, the missing-key message, no key in text."""

from __future__ import annotations

import pytest

from wyckoff_cli.core.errors import ProviderConfigError
from wyckoff_cli.providers.credentials import (
    LOCAL_PLACEHOLDER_KEY,
    redact,
    resolve_api_key,
    resolve_base_url,
)
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("anthropic", "ANTHROPIC_API_KEY"),
        ("openai", "OPENAI_API_KEY"),
        ("gemini", "GEMINI_API_KEY (or GOOGLE_API_KEY)"),
    ],
)
def test_missing_key_is_one_line_naming_the_variable(provider: str, variable: str) -> None:
    with pytest.raises(ProviderConfigError) as caught:
        build_provider(ModelSpec(provider, "some-model"))
    message = caught.value.message
    assert message == f"no API key for {provider}:some-model: set the environment variable {variable}"
    assert "\n" not in message
    assert caught.value.exit_code == 2 and caught.value.kind == "configuration"


def test_api_key_env_is_named_when_missing() -> None:
    spec = ModelSpec(
        "openai", "deepseek-chat", base_url="https://api.deepseek.com", api_key_env="DEEPSEEK_API_KEY"
    )
    with pytest.raises(ProviderConfigError, match="set the environment variable DEEPSEEK_API_KEY"):
        resolve_api_key(spec, {})
    assert resolve_api_key(spec, {"DEEPSEEK_API_KEY": "ds"}) == "ds"


def test_order_of_sources() -> None:
    env = {"GEMINI_API_KEY": "gem", "GOOGLE_API_KEY": "goo", "ANTHROPIC_API_KEY": "ant"}
    assert resolve_api_key(ModelSpec("gemini", "m"), env) == "goo"  # as google-genai does
    assert resolve_api_key(ModelSpec("gemini", "m"), {"GEMINI_API_KEY": "gem"}) == "gem"
    assert resolve_api_key(ModelSpec("anthropic", "m", api_key="explicit"), env) == "explicit"


def test_local_openai_compatible_servers_need_no_key() -> None:
    spec = ModelSpec("openai", "qwen3", base_url="http://127.0.0.1:1234/v1")
    assert resolve_api_key(spec, {}) == LOCAL_PLACEHOLDER_KEY
    from_env = {"OPENAI_BASE_URL": "http://localhost:11434/v1"}
    assert resolve_api_key(ModelSpec("openai", "qwen3"), from_env) == LOCAL_PLACEHOLDER_KEY
    with pytest.raises(ProviderConfigError):
        resolve_api_key(ModelSpec("openai", "m", base_url="https://api.example.com/v1"), {})


def test_base_url_from_spec_then_environment() -> None:
    env = {"ANTHROPIC_BASE_URL": "http://env", "OPENAI_BASE_URL": "", "GOOGLE_GEMINI_BASE_URL": "http://g"}
    assert resolve_base_url(ModelSpec("anthropic", "m"), env) == "http://env"
    assert resolve_base_url(ModelSpec("anthropic", "m", base_url="http://spec"), env) == "http://spec"
    assert resolve_base_url(ModelSpec("openai", "m"), env) is None
    assert resolve_base_url(ModelSpec("gemini", "m"), env) == "http://g"


def test_keys_stay_out_of_reprs_and_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-abcdef1234567890")
    provider = build_provider(ModelSpec("openai", "gpt-5", api_key="sk-proj-abcdef1234567890"))
    assert "abcdef" not in repr(provider)
    assert "abcdef" not in repr(ModelSpec("openai", "gpt-5", api_key="sk-proj-abcdef1234567890"))
    assert redact("bad key sk-proj-abcdef1234567890 given") == "bad key sk-pr*** given"
    assert redact("token=my-secret-token", "my-secret-token") == "token=***"
    assert redact("AIzaSyA1234567890abcdefghijklmnop here") == "*** here"
