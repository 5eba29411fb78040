"""The light part of the client every module may import without loading pygls and
lsprotocol (the session imports the family at start; those load with the first server)."""

from __future__ import annotations

from pathlib import Path


class LspError(Exception):
    """A server that failed: would not start, died, timed out, answered nonsense."""


def path_uri(path: Path) -> str:
    return path.resolve().as_uri()


def uri_path(uri: str) -> Path:
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return Path(unquote(parsed.path))
