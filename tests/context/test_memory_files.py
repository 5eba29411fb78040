"""The memory database's files are private (0600), -wal and -shm included."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from wyckoff_cli.context.memory import MemoryStore


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_database_and_its_wal_and_shm_are_0600(tmp_path: Path) -> None:
    path = tmp_path / "data" / "memory.db"
    old = os.umask(0o022)
    try:
        with MemoryStore(path) as store:
            store.list_memories()
            wal, shm = path.with_name("memory.db-wal"), path.with_name("memory.db-shm")
            assert path.exists() and wal.exists() and shm.exists()
            assert {mode(p) for p in (path, wal, shm)} == {0o600}
    finally:
        os.umask(old)


def test_an_older_world_readable_database_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with MemoryStore(path) as store:
        store.list_memories()
    os.chmod(path, 0o644)
    with MemoryStore(path) as store:
        store.list_memories()
        assert mode(path) == 0o600
