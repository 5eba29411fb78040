"""The provider table: one declaration per provider, read by every place that lists them."""

from __future__ import annotations

import pytest

from tests.providers.conftest import call
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.core.provider_table import PROVIDER_NAMES, PROVIDER_TABLE, setup_entries
from wyckoff_cli.models.facts import KNOWN_PROVIDERS, split_model_id
from wyckoff_cli.providers.credentials import LOCAL_PLACEHOLDER_KEY, resolve_api_key, resolve_base_url
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.openai_compat import OpenAICompatProvider
from wyckoff_cli.providers.registry import adapter_class, vendor_of
from wyckoff_cli.providers.spec import ModelSpec, parse_model_id
from wyckoff_cli.storage.config import ConfigError, ModelAlias, build
from wyckoff_cli.testing.fake_server import FakeServer

LOCAL = {
    "ollama": "http://localhost:11434/v1",
    "lmstudio": "http://localhost:1234/v1",
    "vllm": "http://localhost:8000/v1",
}


def test_every_list_of_providers_reads_the_table() -> None:
    from pathlib import Path

    from wyckoff_cli.tui.screens.setup import SetupNeeds, SetupScreen

    needs = SetupNeeds("m", None, "", lambda _: False, lambda _p, _k: Path(), lambda: None)
    setup = [(e.name, e.setup_variable) for e in SetupScreen(needs)._entries()]
    assert KNOWN_PROVIDERS == PROVIDER_NAMES
    assert (
        [name for name, _ in setup] == [e.name for e in setup_entries()] == ["anthropic", "openai", "gemini"]
    )
    assert setup[2][1] == "GEMINI_API_KEY"
    for entry in PROVIDER_TABLE:
        cls = adapter_class(ModelSpec(entry.name, "m"))
        assert cls.__name__ == entry.factory.rsplit(":", 1)[1]


@pytest.mark.parametrize("name", sorted(LOCAL))
def test_local_servers_need_no_key_and_have_their_usual_url(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert parse_model_id(f"{name}:qwen3:8b") == (name, "qwen3:8b")
    assert split_model_id(f"{name}:qwen3:8b") == (name, "qwen3:8b")
    spec = ModelSpec(name, "qwen3:8b")
    assert resolve_base_url(spec) == LOCAL[name]
    assert resolve_api_key(spec) == LOCAL_PLACEHOLDER_KEY
    provider = build_provider(spec, watchdog=False)
    assert isinstance(provider, OpenAICompatProvider) and provider.base_url == LOCAL[name]
    assert vendor_of(f"{name}:qwen3") == "openai"
    variable = {"ollama": "OLLAMA_BASE_URL", "lmstudio": "LMSTUDIO_BASE_URL", "vllm": "VLLM_BASE_URL"}[name]
    monkeypatch.setenv(variable, "http://gpu-box:9000/v1")
    assert resolve_base_url(spec) == "http://gpu-box:9000/v1"
    assert resolve_base_url(ModelSpec(name, "m", base_url="http://other:1/v1")) == "http://other:1/v1"
    monkeypatch.setenv(f"{name.upper()}_API_KEY", "sk-local-1234567890")
    assert resolve_api_key(spec) == "sk-local-1234567890"


async def test_an_ollama_model_talks_chat_completions(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLLAMA_BASE_URL", server.openai_url)
    server.script({"thinking": "hm", "text": "local hello", "tool_calls": [{"name": "list_dir", "args": {}}]})
    provider = build_provider(ModelSpec("ollama", "qwen3-coder"), watchdog=False)
    parts, _, _ = await call(provider)
    assert TextPart("local hello") in parts
    thinking = next(p for p in parts if isinstance(p, ThinkingPart))
    assert thinking.provider == "openai"  # same family as openai: reasoning goes back
    calls = [p for p in parts if isinstance(p, ToolCallPart)]
    history = [
        Message.user("hi"),
        Message("assistant", tuple(parts)),
        Message.tool_result(calls[0].id, "list_dir", "a"),
    ]
    server.script({"text": "ok"})
    await call(provider, history)
    assert server.bodies[1]["messages"][2]["reasoning_content"] == "hm"
    assert server.requests[0].headers["authorization"] == f"Bearer {LOCAL_PLACEHOLDER_KEY}"


def test_config_aliases_accept_every_provider_and_name_the_choices() -> None:
    alias = build(ModelAlias, {"provider": "vllm", "model": "m", "api": "responses"}, None)
    assert alias.provider == "vllm" and alias.api == "responses"
    with pytest.raises(ConfigError, match="must be one of 'anthropic', 'openai', 'openai-responses'"):
        build(ModelAlias, {"provider": "bedrock", "model": "m"}, None)
