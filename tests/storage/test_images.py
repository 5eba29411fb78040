"""Images checked, normalised with Pillow and stored once per session by hash."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.images_support import animated_gif, bomb_png, encoded, png_bytes, rotated_jpeg, write
from wyckoff_cli.core.errors import ImageError
from wyckoff_cli.storage.images import LONG_EDGE, MAX_SENT_BYTES, ImageStore, normalise_image


def pixels(data: bytes) -> tuple[str, tuple[int, int]]:
    from PIL import Image

    image = Image.open(io.BytesIO(data))
    return str(image.format), image.size


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (png_bytes(320, 200), "image/png"),
        (encoded(320, 200, "JPEG"), "image/jpeg"),
        (encoded(320, 200, "GIF"), "image/gif"),
        (encoded(320, 200, "WEBP"), "image/webp"),
    ],
    ids=["png", "jpeg", "gif", "webp"],
)
def test_an_image_within_the_limits_is_sent_as_it_is(data: bytes, media_type: str) -> None:
    image = normalise_image(data, "small")
    assert (image.data, image.media_type, image.width, image.height) == (data, media_type, 320, 200)
    assert not image.reencoded


def test_a_large_screenshot_is_downscaled_to_the_long_edge_and_stays_png() -> None:
    image = normalise_image(png_bytes(4000, 3000), "big.png")
    assert image.reencoded and image.media_type == "image/png"
    assert (image.width, image.height) == (LONG_EDGE, 1176)
    assert pixels(image.data) == ("PNG", (LONG_EDGE, 1176))


def test_a_large_photo_becomes_a_jpeg_within_the_size_limit() -> None:
    image = normalise_image(encoded(3000, 2000, "JPEG", quality=95), "photo.jpg")
    assert pixels(image.data) == ("JPEG", (LONG_EDGE, 1045))
    assert len(image.data) <= MAX_SENT_BYTES


def test_a_noisy_png_over_the_byte_limit_becomes_a_jpeg() -> None:
    image = normalise_image(png_bytes(1500, 1400, noisy=True), "noise.png")  # ~6 MB of PNG
    assert image.reencoded and image.media_type == "image/jpeg" and len(image.data) <= MAX_SENT_BYTES
    assert (image.width, image.height) == (1500, 1400)


def test_exif_orientation_is_applied() -> None:
    image = normalise_image(rotated_jpeg(300, 100), "phone.jpg")
    assert image.reencoded and (image.width, image.height) == (100, 300)
    assert pixels(image.data)[1] == (100, 300)


def test_an_animated_gif_sends_its_first_frame() -> None:
    image = normalise_image(animated_gif(64, 48), "anim.gif")
    assert image.reencoded and image.media_type == "image/png"
    from PIL import Image

    assert not getattr(Image.open(io.BytesIO(image.data)), "is_animated", False)


BAD_INPUT = [
    (b"", "the file is empty, not an image"),
    (b"\x00garbage that is no image at all" * 10, "not an image Wyckoff can read"),
    (png_bytes(400, 300, noisy=True)[:2_000], "corrupt or truncated"),
    (encoded(10, 10, "BMP"), "BMP images are not supported"),
    (encoded(10, 10, "TIFF"), "TIFF images are not supported"),
    (bomb_png(), "decompression bomb"),
]


@pytest.mark.parametrize(
    ("data", "message"), BAD_INPUT, ids=["empty", "corrupt", "truncated", "bmp", "tiff", "bomb"]
)
def test_bad_input_is_one_line_naming_the_file(tmp_path: Path, data: bytes, message: str) -> None:
    store = ImageStore(tmp_path / "images")
    with pytest.raises(ImageError) as caught:
        store.add_file(write(tmp_path / "shot.png", data))
    assert message in caught.value.message and str(tmp_path / "shot.png") in caught.value.message
    assert "\n" not in caught.value.message
    assert not (tmp_path / "images").exists()  # nothing kept


def test_a_missing_file_a_folder_and_a_200_mb_file(tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "images")
    with pytest.raises(ImageError, match=r"missing\.png: no such file$"):
        store.add_file(tmp_path / "missing.png")
    (tmp_path / "dir.png").mkdir()
    with pytest.raises(ImageError, match="is a folder, not an image"):
        store.add_file(tmp_path / "dir.png")
    huge = tmp_path / "huge.png"
    with huge.open("wb") as file:
        file.truncate(200 * 1024 * 1024)  # sparse: no 200 MB written
    with pytest.raises(ImageError, match=r"huge\.png: 200 MB is too large for an image \(at most 50 MB\)"):
        store.add_file(huge)


def test_the_store_keeps_each_image_once_by_hash(tmp_path: Path) -> None:
    import hashlib

    store = ImageStore(tmp_path / "images")
    data = png_bytes(64, 32)
    first = store.add_file(write(tmp_path / "a.png", data))
    second = store.add(data, "copy.png")
    assert first.sha256 == second.sha256 == hashlib.sha256(data).hexdigest()
    assert [p.name for p in (tmp_path / "images").iterdir()] == [f"{first.sha256}.png"]
    assert Path(first.path).read_bytes() == data == first.read_bytes()
    assert (first.name, second.name, first.width, first.height, first.size) == (
        "a.png",
        "copy.png",
        64,
        32,
        len(data),
    )
    assert first.label == "a.png 64\u00d732"
    big = store.add(png_bytes(4000, 3000), "big.png")
    assert big.read_bytes() != png_bytes(4000, 3000) and big.width == LONG_EDGE  # what was sent is kept


def test_a_store_with_a_lazy_folder_makes_it_on_the_first_image(tmp_path: Path) -> None:
    made: list[Path] = []

    def folder() -> Path:
        made.append(tmp_path / "lazy")
        return made[-1]

    store = ImageStore(folder)
    assert made == []
    store.add(png_bytes(8, 8), "x.png")
    assert made == [tmp_path / "lazy"] and len(list((tmp_path / "lazy").iterdir())) == 1


def _corrupt_one_byte(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


def test_an_image_sendable_as_it_is_is_checked_without_decoding_its_pixels(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No resize needed: the size comes from the header and the PNG's checksums show
    it is whole; no pixel is decoded (issue 30: decoding was most of the attach time)."""
    from PIL import PngImagePlugin

    def no_decoding(self: object) -> None:
        raise AssertionError("the pixels were decoded")

    monkeypatch.setattr(PngImagePlugin.PngImageFile, "load", no_decoding)
    data = png_bytes(1568, 1000)
    image = normalise_image(data, "shot.png")
    assert (image.data, image.width, image.height, image.reencoded) == (data, 1568, 1000, False)


@pytest.mark.parametrize(
    ("data", "shown"),
    [
        (_corrupt_one_byte(png_bytes(300, 200, noisy=True), 20_000), "a flipped byte in the pixel data"),
        (png_bytes(300, 200, noisy=True)[:-12], "no end chunk"),
        (encoded(300, 200, "JPEG")[:-200], "a truncated JPEG"),
    ],
    ids=["png-flipped", "png-no-end", "jpeg-truncated"],
)
def test_a_damaged_image_within_the_limits_is_still_refused(data: bytes, shown: str) -> None:
    with pytest.raises(ImageError, match="corrupt or truncated"):
        normalise_image(data, shown)


def test_a_large_jpeg_is_decoded_at_a_reduced_scale(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 4000×3000 photo is decoded at half size (the DCT's own scaling), not in full,
    then brought to the 1,568 px long edge."""
    from PIL import JpegImagePlugin

    decoded: list[tuple[int, int]] = []
    load = JpegImagePlugin.JpegImageFile.load

    def recording_load(self: JpegImagePlugin.JpegImageFile) -> object:
        decoded.append(self.size)
        return load(self)

    monkeypatch.setattr(JpegImagePlugin.JpegImageFile, "load", recording_load)
    image = normalise_image(encoded(4000, 3000, "JPEG"), "photo.jpg")
    assert (image.width, image.height) == (1568, 1176) and image.reencoded
    assert decoded and max(decoded[0]) == 2000  # 1/2 scale: the smallest at least 1,568 px
