"""Images count in the context estimate by each vendor's rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.images_support import png_bytes
from wyckoff_cli.context.image_tokens import image_tokens
from wyckoff_cli.context.tokens import TokenEstimator, estimate_message
from wyckoff_cli.core.messages import Message
from wyckoff_cli.storage.images import ImageStore


@pytest.mark.parametrize(
    ("vendor", "width", "height", "tokens"),
    [
        ("anthropic", 1000, 1000, 1334),  # 1,000,000 / 750
        ("anthropic", 1568, 1176, 2459),
        ("anthropic", 3136, 2352, 2459),  # Anthropic scales to a 1,568 px long edge first
        ("openai", 1024, 1024, 765),  # 768×768 → 4 tiles: 85 + 4×170
        ("openai", 2048, 4096, 1105),  # 1024×2048 → 768×1536 → 2×3 tiles
        ("openai-responses", 512, 512, 255),
        ("gemini", 384, 384, 258),
        ("gemini", 1568, 1176, 258 * 3 * 2),
        ("someone-else", 750, 1, 1),
    ],
)
def test_each_vendor_rule(vendor: str, width: int, height: int, tokens: int) -> None:
    assert image_tokens(vendor, width, height) == tokens


def test_a_message_with_an_image_counts_the_image(tmp_path: Path) -> None:
    part = ImageStore(tmp_path).add(png_bytes(1000, 1000), "a.png")
    plain, with_image = Message.user("look"), Message.user("look", images=[part])
    assert estimate_message(with_image) - estimate_message(plain) == 1334
    assert estimate_message(with_image, "gemini") - estimate_message(plain, "gemini") == 258 * 4
    estimator = TokenEstimator(vendor="openai")
    assert estimator.message(with_image) - estimator.message(plain) == 765
