"""An ACP prompt (content blocks) as the user message Wyckoff sends.

Text is kept as typed. A resource link to a file of the workspace becomes an `@path`
mention (so the model must read it, as when typed in the app); other links are named
with their URI. Embedded resources (an editor's selection or open buffer) are
attached inline, with their URI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse


def prompt_text(blocks: list[Any], workspace: Path) -> str:
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(block.text))
        elif kind == "resource_link":
            parts.append(_mention(str(block.uri), workspace) or f"[{block.name}]({block.uri})")
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            uri = str(getattr(resource, "uri", ""))
            if isinstance(text, str):
                shown = _mention(uri, workspace) or uri
                parts.append(f'<attached-file uri="{shown}">\n{text}\n</attached-file>')
            else:
                parts.append(f"[binary resource {uri} not attached]")
        elif kind in ("image", "audio"):
            parts.append(f"[{kind} not attached: this agent reads text only]")
    return "\n\n".join(part for part in parts if part)


def _mention(uri: str, workspace: Path) -> str | None:
    """`@relative/path` for a file URI inside the workspace, else None."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return None
    path = Path(unquote(parsed.path))
    try:
        relative = path.resolve().relative_to(workspace.resolve())
    except ValueError:
        return None
    return f"@{relative.as_posix()}"
