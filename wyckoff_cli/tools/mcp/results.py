"""An MCP tool result (or resource, or prompt) as what the model and the UI get.

Text blocks are joined; structured content is given as JSON when there is no text (a
server that returns both already put the JSON in the text); images and audio are saved
to the session's results folder and described by type, size and path, and images also go
to the model when the session's models accept images (kept in the session's image
store as every other image: `storage/images.py`); embedded resources are
included with their URI; resource links are named. `isError` becomes a tool error.
Large text is offloaded by the runtime, as for every tool.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import mimetypes
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ImageError, ToolError
from wyckoff_cli.core.messages import ImagePart
from wyckoff_cli.tools.base import ImageKeeper, ToolOutcome


def convert_result(
    result: Any, *, tool: str, results_dir: Path | None, images: ImageKeeper | None = None
) -> ToolOutcome:
    """`result` is an `mcp.types.CallToolResult`. With an image store (the session's
    models accept images) the images also go to the model, beside their description;
    one that cannot be sent (corrupt, unsupported) is said so in the text instead."""
    texts, media = convert_content(list(result.content or []), results_dir)
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(t.strip() for t in texts):
        texts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    text = "\n".join(texts).strip()
    if result.is_error:
        raise ToolError(f"{tool} failed: {text or 'the server reported an error without a message'}")
    display: dict[str, Any] = {"mcp": True}
    if media:
        display["media"] = media
    if structured is not None:
        display["structured"] = structured
    parts: list[ImagePart] = []
    if images is not None:
        for number, block in enumerate(result.content or (), start=1):
            if getattr(block, "type", None) != "image":
                continue
            try:
                parts.append(images.add(_decode(block.data), f"{tool}-image-{number}"))
            except ImageError as exc:
                text += f"\n[not sent to the model: {exc.message}]"
    return ToolOutcome(text or "(no output)", display, tuple(parts))


def _decode(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return b""


def convert_content(blocks: list[Any], results_dir: Path | None) -> tuple[list[str], list[dict[str, Any]]]:
    texts: list[str] = []
    media: list[dict[str, Any]] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(block.text)
        elif kind in ("image", "audio"):
            item = _save_media(block.data, block.mime_type, kind, results_dir)
            media.append(item)
            texts.append(_describe_media(item))
        elif kind == "resource":
            texts.append(resource_text(block.resource, results_dir))
        elif kind == "resource_link":
            name = getattr(block, "name", "") or ""
            texts.append(f"[resource link: {block.uri}{' (' + name + ')' if name else ''}]")
        else:
            texts.append(f"[{kind or 'unknown'} content]")
    return texts, media


def resource_text(contents: Any, results_dir: Path | None) -> str:
    """One resource's contents (`TextResourceContents` / `BlobResourceContents`)."""
    uri = str(contents.uri)
    text = getattr(contents, "text", None)
    if text is not None:
        return f"[resource {uri}]\n{text}"
    mime = getattr(contents, "mime_type", None) or "application/octet-stream"
    item = _save_media(getattr(contents, "blob", ""), mime, "resource", results_dir)
    return f"[resource {uri}] " + _describe_media(item)


def _save_media(data: str, mime: str, kind: str, results_dir: Path | None) -> dict[str, Any]:
    raw = _decode(data)
    item: dict[str, Any] = {"kind": kind, "mime_type": mime, "bytes": len(raw)}
    if results_dir is not None and raw:
        suffix = mimetypes.guess_extension(mime) or ".bin"
        path = results_dir / f"mcp-{hashlib.sha256(raw).hexdigest()[:16]}{suffix}"
        results_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            path.write_bytes(raw)
        item["path"] = str(path)
    return item


def _describe_media(item: dict[str, Any]) -> str:
    where = f", saved to {item['path']}" if "path" in item else ""
    return f"[{item['kind']} {item['mime_type']}, {item['bytes']} bytes{where}]"


def prompt_text(result: Any, results_dir: Path | None) -> str:
    """A `GetPromptResult` as one user message's text."""
    parts: list[str] = []
    for message in result.messages:
        texts, _ = convert_content([message.content], results_dir)
        body = "\n".join(texts)
        parts.append(body if message.role == "user" else f"[{message.role}]\n{body}")
    return "\n\n".join(parts).strip()
