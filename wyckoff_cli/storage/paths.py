"""Where Wyckoff keeps things. Nothing is created at import time.

Locations come from platformdirs (`user_config_dir("wyckoff")`, `user_data_dir`,
`user_cache_dir`). `WYCKOFF_HOME=DIR` relocates all of them under DIR (`DIR/config`,
`DIR/data`, `DIR/cache`), which is what the tests do.

Everything Wyckoff creates under these folders is private: folders 0700 (missing
parents included, which `Path.mkdir(parents=True)` would make 0755), files 0600. A
folder that cannot be created or written is a `StorageError` with one line saying
which folder and why, never a traceback.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from wyckoff_cli.core.errors import WyckoffError


class StorageError(WyckoffError, OSError):
    """Wyckoff's own folders cannot be created or written (read-only, full, not a folder).
    Also an OSError, so code that tolerates write failures (the recorder) still does."""

    exit_code = 2


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


def claude_home() -> Path:
    """Claude Code's user folder: `$CLAUDE_CONFIG_DIR` (as Claude Code reads it), else
    `~/.claude`. Read as the user level unless `[compat] claude_home = false`."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def plugins_dir() -> Path:
    """Installed Claude Code plugins and their marketplaces (storage/plugins.py)."""
    return data_dir() / "plugins"


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
    """Create `path` and its missing parents, each with mode 0700 (existing folders
    are left as they are). Raises `StorageError` naming the folder and the reason."""
    if path.is_dir():
        return path
    missing: list[Path] = []
    folder = path
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    try:
        for new in reversed(missing):
            with contextlib.suppress(FileExistsError):
                new.mkdir(mode=0o700)
                os.chmod(new, 0o700)  # the umask may have taken bits away; never added any
        if not path.is_dir():
            raise NotADirectoryError(20, "Not a directory")
    except OSError as exc:
        raise StorageError(f"cannot create the folder {path}: {_reason(exc)}{home_hint()}") from None
    return path


def create_private_file(path: Path) -> Path:
    """Make sure `path` exists with mode 0600 (a file created by other code with a
    wider mode, e.g. by SQLite, is narrowed when it is ours)."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    make_private(path)
    return path


def make_private(path: Path, mode: int = 0o600) -> None:
    """Narrow `path` to `mode` when it is ours and allows more; missing files are skipped."""
    with contextlib.suppress(FileNotFoundError, PermissionError):
        info = path.stat()
        if info.st_mode & 0o077 and info.st_uid == os.getuid():
            os.chmod(path, mode)


def writable_problem(folder: Path) -> str | None:
    """Why Wyckoff cannot keep files in `folder` (created if missing), or None.
    Probes with a real file, since permission bits alone say nothing for root or a
    read-only mount."""
    try:
        ensure_private_dir(folder)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".wyckoff-probe-")
        os.close(fd)
        os.unlink(probe)
    except StorageError as exc:
        return exc.message
    except OSError as exc:
        return f"cannot write in {folder}: {_reason(exc)}{home_hint()}"
    return None


def home_hint() -> str:
    value = os.environ.get("WYCKOFF_HOME")
    if value:
        return f" (WYCKOFF_HOME is {value}: point it at a writable folder)"
    return ""


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def memory_db_path() -> Path:
    return data_dir() / "memory.db"
