"""An ACP prompt (content blocks) as the user message Wyckoff sends.

Text is kept as typed. A resource link to a file of the workspace becomes an `@path`
mention (so the model must read it, as when typed in the app); other links are named
with their URI. Embedded resources (an editor's selection or open buffer) are
attached inline, with their URI. `image` blocks become images of the prompt
(`prompt_images`), kept in the session's image store; audio is named, not attached.
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from wyckoff_cli.core.errors import ImageError
from wyckoff_cli.core.messages import ImagePart
from wyckoff_cli.storage.images import ImageStore


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
        elif kind == "audio":
            parts.append("[audio not attached: this agent takes text and images]")
    return "\n\n".join(part for part in parts if part)


def prompt_images(blocks: list[Any], store: ImageStore) -> list[ImagePart]:
    """The prompt's `image` blocks (base64 `data`, `mimeType`) as stored images;
    `ImageError` names the block that cannot be sent."""
    images: list[ImagePart] = []
    for number, block in enumerate(blocks, start=1):
        if getattr(block, "type", "") != "image":
            continue
        name = _image_name(block, number)
        try:
            data = base64.b64decode(str(block.data), validate=True)
        except (binascii.Error, ValueError):
            raise ImageError(f"{name}: the image data is not valid base64") from None
        images.append(store.add(data, name))
    return images


def _image_name(block: Any, number: int) -> str:
    uri = getattr(block, "uri", None)
    if uri:
        return Path(unquote(urlparse(str(uri)).path)).name or f"image-{number}"
    return f"image-{number}"


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
