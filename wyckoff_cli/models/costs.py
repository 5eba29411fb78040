"""What a model call cost, and what the prompt cache saved.

The cost of one call uses all four prices (USD per million tokens):

    uncached input × input + cache reads × cache_read + cache writes × cache_write
    + output × output

Reasoning/thinking tokens are billed as output: in the normalized counts they are
*part of* `output_tokens`. "Without cache" is the same call with every input token at
the input price; `saved` is the difference (negative when cache writes cost more
than reads saved, e.g. a first Anthropic call). A cache price that is unknown counts
as the input price. When a model has long-prompt tiers, the prompt length (every
input token, cached or not) picks the prices, so cost each call and then add the
costs up (`total_cost`), never the token counts.

Counts are normalized as `runtime.messages.Usage` is (this module takes anything
with the same attributes, see `UsageLike`): `input_tokens` counts every prompt token
*including* cache reads and writes. Vendors report differently; the `TokenCounts.from_*`
constructors convert:

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
from typing import Protocol

from wyckoff_cli.models.facts import Prices

PER_MILLION = 1_000_000


class UsageLike(Protocol):
    """Normalized token counts of one call (`runtime.messages.Usage` fits)."""

    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def cache_read_tokens(self) -> int: ...
    @property
    def cache_write_tokens(self) -> int: ...


@dataclass(frozen=True, slots=True)
class TokenCounts:
    """Normalized counts: `input_tokens` includes cache reads and writes;
    `reasoning_tokens` are part of `output_tokens`."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def uncached_input_tokens(self) -> int:
        return max(0, self.input_tokens - self.cache_read_tokens - self.cache_write_tokens)

    @classmethod
    def from_anthropic(
        cls,
        input_tokens: int,
        output_tokens: int,
        cache_read_input_tokens: int = 0,
        cache_creation_input_tokens: int = 0,
    ) -> TokenCounts:
        """Anthropic's `usage`: `input_tokens` leaves out cache reads and writes;
        `output_tokens` already includes thinking."""
        total = input_tokens + cache_read_input_tokens + cache_creation_input_tokens
        return cls(total, output_tokens, cache_read_input_tokens, cache_creation_input_tokens)

    @classmethod
    def from_openai(
        cls, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, reasoning_tokens: int = 0
    ) -> TokenCounts:
        """OpenAI's `usage` (Chat Completions; the Responses API's `input_tokens`/
        `output_tokens` mean the same): cached tokens are part of the prompt and
        reasoning tokens part of the completion."""
        return cls(prompt_tokens, completion_tokens, cached_tokens, 0, reasoning_tokens)

    @classmethod
    def from_gemini(
        cls,
        prompt_token_count: int,
        candidates_token_count: int,
        cached_content_token_count: int = 0,
        thoughts_token_count: int = 0,
    ) -> TokenCounts:
        """Gemini's `usageMetadata`: cached tokens are part of the prompt; thoughts
        are counted apart from the candidates but billed as output."""
        output = candidates_token_count + thoughts_token_count
        return cls(prompt_token_count, output, cached_content_token_count, 0, thoughts_token_count)


@dataclass(frozen=True, slots=True)
class Cost:
    """USD, split by what was billed. `without_cache` is the same tokens billed as if
    there were no prompt cache."""

    input: float = 0.0  # input not read from or written to the cache
    cache_read: float = 0.0
    cache_write: float = 0.0
    output: float = 0.0
    without_cache: float = 0.0

    @property
    def total(self) -> float:
        return self.input + self.cache_read + self.cache_write + self.output

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


def cost_of(usage: UsageLike, prices: Prices) -> Cost | None:
    """The cost of one call; None when the model's input or output price is unknown."""
    cached = usage.cache_read_tokens + usage.cache_write_tokens
    prompt = max(usage.input_tokens, cached)
    rates = rates_for_prompt(prices, prompt)
    if rates is None:
        return None
    output = usage.output_tokens * rates.output / PER_MILLION
    return Cost(
        input=(prompt - cached) * rates.input / PER_MILLION,
        cache_read=usage.cache_read_tokens * rates.cache_read / PER_MILLION,
        cache_write=usage.cache_write_tokens * rates.cache_write / PER_MILLION,
        output=output,
        without_cache=prompt * rates.input / PER_MILLION + output,
    )


def total_cost(usages: Iterable[UsageLike], prices: Prices) -> Cost | None:
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
    cached_usage: TokenCounts


def example_turn(
    prices: Prices, input_tokens: int = 20_000, output_tokens: int = 1_000, cache_hit: float = 0.9
) -> TurnExample | None:
    """The worked example `wyckoff model cost` prints: by default a turn of 20,000
    input and 1,000 output tokens, without cache and with 90% of the prompt read from
    the cache (the other 10% written to it). None when the prices are unknown."""
    if not 0.0 <= cache_hit <= 1.0:
        raise ValueError(f"cache_hit must be between 0 and 1, got {cache_hit!r}")
    read = round(input_tokens * cache_hit)
    plain = TokenCounts(input_tokens, output_tokens)
    cached = TokenCounts(input_tokens, output_tokens, read, input_tokens - read)
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
