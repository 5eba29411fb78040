"""API keys pasted into the app: `credentials.toml` in the config folder, mode 0600.

Never in `config.toml`, never logged. Environment variables win over this file.
"""

from __future__ import annotations

import tomllib

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.atomic import write_atomic


def load_credentials() -> dict[str, str]:
    path = paths.credentials_file()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from None
    return {k: v for k, v in data.items() if isinstance(v, str) and v}


def save_credential(provider: str, key: str) -> None:
    """Store `key` for `provider` (file and folder created private)."""
    import tomli_w

    data = load_credentials()
    data[provider] = key.strip()
    path = paths.credentials_file()
    paths.ensure_private_dir(path.parent)
    write_atomic(path, tomli_w.dumps(data), mode=0o600)
