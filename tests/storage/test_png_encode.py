"""The fast PNG writer for scaled-down images: Pillow reads back exactly the pixels
written, for every mode it takes; the ICC profile is kept; what it does not take
(a palette, a transparent colour key, 16 bits, no zlib-ng) is left to Pillow."""

from __future__ import annotations

import io
import random
from typing import Any

import pytest

from wyckoff_cli.storage import images
from wyckoff_cli.storage.images import normalise_image
from wyckoff_cli.storage.png_encode import png_bytes


def _noise(mode: str, width: int = 97, height: int = 61) -> Any:
    from PIL import Image

    rng = random.Random(width * height)
    return Image.frombytes("RGBA", (width, height), rng.randbytes(width * height * 4)).convert(mode)


def _read(data: bytes) -> Any:
    from PIL import Image

    image = Image.open(io.BytesIO(data))
    image.load()
    return image


@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA"])
def test_pillow_reads_back_the_same_pixels(mode: str) -> None:
    source = _noise(mode)
    data = png_bytes(source)
    assert data is not None
    back = _read(data)
    assert (back.format, back.mode, back.size) == ("PNG", mode, source.size)
    assert back.tobytes() == source.tobytes()
    from PIL import Image

    Image.open(io.BytesIO(data)).verify()  # every chunk's checksum


def test_the_icc_profile_is_kept() -> None:
    from PIL import ImageCms

    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    source = _noise("RGB")
    source.info["icc_profile"] = profile
    data = png_bytes(source)
    assert data is not None and _read(data).info["icc_profile"] == profile


def _keyed() -> Any:
    image = _noise("RGB")
    image.info["transparency"] = (0, 0, 0)
    return image


@pytest.mark.parametrize(
    "make",
    [lambda: _noise("RGB").convert("P"), _keyed, lambda: _noise("L").convert("I;16"), lambda: _noise("1")],
    ids=["palette", "colour-key", "16-bit", "1-bit"],
)
def test_what_it_does_not_take_is_left_to_pillow(make: Any) -> None:
    assert png_bytes(make()) is None


def test_without_zlib_ng_pillow_writes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "zlib_ng", None)
    assert png_bytes(_noise("RGB")) is None
    sent = normalise_image(_png(_noise("RGB", 1700, 40)), "wide.png")
    assert sent.media_type == "image/png" and _read(sent.data).size == (1568, 37)


def _png(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def test_a_downscaled_png_is_written_by_it(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[bytes | None] = []

    def recording(image: Any) -> bytes | None:
        written.append(png_bytes(image))
        return written[-1]

    monkeypatch.setattr(images, "png_bytes", recording)
    sent = normalise_image(_png(_noise("RGBA", 1700, 40)), "wide.png")
    assert written and sent.data == written[0] and sent.media_type == "image/png"
    assert _read(sent.data).mode == "RGBA"
