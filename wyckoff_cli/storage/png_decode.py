"""A large PNG decoded on two cores: its pixel data inflated on one, unfiltered on the other.

Pillow decodes a PNG in one pass on one core: it inflates the compressed rows and undoes
each row's filter (Paeth, Up, Sub…) as they come out, and for a large screenshot the two
take about as long as each other. `load_on_two_cores(image, data)` splits them: this
thread inflates the image's `IDAT` data in bands with zlib-ng (which releases the GIL),
and a worker thread hands each band to Pillow's own PNG decoder as uncompressed
("stored") deflate blocks, so Pillow's unfiltering of one band runs while the next is
inflated. The pixels are Pillow's, byte for byte.

Only what that path decodes exactly as Pillow would takes it: a single-frame,
non-interlaced PNG of 8-bit grey, grey+alpha, RGB or RGBA, large enough to be worth a
second thread, with no `eXIf` chunk (Pillow reads one after the pixels while loading),
and zlib-ng installed. Anything else returns False and the caller loads the image as
usual. Every chunk's checksum of the pixel data is checked and the inflated size must be
exactly the image's, so a corrupt or truncated file raises `OSError` as Pillow's own
load does.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

MIN_PIXELS = 4_000_000  # below this one core decodes in well under 40 ms: not worth a thread
BAND_BYTES = 1 << 20  # inflated bytes handed over at a time
CHANNELS = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}
_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_STORED_MAX = 0xFFFF  # bytes in one stored deflate block


def load_on_two_cores(image: Any, data: bytes) -> bool:
    """Load `image` (a PNG opened from `data`, not yet loaded) as described above: True
    when it was, False when it is not one this path takes (nothing was decoded)."""
    plan = _plan(image, data)
    if plan is None:
        return False
    from PIL import Image

    rawmode, extents, row_bytes = plan
    pixel_data = b"".join(_pixel_chunks(data))
    image.load_prepare()
    decoder = Image._getdecoder(image.mode, "zip", rawmode, image.decoderconfig)
    decoder.setimage(image.im, extents)
    feeder = _Feeder(decoder)
    expected = row_bytes * image.size[1]
    with ThreadPoolExecutor(1, thread_name_prefix="wyckoff-png") as worker:
        done: list[Future[None]] = []
        try:
            for piece, last in _inflated(pixel_data, expected, row_bytes):
                done.append(worker.submit(feeder.feed, piece, last))
                done = [f for f in done if not _settled(f)]
        finally:
            for future in done:
                future.result()
    feeder.check_finished()
    image.tile = []
    return True


def _plan(image: Any, data: bytes) -> tuple[str, tuple[int, int, int, int], int] | None:
    """(raw mode, extents, bytes a row) when `image` is one this path decodes exactly."""
    if image.format != "PNG" or image.mode not in CHANNELS or not data.startswith(_SIGNATURE):
        return None
    width, height = image.size
    if width * height < MIN_PIXELS or image.info.get("interlace") or b"eXIf" in data:
        return None
    if getattr(image, "is_animated", False) or len(image.tile) != 1:
        return None
    name, extents, _offset, rawmode = image.tile[0][:4]
    if name != "zip" or rawmode != image.mode or tuple(extents) != (0, 0, width, height):
        return None
    try:
        import zlib_ng  # noqa: F401
    except ImportError:
        return None
    return rawmode, tuple(extents), 1 + width * CHANNELS[image.mode]


def _pixel_chunks(data: bytes) -> Iterator[memoryview]:
    """The bodies of the `IDAT` chunks, each checked against its CRC; `OSError` for a
    bad checksum or a chunk cut short (a file of whole chunks without its `IEND` is
    read, as Pillow reads it)."""
    view = memoryview(data)
    position = len(_SIGNATURE)
    while position < len(data):
        if position + 8 > len(data):
            raise OSError("image file is truncated (in a chunk header)")
        length, kind = struct.unpack_from(">I4s", data, position)
        body_end = position + 8 + length
        if body_end + 4 > len(data):
            raise OSError(f"image file is truncated (in its {kind.decode('latin-1')} chunk)")
        if kind == b"IEND":
            return
        if kind == b"IDAT":
            body = view[position + 8 : body_end]
            (crc,) = struct.unpack_from(">I", data, body_end)
            if zlib.crc32(body, zlib.crc32(kind)) != crc:
                raise OSError("broken PNG file (bad CRC in an IDAT chunk)")
            yield body
        position = body_end + 4


def _inflated(pixel_data: bytes, expected: int, row_bytes: int) -> Iterator[tuple[bytes, bool]]:
    """The inflated rows in bands of whole rows, the last one flagged; `OSError` when the
    data is corrupt or ends early (data past the last row is ignored, as Pillow does)."""
    from zlib_ng import zlib_ng

    inflater = zlib_ng.decompressobj()
    band = row_bytes * max(1, BAND_BYTES // row_bytes)
    rest: bytes = pixel_data
    produced = 0
    try:
        while produced < expected:
            piece = inflater.decompress(rest, min(band, expected - produced))
            rest = inflater.unconsumed_tail
            if not piece:
                raise OSError("image file is truncated (its pixel data ends early)")
            produced += len(piece)
            yield piece, produced >= expected
    except zlib_ng.error as exc:  # type: ignore[misc]  # (its stub declares an instance)
        raise OSError(f"broken PNG file ({exc})") from None


def _settled(future: Future[None]) -> bool:
    """True for a finished band (its error raised here, so the first failure stops the loop)."""
    if not future.done():
        return False
    future.result()
    return True


class _Feeder:
    """Hands bands to Pillow's decoder as a zlib stream of stored blocks (on one thread)."""

    def __init__(self, decoder: Any) -> None:
        from zlib_ng import zlib_ng

        self._checksum = zlib_ng.adler32
        self._decoder = decoder
        self._started = False
        self._adler = 1
        self._pending = b""
        self._finished = False

    def feed(self, piece: bytes, last: bool) -> None:
        self._adler = self._checksum(piece, self._adler)
        parts: list[bytes | memoryview] = [] if self._started else [b"\x78\x01"]
        self._started = True
        view = memoryview(piece)
        for start in range(0, len(view), _STORED_MAX):
            block = view[start : start + _STORED_MAX]
            final = last and start + _STORED_MAX >= len(view)
            parts.append(struct.pack("<BHH", 1 if final else 0, len(block), 0xFFFF ^ len(block)))
            parts.append(block)
        if last:
            parts.append(struct.pack(">I", self._adler))
        self._decode(self._pending + b"".join(parts))

    def _decode(self, payload: bytes) -> None:
        if self._finished:
            return
        consumed, error = self._decoder.decode(payload)
        if consumed < 0:
            self._finished = True
            if error < 0:
                raise OSError(f"broken PNG file (decoder error {error})")
            self._pending = b""
            return
        self._pending = payload[consumed:]

    def check_finished(self) -> None:
        self._decoder.cleanup()
        if not self._finished:
            raise OSError("image file is truncated (the decoder wanted more rows)")
