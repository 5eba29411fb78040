"""API keys for the setup screen: which provider a model needs a key from, whether
one is set, and storing a pasted one (the credentials file, mode 0600)."""

from __future__ import annotations

import os
from pathlib import Path

from wyckoff_cli.core.errors import ProviderConfigError
from wyckoff_cli.core.provider_table import key_owner
from wyckoff_cli.session.models import resolve_model_spec
from wyckoff_cli.storage.config import Config


def key_provider(name: str, config: Config) -> str | None:
    """The provider whose pasted key model `name` would use (None: an unknown id)."""
    try:
        return key_owner(resolve_model_spec(name, config).provider)
    except ProviderConfigError:
        return None


def have_key(provider: str) -> bool:
    """A key for `provider` is set in the environment or was pasted before."""
    from wyckoff_cli.providers.credentials import KEY_VARIABLES
    from wyckoff_cli.storage.credentials import load_credentials

    return provider in load_credentials() or any(os.environ.get(v) for v in KEY_VARIABLES.get(provider, ()))


def save_key(provider: str, key: str) -> Path:
    """Store a pasted key (0600, in the config folder), used from now on; returns the file."""
    from wyckoff_cli.storage.credentials import save_credential
    from wyckoff_cli.storage.paths import credentials_file

    save_credential(provider, key)
    return credentials_file()
