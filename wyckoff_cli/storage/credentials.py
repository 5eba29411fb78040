"""API keys pasted into the app: `credentials.toml` in the config folder, mode 0600.

Never in `config.toml`, never logged. Environment variables win over this file.
"""

from __future__ import annotations

import tomllib
from typing import Any

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.atomic import write_atomic


def _read_all() -> dict[str, Any]:
    path = paths.credentials_file()
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc})") from None


def _write_all(data: dict[str, Any]) -> None:
    import tomli_w

    path = paths.credentials_file()
    paths.ensure_private_dir(path.parent)
    write_atomic(path, tomli_w.dumps(data), mode=0o600)
    path.chmod(0o600)


def load_credentials() -> dict[str, str]:
    return {k: v for k, v in _read_all().items() if isinstance(v, str) and v}


def save_credential(provider: str, key: str) -> None:
    """Store `key` for `provider` (file and folder created private); tables other
    parts keep in the file (`[mcp_oauth.NAME]`) are left as they are."""
    data = _read_all()
    data[provider] = key.strip()
    _write_all(data)


def load_credential_table(section: str) -> dict[str, dict[str, Any]]:
    """`[SECTION.NAME]` tables of the file, e.g. the MCP OAuth tokens."""
    table = _read_all().get(section)
    return {k: v for k, v in table.items() if isinstance(v, dict)} if isinstance(table, dict) else {}


def save_credential_table(section: str, name: str, record: dict[str, Any] | None) -> None:
    """Replace (or with None remove) `[SECTION.NAME]`."""
    data = _read_all()
    table = data.get(section) if isinstance(data.get(section), dict) else {}
    assert isinstance(table, dict)
    if record is None:
        table.pop(name, None)
    else:
        table[name] = record
    if table:
        data[section] = table
    else:
        data.pop(section, None)
    _write_all(data)
