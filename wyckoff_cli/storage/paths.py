"""Where Wyckoff keeps things. Nothing is created at import time.

Locations come from platformdirs (`user_config_dir("wyckoff")`, `user_data_dir`,
`user_cache_dir`). `WYCKOFF_HOME=DIR` relocates all of them under DIR (`DIR/config`,
`DIR/data`, `DIR/cache`), which is what the tests do.
"""

from __future__ import annotations

import os
from pathlib import Path

APP = "wyckoff"
PROJECT_DIR = ".wyckoff"


def _home() -> Path | None:
    value = os.environ.get("WYCKOFF_HOME")
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    home = _home()
    if home is not None:
        return home / "config"
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP))


def data_dir() -> Path:
    home = _home()
    if home is not None:
        return home / "data"
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP))


def cache_dir() -> Path:
    home = _home()
    if home is not None:
        return home / "cache"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir(APP))


def config_file() -> Path:
    return config_dir() / "config.toml"


def credentials_file() -> Path:
    """API keys pasted into the app (mode 0600), never in config.toml."""
    return config_dir() / "credentials.toml"


def log_file() -> Path:
    return cache_dir() / "wyckoff.log"


def find_project_root(start: Path) -> Path:
    """The nearest folder at or above `start` holding `.git` or `.wyckoff`; else `start`."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists() or (folder / PROJECT_DIR).is_dir():
            return folder
    return start


def project_config_file(root: Path) -> Path:
    return root / PROJECT_DIR / "config.toml"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and parents) with mode 0700 for the new folders."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path


def memory_db_path() -> Path:
    return data_dir() / "memory.db"
