"""Which files are images Wyckoff can send (PNG, JPEG, GIF, WebP), by their name."""

from __future__ import annotations

from pathlib import Path

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})


def looks_like_image_path(path: str | Path) -> bool:
    return Path(path).suffix.lower() in IMAGE_SUFFIXES
