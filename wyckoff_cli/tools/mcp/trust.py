"""What the user has trusted: a project's `.mcp.json` and each server's tool definitions.

Kept in `mcp-trust.json` in the data folder (mode 0600), never in the repository, so a
cloned project cannot trust itself. A project file is trusted by the SHA-256 of its
bytes: any change asks again. A server's tools are recorded the first time they are
used (for a project server: when the project is trusted and the server first lists
them) as one hash per tool over its name, description, input schema and annotations; a
later difference is reported as a `ToolChange` and the server's tools are withheld until
the change is accepted (`wyckoff mcp trust`, or the app's prompt).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.storage import paths
from wyckoff_cli.storage.atomic import write_atomic


def file_hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def definition_hash(definition: Mapping[str, Any]) -> str:
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ToolChange:
    """How a server's tools differ from what was trusted."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed)

    def describe(self) -> str:
        parts = []
        if self.changed:
            parts.append("changed: " + ", ".join(self.changed))
        if self.added:
            parts.append("new: " + ", ".join(self.added))
        if self.removed:
            parts.append("removed: " + ", ".join(self.removed))
        return "; ".join(parts)


class TrustStore:
    """Reads and writes `mcp-trust.json`. Every write re-reads the file first, so two
    sessions trusting different things do not undo each other."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.data_dir() / "mcp-trust.json"

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"projects": {}, "servers": {}}
        if not isinstance(data, dict):
            return {"projects": {}, "servers": {}}
        data.setdefault("projects", {})
        data.setdefault("servers", {})
        return data

    def _save(self, data: dict[str, Any]) -> None:
        paths.ensure_private_dir(self.path.parent)
        write_atomic(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n", mode=0o600)

    # ----------------------------------------------------------------- project files

    def project_trusted(self, project_file: Path) -> bool:
        record = self._load()["projects"].get(str(project_file.resolve()))
        current = file_hash(project_file)
        return bool(record) and current is not None and record.get("sha256") == current

    def trust_project(self, project_file: Path, servers: Mapping[str, str]) -> None:
        """Trust the file as it is now; `servers` maps names to what they run (kept
        for `wyckoff mcp get`)."""
        data = self._load()
        data["projects"][str(project_file.resolve())] = {
            "sha256": file_hash(project_file),
            "servers": dict(servers),
            "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        self._save(data)

    def forget_project(self, project_file: Path) -> bool:
        """Remove the trust of `project_file` (`wyckoff mcp untrust`); False when there was none."""
        data = self._load()
        if data["projects"].pop(str(project_file.resolve()), None) is None:
            return False
        self._save(data)
        return True

    # ----------------------------------------------------------------- tool definitions

    def check_tools(self, key: str, tools: Mapping[str, str]) -> ToolChange | None:
        """None when nothing is recorded for `key` yet; else the difference (falsy
        when there is none). `tools` maps tool names to definition hashes."""
        record = self._load()["servers"].get(key)
        if not isinstance(record, dict):
            return None
        old: dict[str, str] = record.get("tools", {})
        return ToolChange(
            added=tuple(sorted(set(tools) - set(old))),
            removed=tuple(sorted(set(old) - set(tools))),
            changed=tuple(sorted(n for n in tools if n in old and old[n] != tools[n])),
        )

    def record_tools(self, key: str, tools: Mapping[str, str]) -> None:
        data = self._load()
        data["servers"][key] = {
            "tools": dict(tools),
            "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        self._save(data)


def server_key(scope: str, root: Path, name: str) -> str:
    """The trust record of one server: user servers are global, project ones per project."""
    return f"user:{name}" if scope == "user" else f"project:{root.resolve()}:{name}"
