"""Real images for tests, made with Pillow (no binary fixtures in the tree)."""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Any


def png_bytes(width: int, height: int, *, noisy: bool = False, mode: str = "RGB") -> bytes:
    from PIL import Image

    if noisy:  # photo-like content that does not compress away
        rng = random.Random(width * 31 + height)
        image = Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3))
        image = image.convert(mode)
    else:
        image = Image.new(mode, (width, height), (40, 120, 200) if mode == "RGB" else None)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def encoded(width: int, height: int, fmt: str, **save: Any) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, fmt, **save)
    return buffer.getvalue()


def rotated_jpeg(width: int, height: int) -> bytes:
    """A JPEG whose EXIF says "rotate 90°" (orientation 6)."""
    from PIL import Image

    image = Image.new("RGB", (width, height), (10, 200, 10))
    exif = image.getexif()
    exif[0x0112] = 6
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif.tobytes())
    return buffer.getvalue()


def animated_gif(width: int, height: int) -> bytes:
    from PIL import Image

    frames = [Image.new("RGB", (width, height), c) for c in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:], duration=50, loop=0)
    return buffer.getvalue()


def bomb_png() -> bytes:
    """A small file that decodes to 64 million pixels."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("1", (8_000, 8_000)).save(buffer, "PNG")
    return buffer.getvalue()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
