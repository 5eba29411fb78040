"""What an image costs in input tokens, by each vendor's published rule.

- Anthropic: width × height / 750 (after its own downscaling to a 1,568 px long edge).
- OpenAI (Chat, Responses, compatible endpoints; `detail: auto/high`): the image is
  fitted within 2,048 × 2,048, then its short side is brought to 768 px; 85 tokens plus
  170 per 512 px tile.
- Gemini: 258 tokens when both sides are at most 384 px, else 258 per 768 px tile.

An unknown vendor is counted by Anthropic's rule, the largest of the three for the
images Wyckoff sends (long edge at most 1,568 px).
"""

from __future__ import annotations

import math

ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_LONG_EDGE = 1568
OPENAI_BASE_TOKENS = 85
OPENAI_TILE_TOKENS = 170
GEMINI_TILE_TOKENS = 258


def image_tokens(vendor: str, width: int, height: int) -> int:
    width, height = max(1, width), max(1, height)
    if vendor in ("openai", "openai-responses", "openai-compatible"):
        return _openai(width, height)
    if vendor == "gemini":
        if width <= 384 and height <= 384:
            return GEMINI_TILE_TOKENS
        return math.ceil(width / 768) * math.ceil(height / 768) * GEMINI_TILE_TOKENS
    scale = min(1.0, ANTHROPIC_LONG_EDGE / max(width, height))
    return max(1, math.ceil(width * scale * height * scale / ANTHROPIC_PIXELS_PER_TOKEN))


def _openai(width: int, height: int) -> int:
    scale = min(1.0, 2048 / max(width, height))
    w, h = width * scale, height * scale
    shrink = min(1.0, 768 / min(w, h))
    w, h = w * shrink, h * shrink
    return OPENAI_BASE_TOKENS + OPENAI_TILE_TOKENS * math.ceil(w / 512) * math.ceil(h / 512)
