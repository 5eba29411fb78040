"""What a config field carries besides its type: its documentation and the numbers it allows."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Range:
    """The values a number may take: finite, from `low` to `high` (None: no bound);
    `low_open` excludes `low` itself."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False

    def allows(self, value: float) -> bool:
        if not math.isfinite(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or value <= self.high

    def describe(self, integer: bool) -> str:
        what = "an integer" if integer else "a finite number"
        bounds = []
        if self.low is not None:
            bounds.append(f"{'greater than' if self.low_open else 'at least'} {_number(self.low)}")
        if self.high is not None:
            bounds.append(f"at most {_number(self.high)}")
        return what + (" " + " and ".join(bounds) if bounds else "")


def _number(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else str(value)


POSITIVE = Range(1)
NON_NEGATIVE = Range(0)


def doc_field(text: str, *, range: Range | None = None, **kwargs: Any) -> Any:
    """A config field with its `doc` (the source of docs/CONFIG.md) and allowed `range`."""
    metadata: dict[str, Any] = {"doc": text}
    if range is not None:
        metadata["range"] = range
    return field(metadata=metadata, **kwargs)
