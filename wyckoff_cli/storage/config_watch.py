"""`ConfigWatch`: a project's config, read again when one of its files changed.

Most settings are read once, when a session starts. The few read at the moment they
matter (`[web] allow_private` and `allow_hosts`, at every fetch) come through a watch,
so a person who changes them after a refusal sees the change take effect at once. A
file is changed when its modification time or size differs; a changed file that no
longer loads (a syntax error, a bad value) leaves the last good config in use, and
`problem` says why.
"""

from __future__ import annotations

import logging
from pathlib import Path

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.config import Config, LoadedConfig, load_config

log = logging.getLogger(__name__)

Signature = tuple[tuple[int, int] | None, ...]


class ConfigWatch:
    def __init__(self, project_root: Path, loaded: LoadedConfig) -> None:
        self.project_root = project_root
        self.loaded = loaded
        self.problem: str | None = None  # why the latest change is not in use
        self._signature = self._current_signature()

    def _files(self) -> tuple[Path, ...]:
        return (paths.config_file(), paths.project_config_file(self.project_root))

    def _current_signature(self) -> Signature:
        found: list[tuple[int, int] | None] = []
        for path in self._files():
            try:
                info = path.stat()
            except OSError:
                found.append(None)
                continue
            found.append((info.st_mtime_ns, info.st_size))
        return tuple(found)

    def current(self) -> Config:
        """The config as its files say now (the last good one while they do not load)."""
        signature = self._current_signature()
        if signature != self._signature:
            self._signature = signature
            try:
                self.loaded = load_config(self.project_root)
                self.problem = None
            except (ConfigError, OSError) as exc:
                self.problem = str(exc)
                log.warning("config change not applied: %s", exc)
        return self.loaded.config
