"""Images as models get them: checked, normalised with Pillow, stored once per session.

`normalise_image(data, name)` checks the bytes (a known format, not corrupt or
truncated, not too large, not a decompression bomb) and brings them within every
vendor's limits: an image already within them is kept as it is (same bytes, same
format; known from its header, and checked whole without decoding a PNG's pixels or
with a JPEG's smallest DCT scale); otherwise orientation is applied, an animated GIF keeps its first frame, the
long edge is brought down to `LONG_EDGE` (a large JPEG decoded at the smallest DCT
scale still over it, a large PNG decoded on two cores: `png_decode`) and the result is
encoded again (PNG by `png_encode` where it can). The bound is
the tightest of the vendors' (Anthropic's recommended 1,568 px; OpenAI and Gemini
accept more and scale down on their side), so the stored bytes are what every vendor
is sent, and a session can change model without re-encoding.

`ImageStore(folder)` keeps each image once, named by its SHA-256, and hands back the
`ImagePart` that messages and the chat log carry (never the bytes). Pillow is imported
on first use, not at import time.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ImageError
from wyckoff_cli.core.messages import ImagePart
from wyckoff_cli.storage.png_decode import load_on_two_cores
from wyckoff_cli.storage.png_encode import png_bytes

# Formats every vendor takes, by Pillow's format name.
MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
EXTENSIONS = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}
MAX_INPUT_BYTES = 50 * 1024 * 1024  # a larger file is refused before it is decoded
MAX_INPUT_PIXELS = 50_000_000  # Pillow's decompression-bomb limit for what is attached
LONG_EDGE = 1568  # Anthropic's recommended long edge (its hard limit is 8,000 px)
MAX_SENT_BYTES = 3_750_000  # 5 MB once base64-encoded: Anthropic's per-image limit
JPEG_QUALITY = 85
PARALLEL_PIXELS = 4_000_000  # a larger image is scaled down in two halves on two threads


@dataclass(frozen=True, slots=True)
class NormalisedImage:
    """Bytes ready to send: `reencoded` says whether they differ from the input."""

    data: bytes
    media_type: str
    width: int
    height: int
    reencoded: bool


def _pillow() -> Any:
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = MAX_INPUT_PIXELS
    return Image


def normalise_image(data: bytes, name: str) -> NormalisedImage:
    """`data` checked and within the vendors' limits; `ImageError` (one line naming
    `name`) when it cannot be sent."""
    if len(data) > MAX_INPUT_BYTES:
        raise ImageError(
            f"{name}: {len(data) / 1_048_576:.0f} MB is too large for an image "
            f"(at most {MAX_INPUT_BYTES // 1_048_576} MB)"
        )
    if not data:
        raise ImageError(f"{name}: the file is empty, not an image")
    image_module = _pillow()
    from PIL import UnidentifiedImageError

    with warnings.catch_warnings():
        warnings.simplefilter("error", image_module.DecompressionBombWarning)
        try:
            image = image_module.open(io.BytesIO(data))  # the header only: format, size, EXIF
            kind = image.format
            if kind not in MEDIA_TYPES:
                raise ImageError(f"{name}: {kind} images are not supported (PNG, JPEG, GIF or WebP)")
            if _sendable_as_is(image, data):
                width, height = image.size  # (a JPEG's check decodes it smaller)
                _check_whole(image_module, image, data)
                return NormalisedImage(data, MEDIA_TYPES[kind], width, height, reencoded=False)
            if kind == "JPEG":  # decode at the smallest DCT scale still at least the target size
                image.draft("RGB", _target_size(image.size))
            if not load_on_two_cores(image, data):
                image.load()
        except (image_module.DecompressionBombError, image_module.DecompressionBombWarning):
            raise ImageError(
                f"{name}: refused as a decompression bomb (over {MAX_INPUT_PIXELS:,} pixels)"
            ) from None
        except UnidentifiedImageError:
            raise ImageError(f"{name}: not an image Wyckoff can read (PNG, JPEG, GIF or WebP)") from None
        except (OSError, SyntaxError, ValueError) as exc:
            raise ImageError(f"{name}: the image is corrupt or truncated ({exc})") from None
    return _reencoded(image, MEDIA_TYPES[kind])


def _rotated(image: Any) -> bool:
    return image.getexif().get(0x0112, 1) not in (1, None)  # EXIF orientation


def _sendable_as_is(image: Any, data: bytes) -> bool:
    """Within every vendor's limits as it is, by its header: no pixel is decoded to know
    (Pillow reads a PNG's EXIF only by decoding it, as the chunk may follow the pixels:
    a PNG without an `eXIf` chunk has no orientation to apply)."""
    if max(image.size) > LONG_EDGE or len(data) > MAX_SENT_BYTES:
        return False
    if image.format == "PNG" and b"eXIf" not in data:
        return not getattr(image, "is_animated", False)
    return not _rotated(image) and not getattr(image, "is_animated", False)


def _check_whole(image_module: Any, image: Any, data: bytes) -> None:
    """That an image sent as it is is whole, decoding as little as it takes: a PNG's
    chunks and their checksums (every byte of the pixel data is covered by one), a
    JPEG's whole entropy-coded stream at its smallest DCT scale; GIF and WebP decoded."""
    if image.format == "PNG":
        image_module.open(io.BytesIO(data)).verify()  # raises on a bad checksum or a missing end
        return
    if image.format == "JPEG":
        image.draft("RGB", (max(1, image.size[0] // 8), max(1, image.size[1] // 8)))
    image.load()


def _target_size(size: tuple[int, int]) -> tuple[int, int]:
    """`size` brought down to a `LONG_EDGE` long edge (as it is when already within)."""
    width, height = size
    scale = min(1.0, LONG_EDGE / max(width, height))
    return max(1, round(width * scale)), max(1, round(height * scale))


def _reencoded(image: Any, media_type: str) -> NormalisedImage:
    """`image` (decoded) oriented, its first frame, within `LONG_EDGE`, encoded again."""
    from PIL import ImageOps

    if getattr(image, "is_animated", False):
        image.seek(0)
    frame = image.convert("RGBA") if image.mode == "P" else image
    if _rotated(image):
        frame = ImageOps.exif_transpose(frame)
    if max(frame.size) > LONG_EDGE:
        frame = _downscale(frame)
    encoded, media_type = _encode(frame, media_type)
    return NormalisedImage(encoded, media_type, frame.size[0], frame.size[1], reencoded=True)


def _downscale(frame: Any) -> Any:
    """To a `LONG_EDGE` long edge: first by a whole factor with box averaging (fast, and
    it keeps thin lines), then the rest of the way (less than 2×) bilinearly. A large
    image is done as a top and a bottom half on two threads (Pillow releases the GIL),
    each half the rows one call over the whole image would make."""
    from PIL import Image

    bilinear = Image.Resampling.BILINEAR
    width, height = frame.size
    target = _target_size(frame.size)
    factor = max(width, height) // LONG_EDGE
    halves = width * height >= PARALLEL_PIXELS
    if factor > 1:
        source, cut = frame, height // 2 // factor * factor  # a whole number of reduced rows
        frame = (
            _two_halves(
                (-(-width // factor), -(-height // factor)),
                cut // factor,
                lambda: source.reduce(factor, (0, 0, width, cut)),
                lambda: source.reduce(factor, (0, cut, width, height)),
            )
            if halves
            else source.reduce(factor)
        )
    if frame.size == target:
        return frame
    if not halves:
        return frame.resize(target, bilinear)
    source, (source_width, source_height) = frame, frame.size
    split = target[1] // 2
    edge = split * source_height / target[1]  # where output row `split` starts in the source
    return _two_halves(
        target,
        split,
        lambda: source.resize((target[0], split), bilinear, (0, 0, source_width, edge)),
        lambda: source.resize(
            (target[0], target[1] - split), bilinear, (0, edge, source_width, source_height)
        ),
    )


def _two_halves(size: tuple[int, int], split: int, upper: Callable[[], Any], lower: Callable[[], Any]) -> Any:
    """An image of `size`: `upper()` above row `split`, `lower()` (made on a second
    thread meanwhile) below it."""
    from concurrent.futures import ThreadPoolExecutor

    from PIL import Image

    with ThreadPoolExecutor(1, thread_name_prefix="wyckoff-image") as worker:
        below = worker.submit(lower)
        above = upper()
        whole = Image.new(above.mode, size)
        whole.paste(above, (0, 0))
        whole.paste(below.result(), (0, split))
    return whole


def _encode(frame: Any, media_type: str) -> tuple[bytes, str]:
    """PNG for images with transparency or drawn ones (PNG, GIF input), else JPEG;
    JPEG also when a PNG stays over the size limit. The PNG is written by `png_bytes`
    (Pillow's encoder for what it does not take)."""
    has_alpha = frame.mode in ("RGBA", "LA") or "transparency" in frame.info
    if media_type in ("image/png", "image/gif") or (media_type == "image/webp" and has_alpha):
        png = png_bytes(frame)
        if png is None:
            buffer = io.BytesIO()
            frame.save(buffer, "PNG", compress_level=1)
            png = buffer.getvalue()
        if len(png) <= MAX_SENT_BYTES:
            return png, "image/png"
    buffer = io.BytesIO()
    frame.convert("RGB").save(buffer, "JPEG", quality=JPEG_QUALITY)
    return buffer.getvalue(), "image/jpeg"


def read_image_file(path: Path, name: str | None = None) -> bytes:
    """A file's bytes for `normalise_image`, with one-line errors naming `name` (the path)."""
    name = name or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_INPUT_BYTES:
            raise ImageError(
                f"{name}: {size / 1_048_576:.0f} MB is too large for an image "
                f"(at most {MAX_INPUT_BYTES // 1_048_576} MB)"
            )
        return path.read_bytes()
    except FileNotFoundError:
        raise ImageError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise ImageError(f"{name}: is a folder, not an image") from None
    except OSError as exc:
        raise ImageError(f"{name}: cannot be read ({exc.strerror or exc})") from None


class ImageStore:
    """A session's images, one file per image named by its SHA-256 under `folder`
    (a path, or a function giving one on first use: a temporary folder made only when
    an image comes)."""

    def __init__(self, folder: Path | Callable[[], Path]) -> None:
        self._folder = folder

    @property
    def folder(self) -> Path:
        if not isinstance(self._folder, Path):
            self._folder = self._folder()
        return self._folder

    def add(self, data: bytes, name: str) -> ImagePart:
        """Check, normalise and keep `data`; the part that references it."""
        return self.keep(normalise_image(data, name), name)

    def add_file(self, path: Path, *, name: str | None = None) -> ImagePart:
        """An image file: errors name `name` (default: the path), the part its file name."""
        shown = name or str(path)
        return self.keep(normalise_image(read_image_file(path, shown), shown), shown)

    def keep(self, image: NormalisedImage, name: str) -> ImagePart:
        digest = hashlib.sha256(image.data).hexdigest()
        target = self.folder / f"{digest}{EXTENSIONS[image.media_type]}"
        if not target.exists():
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=".incoming-")
            try:
                with os.fdopen(handle, "wb") as file:
                    file.write(image.data)
                os.replace(temporary, target)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        return ImagePart(
            media_type=image.media_type,
            width=image.width,
            height=image.height,
            sha256=digest,
            path=str(target),
            size=len(image.data),
            name=Path(name).name,
        )
