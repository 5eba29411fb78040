"""Where a provider's API key and base URL come from, and keeping keys out of text.

Order for the key: `ModelSpec.api_key` (set by the composition root, e.g. from a
credentials file), then the variable named by `api_key_env`, then the vendor's usual
variables. A missing key is a `ProviderConfigError` with one line naming the variable
to set, raised when the provider is built, before any request. Keys are never put in
messages, logs or reprs: `redact()` scrubs them out of vendor error text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from wyckoff_cli.core.errors import ProviderConfigError
from wyckoff_cli.core.provider_table import PROVIDER_TABLE, provider_entry

if TYPE_CHECKING:
    from wyckoff_cli.providers.spec import ModelSpec

# From the provider table: the SDKs' own variables, in the order they are consulted.
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    e.name: e.key_variables for e in PROVIDER_TABLE if e.key_variables
}
BASE_URL_VARIABLES: dict[str, str] = {
    e.name: e.base_url_variable for e in PROVIDER_TABLE if e.base_url_variable
}
# What an OpenAI-compatible server on this machine (Ollama, LM Studio, vLLM) gets as a
# key when none is configured: such servers ignore it, the SDK insists on one.
LOCAL_PLACEHOLDER_KEY = "not-needed"
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


def resolve_base_url(spec: ModelSpec, environ: Mapping[str, str] | None = None) -> str | None:
    """The spec's base URL, else the provider's variable, else its usual local URL
    (Ollama, LM Studio, vLLM), else None (the vendor SDK's default)."""
    env = os.environ if environ is None else environ
    if spec.base_url:
        return spec.base_url
    variable = BASE_URL_VARIABLES.get(spec.provider)
    value = env.get(variable, "").strip() if variable else ""
    entry = provider_entry(spec.provider)
    return value or (entry.default_base_url if entry is not None else None)


def is_local(base_url: str | None) -> bool:
    if not base_url:
        return False
    host = urlparse(base_url).hostname or ""
    return host in _LOCAL_HOSTS


def resolve_api_key(spec: ModelSpec, environ: Mapping[str, str] | None = None) -> str:
    """The key for `spec`, or a `ProviderConfigError` naming the variable to set."""
    env = os.environ if environ is None else environ
    if spec.api_key:
        return spec.api_key
    if spec.api_key_env:
        value = env.get(spec.api_key_env, "").strip()
        if value:
            return value
        if _keyless(spec, env):
            return LOCAL_PLACEHOLDER_KEY
        raise ProviderConfigError(
            f"no API key for {spec.id}: set the environment variable {spec.api_key_env} "
            "(named by api_key_env in its [models] entry)"
        )
    variables = KEY_VARIABLES.get(spec.provider, ())
    for variable in variables:
        value = env.get(variable, "").strip()
        if value:
            return value
    if _keyless(spec, env):
        return LOCAL_PLACEHOLDER_KEY
    entry = provider_entry(spec.provider)
    if not variables or entry is None:
        raise ProviderConfigError(f"the {spec.provider} provider takes no API key")
    wanted = entry.key_hint or " or ".join(variables)
    hint = ""
    if entry.adapter.startswith("openai") and resolve_base_url(spec, env):
        hint = ", or name another variable with api_key_env in its [models] entry"
    raise ProviderConfigError(f"no API key for {spec.id}: set the environment variable {wanted}{hint}")


def _keyless(spec: ModelSpec, env: Mapping[str, str]) -> bool:
    """A provider for local servers, or an OpenAI-compatible endpoint on this machine:
    such servers ignore the key, the SDK insists on one."""
    entry = provider_entry(spec.provider)
    if entry is None:
        return False
    if not entry.key_required:
        return True
    return entry.adapter.startswith("openai") and is_local(resolve_base_url(spec, env))


def request_timeout(spec: ModelSpec) -> float | None:
    """`extra.request_timeout` (seconds): the SDK's HTTP timeout, when set. The stream
    watchdog (`stream_idle_timeout`) is what normally ends a silent call."""
    value = spec.extra.get("request_timeout")
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


_KEY_LIKE = re.compile(r"\b(sk-[A-Za-z0-9_\-]{2})[A-Za-z0-9_\-*.]{6,}|\bAIza[0-9A-Za-z_\-]{20,}")


def redact(text: str, *secrets: str | None) -> str:
    """`text` without the given secrets and without anything shaped like an API key."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _KEY_LIKE.sub(lambda m: (m.group(1) or "") + "***", text)
