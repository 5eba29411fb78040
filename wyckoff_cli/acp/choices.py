"""The mode and model a client chose for a session, kept in the session's folder so a
later `session/load` (another connection, another editor) starts with them."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from wyckoff_cli.storage.atomic import write_atomic

log = logging.getLogger(__name__)

CHOICES_FILE = "acp-choices.json"


@dataclass(frozen=True)
class SessionChoices:
    mode: str | None = None
    model: str | None = None


def read_choices(directory: Path) -> SessionChoices:
    """What was chosen for the session in `directory` (nothing, when unreadable)."""
    try:
        saved = json.loads((directory / CHOICES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return SessionChoices()
    if not isinstance(saved, dict):
        return SessionChoices()
    mode, model = saved.get("mode"), saved.get("model")
    return SessionChoices(
        mode if isinstance(mode, str) and mode else None, model if isinstance(model, str) and model else None
    )


def save_choices(directory: Path, choices: SessionChoices) -> None:
    """Keep the choices; a failure to write is logged, never fatal to the turn."""
    try:
        write_atomic(directory / CHOICES_FILE, json.dumps({"mode": choices.mode, "model": choices.model}))
    except OSError as exc:
        log.warning("could not keep the session's mode and model: %s", exc)
