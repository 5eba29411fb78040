"""MCP image results go onto the same `ImagePart` and session store as every image."""

from __future__ import annotations

import base64
from pathlib import Path

from mcp.types import CallToolResult, ImageContent, TextContent

from tests.images_support import png_bytes
from wyckoff_cli.storage.images import ImageStore
from wyckoff_cli.tools.mcp.results import convert_result


def result(*blocks: object) -> CallToolResult:
    return CallToolResult(content=list(blocks), isError=False)  # type: ignore[arg-type]


def test_an_image_is_stored_once_and_referenced(tmp_path: Path) -> None:
    data = png_bytes(20, 10)
    block = ImageContent(type="image", data=base64.b64encode(data).decode(), mimeType="image/png")
    store = ImageStore(tmp_path / "images")
    outcome = convert_result(
        result(TextContent(type="text", text="here"), block), tool="t", results_dir=None, images=store
    )
    (part,) = outcome.images
    assert part.read_bytes() == data and (part.width, part.height, part.name) == (20, 10, "t-image-2")
    assert list((tmp_path / "images").iterdir()) == [Path(part.path)]


def test_an_image_that_cannot_be_sent_is_said_so_and_the_rest_arrives(tmp_path: Path) -> None:
    bad = ImageContent(type="image", data=base64.b64encode(b"not a png").decode(), mimeType="image/png")
    good = ImageContent(type="image", data=base64.b64encode(png_bytes(4, 4)).decode(), mimeType="image/png")
    outcome = convert_result(result(bad, good), tool="t", results_dir=None, images=ImageStore(tmp_path))
    assert len(outcome.images) == 1
    assert "[not sent to the model: t-image-1: not an image Wyckoff can read" in outcome.text


def test_without_a_store_nothing_goes_to_the_model(tmp_path: Path) -> None:
    block = ImageContent(type="image", data=base64.b64encode(png_bytes(4, 4)).decode(), mimeType="image/png")
    assert convert_result(result(block), tool="t", results_dir=None).images == ()
