"""The provider table (`core/provider_table.py`) put to work: which adapter class
serves a model, and which vendor family a model id belongs to.

`adapter_class(spec)` imports the adapter module named in the table (so importing
this module imports no adapter and no SDK); an `openai:` model that the catalogue
marks `api = "responses"` (or a spec with `api = "responses"`) is served by the
Responses API adapter. `vendor_of(model_id)` gives the family a model's thinking
blocks and server-tool parts are tagged with, so `ollama:` and `openai:` share
reasoning rules.
"""

from __future__ import annotations

import importlib
from typing import Any

from wyckoff_cli.core.errors import ProviderConfigError
from wyckoff_cli.core.provider_table import ProviderEntry, provider_entry
from wyckoff_cli.providers.spec import ModelSpec

RESPONSES = "wyckoff_cli.providers.openai_responses:OpenAIResponsesProvider"


def entry_for(provider: str) -> ProviderEntry:
    entry = provider_entry(provider)
    if entry is None:
        raise ProviderConfigError(f"the {provider} provider is not available in this build")
    return entry


def uses_responses_api(spec: ModelSpec) -> bool:
    """Whether an OpenAI model goes through the Responses API: the spec's `api`, else
    the catalogue's entry for the model (GPT-5-class and o-series models that need it)."""
    entry = entry_for(spec.provider)
    if entry.adapter == "openai-responses":
        return True
    if entry.name != "openai":
        return spec.api == "responses"
    if spec.api is not None:
        return spec.api == "responses"
    if spec.base_url:
        return False  # another endpoint speaking the OpenAI protocol: Chat Completions
    from wyckoff_cli.models.catalogue import default_catalogue

    found = default_catalogue().lookup(spec.model)
    return found is not None and found[0].provider == "openai" and found[0].api == "responses"


def adapter_class(spec: ModelSpec) -> Any:
    """The class that builds `spec`'s provider (imports its module)."""
    entry = entry_for(spec.provider)
    target = RESPONSES if entry.adapter == "openai" and uses_responses_api(spec) else entry.factory
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)


def vendor_of(model_id: str) -> str:
    """`ollama:qwen3` → `openai`; `anthropic:claude-x` → `anthropic`; unknown → its prefix."""
    prefix = model_id.split(":", 1)[0] if ":" in model_id else model_id
    entry = provider_entry(prefix)
    if entry is None:
        return prefix
    return "openai" if entry.adapter == "openai-responses" else entry.adapter
