"""What a model call cost, and what the prompt cache saved.

The cost of one call uses all four prices (USD per million tokens):

    uncached input × input + cache reads × cache_read + cache writes × cache_write
    + output × output  (+ server-side web searches × the per-1,000 search price)

Reasoning/thinking tokens are billed as output: in the normalized counts they are
*part of* `output_tokens`. "Without cache" is the same call with every input token at
the input price; `saved` is the difference (negative when cache writes cost more
than reads saved, e.g. a first Anthropic call). A cache price that is unknown counts
as the input price. When a model has long-prompt tiers, the prompt length (every
input token, cached or not) picks the prices, so cost each call and then add the
costs up (`total_cost`), never the token counts.

Counts are `core.usage.Usage`, the one token-count type: `input_tokens` counts every
prompt token *including* cache reads and writes. Vendors report differently; each
adapter converts (`anthropic_usage`, `openai_usage`, `gemini_usage` in `providers/`):

- Anthropic: `input_tokens` EXCLUDES `cache_read_input_tokens` and
  `cache_creation_input_tokens`, which are added;
- OpenAI (and DeepSeek, Qwen, Kimi, Mistral, which follow it): `prompt_tokens`
  INCLUDE `prompt_tokens_details.cached_tokens`; there are no cache writes;
  `completion_tokens` include `completion_tokens_details.reasoning_tokens`;
- Gemini: `promptTokenCount` includes `cachedContentTokenCount`, but
  `candidatesTokenCount` EXCLUDES `thoughtsTokenCount`, which is added to output.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wyckoff_cli.core.usage import Usage
from wyckoff_cli.models.facts import Prices

PER_MILLION = 1_000_000


@dataclass(frozen=True, slots=True)
class Cost:
    """USD, split by what was billed. `without_cache` is the same tokens billed as if
    there were no prompt cache."""

    input: float = 0.0  # input not read from or written to the cache
    cache_read: float = 0.0
    cache_write: float = 0.0
    output: float = 0.0
    without_cache: float = 0.0
    web_search: float = 0.0  # server-side web searches (per 1,000, as the catalogue says)

    @property
    def total(self) -> float:
        return self.input + self.cache_read + self.cache_write + self.output + self.web_search

    @property
    def saved(self) -> float:
        """What the cache saved (negative when writing to it cost more than it saved)."""
        return self.without_cache - self.total

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.input + other.input,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.output + other.output,
            self.without_cache + other.without_cache,
            self.web_search + other.web_search,
        )


@dataclass(frozen=True, slots=True)
class RatesUsed:
    """The four prices that apply to one call, after picking a tier."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    tier_above: int | None = None  # the tier's threshold, when one applied


def rates_for_prompt(prices: Prices, prompt_tokens: int) -> RatesUsed | None:
    """The prices for a call whose prompt has `prompt_tokens` tokens in all; None
    when the input or output price is unknown."""
    if prices.input is None or prices.output is None:
        return None
    tier = next((t for t in reversed(prices.tiers) if prompt_tokens > t.above), None)
    if tier is not None:
        return RatesUsed(tier.input, tier.output, tier.cache_read, tier.cache_write, tier.above)
    cache_read = prices.input if prices.cache_read is None else prices.cache_read
    cache_write = prices.input if prices.cache_write is None else prices.cache_write
    return RatesUsed(prices.input, prices.output, cache_read, cache_write)


def cost_of(usage: Usage, prices: Prices) -> Cost | None:
    """The cost of one call; None when the model's input or output price is unknown."""
    cached = usage.cache_read_tokens + usage.cache_write_tokens
    prompt = max(usage.input_tokens, cached)
    rates = rates_for_prompt(prices, prompt)
    if rates is None:
        return None
    output = usage.output_tokens * rates.output / PER_MILLION
    searches = usage.web_searches * (prices.web_search or 0.0) / 1000
    return Cost(
        input=(prompt - cached) * rates.input / PER_MILLION,
        cache_read=usage.cache_read_tokens * rates.cache_read / PER_MILLION,
        cache_write=usage.cache_write_tokens * rates.cache_write / PER_MILLION,
        output=output,
        without_cache=prompt * rates.input / PER_MILLION + output + searches,
        web_search=searches,
    )


def total_cost(usages: Iterable[Usage], prices: Prices) -> Cost | None:
    """The summed cost of many calls to one model, each costed on its own (tiers
    depend on each call's prompt length); None when the prices are unknown."""
    if not prices.known:
        return None
    total = Cost()
    for usage in usages:
        cost = cost_of(usage, prices)
        if cost is not None:
            total += cost
    return total


@dataclass(frozen=True, slots=True)
class TurnExample:
    """One turn costed twice: with no cache, and with a share of the prompt read
    from the cache (the rest newly written to it, as a caching agent does)."""

    input_tokens: int
    output_tokens: int
    cache_hit: float
    no_cache: Cost
    cached: Cost
    cached_usage: Usage


def example_turn(
    prices: Prices, input_tokens: int = 20_000, output_tokens: int = 1_000, cache_hit: float = 0.9
) -> TurnExample | None:
    """The worked example `wyckoff model cost` prints: by default a turn of 20,000
    input and 1,000 output tokens, without cache and with 90% of the prompt read from
    the cache (the other 10% written to it). None when the prices are unknown."""
    if not 0.0 <= cache_hit <= 1.0:
        raise ValueError(f"cache_hit must be between 0 and 1, got {cache_hit!r}")
    read = round(input_tokens * cache_hit)
    plain = Usage(input_tokens, output_tokens)
    cached = Usage(input_tokens, output_tokens, read, input_tokens - read)
    no_cache_cost, cached_cost = cost_of(plain, prices), cost_of(cached, prices)
    if no_cache_cost is None or cached_cost is None:
        return None
    return TurnExample(input_tokens, output_tokens, cache_hit, no_cache_cost, cached_cost, cached)


def format_usd(amount: float) -> str:
    """`$0.0279` below one dollar (four decimals), `$12.35` from one dollar up."""
    if amount == 0:
        return "$0.00"
    sign = "-" if amount < 0 else ""
    value = abs(amount)
    return f"{sign}${value:.4f}" if value < 1 else f"{sign}${value:,.2f}"


def format_price(value: float | None) -> str:
    """A price per million tokens: 3.0 → `3.00`, 0.175 → `0.175`, None → `-`."""
    if value is None:
        return "-"
    text = f"{value:.4f}".rstrip("0")
    whole, _, decimals = text.partition(".")
    return f"{whole}.{decimals.ljust(2, '0')}"
