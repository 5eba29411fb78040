"""Every provider Wyckoff can talk to, declared once.

One `ProviderEntry` per `provider:` prefix: its name, the adapter (wire protocol) that
serves it, the environment variables for its key and base URL, its usual base URL,
the line the setup screen shows, and the adapter class that builds it (named as
`module:Class`, imported only when the provider is built). The credential lookup,
the factory, the model-id parser, the config checker, the catalogue and the setup
screen all read this table; adding a provider is adding an entry here. Plain data:
imports nothing of ours.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProviderEntry:
    name: str  # the `provider:` prefix
    adapter: str  # "anthropic" | "openai" | "openai-responses" | "gemini" | "scripted"
    factory: str  # "module:Class" of the adapter
    key_variables: tuple[str, ...] = ()  # consulted in order
    base_url_variable: str | None = None
    default_base_url: str | None = None  # None: the SDK's default
    key_required: bool = True  # False: a local server that ignores keys
    setup_label: str | None = None  # shown on the setup screen (None: not listed)
    key_hint: str = ""  # how a message names the key variable(s)
    sdk: str | None = None  # the SDK module, imported in the background once needed
    setup_variable: str = ""  # the variable the setup screen names


_OPENAI = "wyckoff_cli.providers.openai_compat:OpenAICompatProvider"

PROVIDER_TABLE: tuple[ProviderEntry, ...] = (
    ProviderEntry(
        "anthropic",
        "anthropic",
        "wyckoff_cli.providers.anthropic:AnthropicProvider",
        ("ANTHROPIC_API_KEY",),
        "ANTHROPIC_BASE_URL",
        setup_label="Claude (Anthropic)",
        key_hint="ANTHROPIC_API_KEY",
        sdk="anthropic",
        setup_variable="ANTHROPIC_API_KEY",
    ),
    ProviderEntry(
        "openai",
        "openai",
        _OPENAI,
        ("OPENAI_API_KEY",),
        "OPENAI_BASE_URL",
        setup_label="OpenAI and compatible endpoints",
        key_hint="OPENAI_API_KEY",
        sdk="openai",
        setup_variable="OPENAI_API_KEY",
    ),
    ProviderEntry(
        "openai-responses",
        "openai-responses",
        "wyckoff_cli.providers.openai_responses:OpenAIResponsesProvider",
        ("OPENAI_API_KEY",),
        "OPENAI_BASE_URL",
        key_hint="OPENAI_API_KEY",
        sdk="openai",
    ),
    ProviderEntry(
        "gemini",
        "gemini",
        "wyckoff_cli.providers.gemini:GeminiProvider",
        ("GOOGLE_API_KEY", "GEMINI_API_KEY"),  # google-genai prefers GOOGLE_API_KEY
        "GOOGLE_GEMINI_BASE_URL",
        setup_label="Gemini",
        key_hint="GEMINI_API_KEY (or GOOGLE_API_KEY)",
        sdk="google.genai",
        setup_variable="GEMINI_API_KEY",
    ),
    ProviderEntry(
        "ollama",
        "openai",
        _OPENAI,
        ("OLLAMA_API_KEY",),
        "OLLAMA_BASE_URL",
        "http://localhost:11434/v1",
        key_required=False,
        key_hint="OLLAMA_API_KEY",
        sdk="openai",
    ),
    ProviderEntry(
        "lmstudio",
        "openai",
        _OPENAI,
        ("LMSTUDIO_API_KEY",),
        "LMSTUDIO_BASE_URL",
        "http://localhost:1234/v1",
        key_required=False,
        key_hint="LMSTUDIO_API_KEY",
        sdk="openai",
    ),
    ProviderEntry(
        "vllm",
        "openai",
        _OPENAI,
        ("VLLM_API_KEY",),
        "VLLM_BASE_URL",
        "http://localhost:8000/v1",
        key_required=False,
        key_hint="VLLM_API_KEY",
        sdk="openai",
    ),
    ProviderEntry(
        "scripted",
        "scripted",
        "wyckoff_cli.providers.scripted:ScriptedProvider",
        key_required=False,
    ),
)

PROVIDER_NAMES: tuple[str, ...] = tuple(entry.name for entry in PROVIDER_TABLE)
_BY_NAME = {entry.name: entry for entry in PROVIDER_TABLE}


def provider_entry(name: str) -> ProviderEntry | None:
    return _BY_NAME.get(name)


def setup_entries() -> tuple[ProviderEntry, ...]:
    """The providers the setup screen offers a key for."""
    return tuple(entry for entry in PROVIDER_TABLE if entry.setup_label)


def key_owner(name: str) -> str:
    """The provider whose pasted key `name` uses: the setup entry reading the same
    variable (`openai-responses` uses the key pasted for `openai`), else `name`."""
    entry = _BY_NAME.get(name)
    if entry is None or entry.setup_label:
        return name
    for owner in setup_entries():
        if owner.setup_variable in entry.key_variables:
            return owner.name
    return name
