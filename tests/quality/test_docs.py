"""Docs that must stay true: every config key and every event field is documented."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path

from wyckoff_cli.core import events as ev
from wyckoff_cli.storage import config as cfg
from wyckoff_cli.storage.config_mcp import McpServer
from wyckoff_cli.storage.lsp_config import LspServerConfig

DOCS = Path(__file__).resolve().parents[2] / "docs"


def config_keys(cls: type, prefix: str = "") -> list[str]:
    hints = typing.get_type_hints(cls)
    keys: list[str] = []
    for f in dataclasses.fields(cls):
        if dataclasses.is_dataclass(hints[f.name]):
            keys.extend(config_keys(hints[f.name], f"{prefix}{f.name}."))
        else:
            keys.append(f"{prefix}{f.name}")
    return keys


def test_every_config_key_is_in_config_md() -> None:
    text = (DOCS / "CONFIG.md").read_text(encoding="utf-8")
    keys = config_keys(cfg.Config) + config_keys(cfg.ModelAlias) + config_keys(cfg.ModelOverride)
    keys += config_keys(McpServer)
    keys += config_keys(LspServerConfig, "lsp.servers.NAME.")
    missing = [k for k in keys if f"`{k}`" not in text]
    assert missing == [], f"document these keys in docs/CONFIG.md: {missing}"


def test_every_event_and_field_is_in_events_md() -> None:
    text = (DOCS / "EVENTS.md").read_text(encoding="utf-8")
    missing: list[str] = []
    for kind, cls in ev.EVENT_TYPES.items():
        section = re.search(rf"^### `{kind}`\n(.*?)(?=^### |\Z)", text, re.S | re.M)
        if section is None:
            missing.append(kind)
            continue
        missing += [
            f"{kind}.{f.name}" for f in dataclasses.fields(cls) if f"`{f.name}`" not in section.group(1)
        ]
    assert missing == [], f"document these in docs/EVENTS.md: {missing}"
