"""Token counts of a model call: the one token-count type every layer uses.

Imports nothing else of ours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one model call, in one convention for every vendor.

    `input_tokens` counts every prompt token of the request, *including* those read
    from or written to the prompt cache; `cache_read_tokens` and `cache_write_tokens`
    say how many of them were. Each vendor adapter converts its own report into this
    convention (see `docs/MODELS.md`). `reasoning_tokens` are part of `output_tokens`
    and billed as output. `web_searches` counts the vendor's server-side web searches
    as it bills them (per search, priced per 1,000 in the catalogue). Costs
    (`models/costs.py`) are computed from this type.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    web_searches: int = 0

    @property
    def uncached_input_tokens(self) -> int:
        return max(0, self.input_tokens - self.cache_read_tokens - self.cache_write_tokens)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
            self.web_searches + other.web_searches,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "web_searches": self.web_searches,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(**{k: int(data.get(k, 0) or 0) for k in cls.__dataclass_fields__})
