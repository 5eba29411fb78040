"""A large PNG decoded on two cores (issue 30's attach time): the same pixels as Pillow's
own load, for every kind of PNG it takes; everything else left to Pillow untouched;
damage refused as Pillow refuses it; the downscale's halves the whole image's rows."""

from __future__ import annotations

import io
import random
import struct
import threading
import zlib
from typing import Any

import pytest

from wyckoff_cli.core.errors import ImageError
from wyckoff_cli.storage import images, png_decode
from wyckoff_cli.storage.images import normalise_image
from wyckoff_cli.storage.png_decode import load_on_two_cores


@pytest.fixture(autouse=True)
def small_images_take_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Test images stay small: the threshold and the bands shrink with them (many bands)."""
    monkeypatch.setattr(png_decode, "MIN_PIXELS", 10_000)
    monkeypatch.setattr(png_decode, "BAND_BYTES", 20_000)


def _image(mode: str, width: int, height: int, *, noisy: bool) -> Any:
    """A screenshot-like image (flat panels, stripes: Up and Sub rows) or noise (Paeth,
    Average: the filters that read the row above and the pixel before)."""
    from PIL import Image, ImageDraw

    if noisy:
        rng = random.Random(width + height)
        return Image.frombytes("RGB", (width, height), rng.randbytes(width * height * 3)).convert(mode)
    image = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 0, width, 20), fill=(30, 30, 40))
    for row in range(30, height, 12):
        draw.rectangle((width // 4, row, width // 2, row + 4), fill=(250, 20, 20))
    return image.convert(mode)


def _png(image: Any, **save: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG", **save)
    return buffer.getvalue()


def _opened(data: bytes) -> Any:
    from PIL import Image

    return Image.open(io.BytesIO(data))


def _pillow_pixels(data: bytes) -> bytes:
    image = _opened(data)
    image.load()
    return bytes(image.tobytes())


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    out, position = [], 8
    while position < len(data):
        (length,) = struct.unpack_from(">I", data, position)
        out.append((data[position + 4 : position + 8], data[position + 8 : position + 8 + length]))
        position += 12 + length
    return out


def _assembled(chunks: list[tuple[bytes, bytes]]) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    return b"\x89PNG\r\n\x1a\n" + b"".join(chunk(kind, body) for kind, body in chunks)


def _split_idat(data: bytes, parts: int) -> bytes:
    """The same PNG with its pixel data in `parts` IDAT chunks (as other encoders write it)."""
    chunks = _chunks(data)
    pixel = b"".join(body for kind, body in chunks if kind == b"IDAT")
    step = -(-len(pixel) // parts)
    rest = [(kind, body) for kind, body in chunks if kind not in (b"IDAT", b"IEND")]
    idats = [(b"IDAT", pixel[i : i + step]) for i in range(0, len(pixel), step)]
    return _assembled([*rest, *idats, (b"IEND", b"")])


KINDS = [
    (mode, noisy, size)
    for mode in ("L", "LA", "RGB", "RGBA")
    for noisy in (False, True)
    for size in ((301, 203), (640, 120))
]


@pytest.mark.parametrize(("mode", "noisy", "size"), KINDS, ids=lambda v: str(v))
def test_the_pixels_are_pillows_own(mode: str, noisy: bool, size: tuple[int, int]) -> None:
    data = _png(_image(mode, *size, noisy=noisy))
    image = _opened(data)
    assert load_on_two_cores(image, data)
    assert image.tobytes() == _pillow_pixels(data) and image.mode == mode and image.size == size


@pytest.mark.parametrize("variant", ["many-idat", "one-row-a-band", "level-9", "level-0"])
def test_other_encoders_layouts_decode_the_same(monkeypatch: pytest.MonkeyPatch, variant: str) -> None:
    source = _image("RGB", 257, 131, noisy=False)
    data = {
        "many-idat": lambda: _split_idat(_png(source), 37),
        "one-row-a-band": lambda: _png(source),
        "level-9": lambda: _png(source, compress_level=9),
        "level-0": lambda: _png(source, compress_level=0),
    }[variant]()
    if variant == "one-row-a-band":
        monkeypatch.setattr(png_decode, "BAND_BYTES", 1)
    image = _opened(data)
    assert load_on_two_cores(image, data)
    assert image.tobytes() == _pillow_pixels(data)


def test_the_unfiltering_runs_on_a_second_thread_band_by_band(monkeypatch: pytest.MonkeyPatch) -> None:
    threads: list[str] = []
    feed = png_decode._Feeder.feed

    def recording(self: png_decode._Feeder, piece: bytes, last: bool) -> None:
        threads.append(threading.current_thread().name)
        feed(self, piece, last)

    monkeypatch.setattr(png_decode._Feeder, "feed", recording)
    data = _png(_image("RGB", 400, 300, noisy=True))
    assert load_on_two_cores(_opened(data), data)
    assert len(threads) == -(-(300 * 1201) // (1201 * (20_000 // 1201)))  # whole rows a band
    assert all(name.startswith("wyckoff-png") for name in threads)


def _apng() -> bytes:
    from PIL import Image

    frames = [Image.new("RGB", (200, 100), colour) for colour in ((255, 0, 0), (0, 0, 255))]
    buffer = io.BytesIO()
    frames[0].save(buffer, "PNG", save_all=True, append_images=frames[1:])
    return buffer.getvalue()


def _interlaced() -> bytes:
    chunks = _chunks(_png(_image("RGB", 200, 100, noisy=False)))
    header = bytearray(chunks[0][1])
    header[12] = 1  # Adam7
    return _assembled([(b"IHDR", bytes(header)), *chunks[1:]])


def _with_exif() -> bytes:
    image = _image("RGB", 200, 100, noisy=False)
    exif = image.getexif()
    exif[0x0112] = 6
    return _png(image, exif=exif.tobytes())


NOT_TAKEN = {
    "palette": lambda: _png(_image("RGB", 200, 100, noisy=False).convert("P")),
    "16-bit": lambda: _png(_image("L", 200, 100, noisy=False).convert("I;16")),
    "1-bit": lambda: _png(_image("L", 200, 100, noisy=False).convert("1")),
    "interlaced": _interlaced,
    "exif": _with_exif,
    "animated": _apng,
    "small": lambda: _png(_image("RGB", 90, 90, noisy=False)),
    "jpeg": lambda: (lambda b: (_image("RGB", 200, 100, noisy=False).save(b, "JPEG"), b.getvalue())[1])(
        io.BytesIO()
    ),
}


@pytest.mark.parametrize("kind", list(NOT_TAKEN))
def test_anything_else_is_left_to_pillow_untouched(kind: str) -> None:
    data = NOT_TAKEN[kind]()
    image = _opened(data)
    tile = list(image.tile)
    assert not load_on_two_cores(image, data)
    assert image.tile == tile  # nothing decoded: the caller's load() does it all


def test_without_zlib_ng_pillow_decodes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "zlib_ng", None)
    data = _png(_image("RGB", 200, 100, noisy=False))
    assert not load_on_two_cores(_opened(data), data)
    assert normalise_image(data, "x.png").width == 200


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


def _bad_deflate_good_crc(data: bytes) -> bytes:
    chunks = _chunks(data)
    return _assembled([(k, _flip(b, len(b) // 2) if k == b"IDAT" else b) for k, b in chunks])


def _too_few_rows(data: bytes) -> bytes:
    chunks = _chunks(data)
    header = bytearray(chunks[0][1])
    header[4:8] = struct.pack(">I", struct.unpack(">I", header[4:8])[0] + 50)  # taller than its data
    return _assembled([(b"IHDR", bytes(header)), *chunks[1:]])


def _cut_after_the_first_pixel_chunk(data: bytes) -> bytes:
    at = data.index(b"IDAT")
    (length,) = struct.unpack_from(">I", data, at - 4)
    return data[: at + 4 + length + 4 + 5]  # into the next chunk's header


DAMAGE = {
    "flipped-byte": lambda d: _flip(d, len(d) // 2),
    "cut-in-the-pixels": lambda d: d[: len(d) // 2],
    "cut-in-a-chunk-header": _cut_after_the_first_pixel_chunk,
    "bad-deflate-good-crc": _bad_deflate_good_crc,
    "fewer-rows-than-the-header": _too_few_rows,
}


def test_a_file_of_whole_chunks_without_its_end_is_read_as_pillow_reads_it() -> None:
    data = _png(_image("RGB", 400, 300, noisy=True))[:-12]
    image = _opened(data)
    assert load_on_two_cores(image, data) and image.tobytes() == _pillow_pixels(data)


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_damage_is_refused(kind: str) -> None:
    """As Pillow's own load refuses it, and also pixel data that ends before the last
    row (Pillow would leave the rest black)."""
    data = DAMAGE[kind](_png(_image("RGB", 1800, 300, noisy=True)))  # over the long edge: decoded
    if kind != "fewer-rows-than-the-header":
        with pytest.raises((OSError, SyntaxError, ValueError)):
            _pillow_pixels(data)
    with pytest.raises(OSError):
        load_on_two_cores(_opened(data), data)
    with pytest.raises(ImageError, match="shot.png: the image is corrupt or truncated"):
        normalise_image(data, "shot.png")


@pytest.mark.parametrize("size", [(4000, 3000), (3001, 2999), (1700, 4001)])
def test_the_downscale_in_halves_matches_one_call(
    monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    frame = _image("RGB", *size, noisy=True)
    halves = images._downscale(frame)
    monkeypatch.setattr(images, "PARALLEL_PIXELS", 10**12)
    whole = images._downscale(frame)
    assert halves.size == whole.size == images._target_size(size)
    worst = max(abs(a - b) for a, b in zip(halves.tobytes(), whole.tobytes(), strict=True))
    assert worst <= 1  # the halves' filter weights may round a last bit differently


def test_a_large_png_attached_is_decoded_this_way(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[bool] = []

    def recording(image: Any, data: bytes) -> bool:
        taken.append(load_on_two_cores(image, data))
        return taken[-1]

    monkeypatch.setattr(images, "load_on_two_cores", recording)
    data = _png(_image("RGB", 2000, 1000, noisy=False))
    sent = normalise_image(data, "big.png")
    assert taken == [True] and (sent.width, sent.height) == (1568, 784) and sent.media_type == "image/png"
