"""What `wyckoff model cost` reads from its flags (`parse_figures`): token counts as people
type them, prices, and the catalogue names a mistyped model id was probably meant to be.

Context windows: `32768`, `32,768`, `32_768`, `32k`, `32K`, `1.5m`, `1M`. The suffixes
are decimal (`k` = 1,000, `m` = 1,000,000), so `32k` is 32,000 and `1m` 1,000,000:
never more than the window a vendor rounds to "32K" or "1M", so compaction starts no
later than it must; write the exact figure (`32768`) when you know it.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
from collections.abc import Iterable

from wyckoff_cli.core.errors import UsageError
from wyckoff_cli.models.catalogue import PRICE_FIELDS

PRICE_LABELS = {name: name.replace("_", " ") for name in PRICE_FIELDS}
PRICE_FLAGS = {name: "--" + name.replace("_", "-") for name in PRICE_FIELDS}
WINDOW_MIN, WINDOW_MAX = 1_024, 100_000_000

_GROUPED = re.compile(r"[1-9][0-9]{0,2}(?:(?P<sep>[,_])[0-9]{3})(?:(?P=sep)[0-9]{3})*")
_PLAIN = re.compile(r"[0-9]+")
_SUFFIXED = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[kKmM])")
_UNITS = {"k": 1_000, "m": 1_000_000}

TOKEN_COUNT_FORMS = "32768, 32,768, 32_768, 32k or 1m"


def parse_token_count(text: str) -> int | None:
    """The whole number of tokens `text` writes, or None when it is not one of the forms
    above (a fraction of a token, a negative number, `1e6`, `32kb`, `32,76`)."""
    text = text.strip()
    if _PLAIN.fullmatch(text):
        return int(text)
    if _GROUPED.fullmatch(text):
        return int(re.sub(r"[,_]", "", text))
    match = _SUFFIXED.fullmatch(text)
    if match is None:
        return None
    whole, _, fraction = match["number"].partition(".")
    scale = _UNITS[match["unit"].lower()]
    if len(fraction) > len(str(scale)) - 1:  # 1.0005k: not a whole number of tokens
        return None
    return int(whole) * scale + (int(fraction) * scale // 10 ** len(fraction) if fraction else 0)


def close_models(model_id: str, known: Iterable[str], cutoff: float = 0.85) -> list[str]:
    """Catalogue ids (`provider:model`) that `model_id` looks like a typo of: the same
    provider, a name at least `cutoff` similar (`claude-sonet-4-5` → `claude-sonnet-4-5`)."""
    provider, _, name = model_id.partition(":")
    same = {entry.partition(":")[2]: entry for entry in known if entry.partition(":")[0] == provider}
    return [same[hit] for hit in difflib.get_close_matches(name, list(same), n=3, cutoff=cutoff)]


def parse_figures(args: argparse.Namespace) -> dict[str, int | float]:
    """The figures given as flags, checked; a bad one is a UsageError naming it."""
    figures: dict[str, int | float] = {}
    if args.context_window is not None:
        window = parse_token_count(args.context_window)
        if window is None or not WINDOW_MIN <= window <= WINDOW_MAX:
            raise UsageError(
                f"--context-window must be a positive integer (tokens) from {WINDOW_MIN:,} to {WINDOW_MAX:,}, "
                f"got {args.context_window!r} (write it like {TOKEN_COUNT_FORMS})"
            )
        figures["context_window"] = window
    for name, flag in PRICE_FLAGS.items():
        raw = getattr(args, name)
        if raw is None:
            continue
        try:
            value = float(raw.strip())
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0 or not re.fullmatch(r"[0-9._eE+-]+", raw.strip()):
            raise UsageError(f"{flag} must be a non-negative number (USD per million tokens), got {raw!r}")
        figures[name] = value
    return figures
