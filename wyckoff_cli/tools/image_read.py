"""`read_file` on an image (PNG, JPEG, GIF, WebP): the model gets the image itself.

The image is checked and normalised by the session's image store (storage/images.py)
and goes into the tool message beside a one-line description. A session whose model
takes no images (no store in the context) is told what the file is instead; a corrupt
or unsupported image is a tool error naming it.
"""

from __future__ import annotations

from pathlib import Path

from wyckoff_cli.core.errors import ImageError, ToolError
from wyckoff_cli.core.image_files import looks_like_image_path
from wyckoff_cli.tools.base import ToolContext, ToolOutcome


def is_image_file(path: Path) -> bool:
    return looks_like_image_path(path) and path.is_file()


def read_image(path: Path, shown: str, ctx: ToolContext) -> ToolOutcome:
    if ctx.images is None:
        size = path.stat().st_size
        raise ToolError(
            f"{shown} is a binary file (an image, {size:,} bytes) and this session's model takes no images, "
            "so read_file cannot show it."
        )
    try:
        part = ctx.images.add_file(path, name=shown)
    except ImageError as exc:
        raise ToolError(exc.message) from None
    text = (
        f"[image {shown}: {part.media_type}, {part.width}\u00d7{part.height}, {part.size:,} bytes, attached]"
    )
    return ToolOutcome(text, {"image": part.label}, (part,))
