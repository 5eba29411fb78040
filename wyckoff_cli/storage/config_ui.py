"""The typed `[ui]` table of the configuration (docs/CONFIG.md): how the app behaves
in the terminal. `storage/config.py` validates it with the rest (file and line on an
error)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["UiConfig"]


def _doc(text: str, **kwargs: Any) -> Any:
    return field(metadata={"doc": text}, **kwargs)


@dataclass
class UiConfig:
    """`[ui]`: the app in the terminal."""

    notifications: Literal["auto", "bell", "off"] = _doc(
        "Tell you when an approval waits or a turn ends while the terminal is not focused: `auto` "
        "(a desktop notification where the terminal supports one, else the bell), `bell` or `off`.",
        default="auto",
    )
