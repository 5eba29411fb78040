"""`wyckoff config show --origin`: every effective value and where it comes from.

Each key of the effective configuration is printed with the file that set it (the
project's `.wyckoff/config.toml` over the user's `config.toml`) or `default`; the
managed policy's keys (storage/managed.py) come first, marked as winning over both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wyckoff_cli.storage import config as cfg
from wyckoff_cli.storage.managed import ManagedPolicy, load_managed


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Dotted keys of the tables in `data`; lists and scalars are leaves."""
    if not isinstance(data, dict):
        return {prefix: data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            out.update(flatten(value, name))
        else:
            out[name] = value
    return out


def origin_lines(loaded: cfg.LoadedConfig) -> list[str]:
    lines: list[str] = []
    managed = load_managed()
    if managed is not None:
        for key, value in managed.keys.items():
            lines.append(f"managed.{key} = {_shown(value)}  # {managed.path} (managed policy: wins)")
    setters: dict[str, Path] = {}
    for path in loaded.files:  # user first, then project: the later file wins
        for key in flatten(cfg.read_toml(path) or {}):
            setters[key] = path
    for key, value in flatten(cfg.to_plain(loaded.config)).items():
        where = _setter(key, setters)
        over = _overridden(managed, key, value)
        lines.append(f"{key} = {_shown(value)}  # {where or 'default'}{over}")
    return lines


def _overridden(managed: ManagedPolicy | None, key: str, value: Any) -> str:
    """The note for a value the managed policy overrides, naming its file ("" if none)."""
    if managed is None:
        return ""
    if key == "shell.sandbox" and value == "off" and managed.sandbox_required:
        return f'; overridden by the managed policy {managed.path} (sandbox = "required")'
    if key == "permission_mode" and value == "yolo" and managed.disable_yolo:
        return f"; overridden by the managed policy {managed.path} (disable_yolo = true)"
    return ""


def _setter(key: str, setters: dict[str, Path]) -> Path | None:
    if key in setters:
        return setters[key]
    inside = [path for name, path in setters.items() if name.startswith(key + ".")]
    return inside[-1] if inside else None


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
