"""One answer to "what do we know about this model?", for every consumer.

Compaction thresholds, the status bar, `wyckoff model` and cost reports all call
`resolve_model_facts()`. Each figure comes from the first source that has it:

1. the user's override (`[model_overrides."PROVIDER:MODEL"]`, saved by
   `wyckoff model cost`; an override under the bare model name applies to it under
   any provider) → source `configured`;
2. the shipped catalogue, by exact name, then by the name without its dated or
   variant suffix (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`) → `catalogue`;
3. for the context window only: the name patterns → `inferred`;
4. else 64K tokens → `default`.

Prices not in 1 or 2 stay unknown (None). Overriding any price drops the catalogue's
long-prompt tiers, since the user's figures are flat prices. Plain values in,
plain values out: nothing else of ours is imported.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from wyckoff_cli.core.provider_table import PROVIDER_NAMES
from wyckoff_cli.models.catalogue import (
    PRICE_FIELDS,
    Catalogue,
    CatalogueEntry,
    PriceTier,
    Reasoning,
    default_catalogue,
)
from wyckoff_cli.models.inference import DEFAULT_CONTEXT_WINDOW, match_context_pattern

FigureSource = Literal["configured", "catalogue", "inferred", "default"]

KNOWN_PROVIDERS = PROVIDER_NAMES
"""The names a `provider:` prefix may have (the provider table in `core/`)."""


class OverrideLike(Protocol):
    """What a user override offers (`storage.config.ModelOverride` fits)."""

    @property
    def context_window(self) -> int | None: ...
    @property
    def input(self) -> float | None: ...
    @property
    def output(self) -> float | None: ...
    @property
    def cache_read(self) -> float | None: ...
    @property
    def cache_write(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per million tokens; None where unknown. `input` is for input not read
    from the cache. `tiers` replace the four when a prompt is longer than `above`."""

    input: float | None = None
    output: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None
    tiers: tuple[PriceTier, ...] = ()
    web_search: float | None = None  # USD per 1,000 server-side web searches

    @property
    def known(self) -> bool:
        """Whether a cost can be computed (input and output prices are known;
        unknown cache prices count as the input price)."""
        return self.input is not None and self.output is not None

    def as_dict(self) -> dict[str, float | None]:
        return {name: getattr(self, name) for name in PRICE_FIELDS}


@dataclass(frozen=True, slots=True)
class ModelFacts:
    model_id: str  # as asked, e.g. `anthropic:claude-sonnet-4-5-20250929`
    provider: str | None  # the `provider:` prefix, if the id had one
    model: str  # the bare model name
    context_window: int
    context_window_source: FigureSource
    prices: Prices
    price_sources: Mapping[str, FigureSource] = field(default_factory=dict)  # known prices only
    max_output: int | None = None  # from the catalogue, capped at the context window
    entry: CatalogueEntry | None = None  # the catalogue entry that matched
    exact_match: bool = False  # whether it matched by exact name (not a shortened one)
    context_pattern: str | None = None  # the pattern, when the window was inferred
    override_key: str | None = None  # the `model_overrides` key that applied

    @property
    def in_catalogue(self) -> bool:
        return self.entry is not None

    @property
    def reasoning(self) -> Reasoning | None:
        return None if self.entry is None else self.entry.reasoning

    @property
    def images(self) -> bool | None:
        return None if self.entry is None else self.entry.images

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (used by `wyckoff model list --json`)."""
        entry = self.entry
        return {
            "model_id": self.model_id,
            "in_catalogue": entry is not None,
            "catalogue_name": None if entry is None else entry.name,
            "vendor": None if entry is None else entry.vendor,
            "context_window": self.context_window,
            "context_window_source": self.context_window_source,
            "max_output": self.max_output,
            "reasoning": self.reasoning,
            "images": self.images,
            "prices": self.prices.as_dict(),
            "price_sources": dict(self.price_sources),
            "tiers": [dataclasses.asdict(tier) for tier in self.prices.tiers],
        }


def split_model_id(model_id: str) -> tuple[str | None, str]:
    """`openai:qwen3:8b` → (`openai`, `qwen3:8b`); `qwen3:8b` → (None, `qwen3:8b`):
    only a known adapter name counts as a provider prefix."""
    provider, sep, rest = model_id.partition(":")
    if sep and rest and provider in KNOWN_PROVIDERS:
        return provider, rest
    return None, model_id


def find_override(
    model_id: str, overrides: Mapping[str, OverrideLike] | None
) -> tuple[str, OverrideLike] | None:
    """The override for `model_id` (exact id first, then the bare model name)."""
    if not overrides:
        return None
    _, model = split_model_id(model_id)
    for key in dict.fromkeys((model_id, model)):
        found = overrides.get(key)
        if found is not None:
            return key, found
    return None


def resolve_model_facts(
    model_id: str,
    overrides: Mapping[str, OverrideLike] | None = None,
    catalogue: Catalogue | None = None,
) -> ModelFacts:
    """Context window, prices and the rest for `model_id` (`provider:model` or a bare
    model name), each with where it came from. Never raises for an unknown model."""
    catalogue = default_catalogue() if catalogue is None else catalogue
    provider, model = split_model_id(model_id)
    found = find_override(model_id, overrides)
    override_key, override = found if found is not None else (None, None)
    hit = catalogue.lookup(model)
    entry, exact = hit if hit is not None else (None, False)

    pattern: str | None = None
    window_source: FigureSource
    if override is not None and override.context_window is not None:
        window, window_source = override.context_window, "configured"
    elif entry is not None:
        window, window_source = entry.context_window, "catalogue"
    else:
        matched = match_context_pattern(model, catalogue.patterns)
        if matched is not None:
            window, window_source, pattern = matched.context_window, "inferred", matched.pattern
        else:
            window, window_source = DEFAULT_CONTEXT_WINDOW, "default"

    values: dict[str, float | None] = {}
    sources: dict[str, FigureSource] = {}
    for name in PRICE_FIELDS:
        configured = None if override is None else getattr(override, name)
        if configured is not None:
            values[name], sources[name] = float(configured), "configured"
        elif entry is not None:
            values[name], sources[name] = getattr(entry, name), "catalogue"
        else:
            values[name] = None
    flat = any(source == "configured" for source in sources.values())
    tiers = () if entry is None or flat else entry.tiers
    search = None if entry is None else entry.web_search
    prices = Prices(
        values["input"], values["output"], values["cache_read"], values["cache_write"], tiers, search
    )

    return ModelFacts(
        model_id=model_id,
        provider=provider,
        model=model,
        context_window=window,
        context_window_source=window_source,
        prices=prices,
        price_sources=sources,
        max_output=None if entry is None else min(entry.max_output, window),
        entry=entry,
        exact_match=exact,
        context_pattern=pattern,
        override_key=override_key,
    )
