"""Trust records: a project file's configuration runs only once the user trusted it.

Project files can make Wyckoff run programs (hooks in `.claude/settings.json` or
`.wyckoff/config.toml`, MCP servers in `.mcp.json`). A cloned repository must not run
them on its own, so each such configuration is trusted explicitly: a record keeps the
file's absolute path, a `kind` (`hooks`, `mcp`, …) and the SHA-256 of the trusted
content. When the content changes, the record no longer matches and the user is asked
again. Records live in `trust.json` in the data folder (mode 0600), written atomically.

Callers decide what "the content" is (e.g. only the `hooks` section of a settings
file, canonically serialised, so unrelated edits do not ask again): `content_hash`
hashes bytes or text; `canonical_hash` hashes a JSON-like value key-order-independently.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from wyckoff_cli.storage import paths
from wyckoff_cli.storage.atomic import write_atomic

log = logging.getLogger(__name__)

TrustState = Literal["trusted", "changed", "untrusted"]
VERSION = 1


def content_hash(content: str | bytes) -> str:
    data = content.encode("utf-8") if isinstance(content, str) else content
    return hashlib.sha256(data).hexdigest()


def canonical_hash(value: Any) -> str:
    """The hash of a JSON-like value, independent of key order and whitespace."""
    return content_hash(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def trust_file() -> Path:
    return paths.data_dir() / "trust.json"


@dataclass(frozen=True, slots=True)
class TrustRecord:
    path: str
    kind: str
    digest: str
    trusted_at: str


class TrustStore:
    """The trust records. Reads the file on every question (another Wyckoff may have
    trusted something meanwhile); a missing or unreadable file trusts nothing."""

    def __init__(self, file: Path | None = None) -> None:
        self.file = file or trust_file()

    def _load(self) -> dict[str, TrustRecord]:
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("trust records %s unreadable (%s): nothing is trusted", self.file, exc)
            return {}
        records: dict[str, TrustRecord] = {}
        for item in data.get("records", []) if isinstance(data, dict) else []:
            try:
                record = TrustRecord(
                    str(item["path"]), str(item["kind"]), str(item["digest"]), str(item["trusted_at"])
                )
            except (KeyError, TypeError):
                continue
            records[_key(record.path, record.kind)] = record
        return records

    def _save(self, records: dict[str, TrustRecord]) -> None:
        data = {
            "version": VERSION,
            "records": [
                {"path": r.path, "kind": r.kind, "digest": r.digest, "trusted_at": r.trusted_at}
                for r in sorted(records.values(), key=lambda r: (r.path, r.kind))
            ],
        }
        write_atomic(self.file, json.dumps(data, indent=2) + "\n")

    def state(self, path: Path, kind: str, digest: str) -> TrustState:
        """`trusted` when this exact content was trusted, `changed` when an earlier
        content of the same file was, else `untrusted`."""
        record = self._load().get(_key(_path(path), kind))
        if record is None:
            return "untrusted"
        return "trusted" if record.digest == digest else "changed"

    def trust(self, path: Path, kind: str, digest: str) -> None:
        records = self._load()
        now = datetime.now(UTC).isoformat(timespec="seconds")
        records[_key(_path(path), kind)] = TrustRecord(_path(path), kind, digest, now)
        self._save(records)

    def revoke(self, path: Path, kind: str) -> bool:
        records = self._load()
        removed = records.pop(_key(_path(path), kind), None)
        if removed is not None:
            self._save(records)
        return removed is not None

    def records(self) -> list[TrustRecord]:
        return sorted(self._load().values(), key=lambda r: (r.path, r.kind))


def _path(path: Path) -> str:
    return str(path.expanduser().resolve())


def _key(path: str, kind: str) -> str:
    return f"{kind}\0{path}"
