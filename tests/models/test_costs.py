"""Costs with all four prices, reasoning billed as output, and what the cache saved.

Each vendor convention of what its input count includes is checked with a worked
example whose arithmetic is written out.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wyckoff_cli.core.usage import Usage
from wyckoff_cli.models.catalogue import PriceTier
from wyckoff_cli.models.costs import (
    Cost,
    cost_of,
    example_turn,
    format_price,
    format_usd,
    rates_for_prompt,
    total_cost,
)
from wyckoff_cli.models.facts import Prices, resolve_model_facts
from wyckoff_cli.providers.anthropic import anthropic_usage
from wyckoff_cli.providers.gemini import gemini_usage
from wyckoff_cli.providers.openai_compat import openai_usage

SONNET = Prices(input=3.0, output=15.0, cache_read=0.30, cache_write=3.75)
GPT_51 = Prices(input=1.25, output=10.0, cache_read=0.125, cache_write=1.25)
DEEPSEEK = Prices(input=0.28, output=0.42, cache_read=0.028, cache_write=0.28)
GEMINI_PRO = Prices(1.25, 10.0, 0.125, 1.25, tiers=(PriceTier(200_000, 2.50, 15.0, 0.25, 2.50),))


def test_anthropic_reports_cache_tokens_apart_from_input_tokens() -> None:
    # usage: {"input_tokens": 1500, "cache_read_input_tokens": 18000,
    #         "cache_creation_input_tokens": 500, "output_tokens": 1000}
    counts = anthropic_usage(1_500, 1_000, cache_read_input_tokens=18_000, cache_creation_input_tokens=500)
    assert (counts.input_tokens, counts.uncached_input_tokens) == (20_000, 1_500)
    cost = cost_of(counts, SONNET)
    assert cost is not None
    assert cost.input == pytest.approx(1_500 * 3.0 / 1e6)  # 0.0045
    assert cost.cache_read == pytest.approx(18_000 * 0.30 / 1e6)  # 0.0054
    assert cost.cache_write == pytest.approx(500 * 3.75 / 1e6)  # 0.001875
    assert cost.output == pytest.approx(1_000 * 15.0 / 1e6)  # 0.015
    assert cost.total == pytest.approx(0.026775)
    assert cost.without_cache == pytest.approx(20_000 * 3.0 / 1e6 + 0.015)  # 0.075
    assert cost.saved == pytest.approx(0.048225)
    # The runtime's normalized Usage gives the same numbers.
    assert cost_of(anthropic_usage(1_500, 1_000, 18_000, 500), SONNET) == cost


def test_reading_anthropic_input_tokens_as_the_whole_prompt_would_undercount() -> None:
    wrong = cost_of(Usage(1_500, 1_000, 18_000, 500), SONNET)  # input_tokens taken as-is
    right = cost_of(anthropic_usage(1_500, 1_000, 18_000, 500), SONNET)
    assert wrong is not None and right is not None
    assert wrong.input == 0 and right.input > 0


def test_openai_prompt_tokens_include_cached_and_completion_includes_reasoning() -> None:
    # usage: {"prompt_tokens": 20000, "completion_tokens": 1000,
    #         "prompt_tokens_details": {"cached_tokens": 18000},
    #         "completion_tokens_details": {"reasoning_tokens": 600}}
    counts = openai_usage(20_000, 1_000, cached_tokens=18_000, reasoning_tokens=600)
    assert (counts.uncached_input_tokens, counts.cache_write_tokens) == (2_000, 0)
    cost = cost_of(counts, GPT_51)
    assert cost is not None
    assert cost.input == pytest.approx(2_000 * 1.25 / 1e6)  # 0.0025
    assert cost.cache_read == pytest.approx(18_000 * 0.125 / 1e6)  # 0.00225
    assert cost.output == pytest.approx(1_000 * 10.0 / 1e6)  # 0.01: the 600 reasoning tokens are inside
    assert cost.total == pytest.approx(0.01475)
    assert cost.without_cache == pytest.approx(0.035) and cost.saved == pytest.approx(0.02025)
    assert cost_of(openai_usage(20_000, 1_000, 18_000, 600), GPT_51) == cost


def test_deepseek_follows_the_openai_convention_with_hit_and_miss_prices() -> None:
    # usage: {"prompt_tokens": 20000, "prompt_cache_hit_tokens": 18000,
    #         "prompt_cache_miss_tokens": 2000, "completion_tokens": 1000}
    cost = cost_of(openai_usage(20_000, 1_000, cached_tokens=18_000), DEEPSEEK)
    assert cost is not None
    assert cost.input == pytest.approx(2_000 * 0.28 / 1e6)  # cache miss
    assert cost.cache_read == pytest.approx(18_000 * 0.028 / 1e6)  # cache hit
    assert cost.total == pytest.approx(0.00056 + 0.000504 + 0.00042)


def test_gemini_thoughts_are_billed_as_output_and_long_prompts_use_the_tier() -> None:
    # usageMetadata: {"promptTokenCount": 250000, "cachedContentTokenCount": 200000,
    #                 "candidatesTokenCount": 2000, "thoughtsTokenCount": 3000}
    counts = gemini_usage(250_000, 2_000, cached_content_token_count=200_000, thoughts_token_count=3_000)
    assert (counts.output_tokens, counts.reasoning_tokens) == (5_000, 3_000)
    cost = cost_of(counts, GEMINI_PRO)
    assert cost is not None
    assert cost.input == pytest.approx(50_000 * 2.50 / 1e6)  # 0.125, prompt above 200K
    assert cost.cache_read == pytest.approx(200_000 * 0.25 / 1e6)  # 0.05
    assert cost.output == pytest.approx(5_000 * 15.0 / 1e6)  # 0.075
    assert cost.total == pytest.approx(0.25)
    assert cost.without_cache == pytest.approx(250_000 * 2.50 / 1e6 + 0.075)  # 0.7


def test_the_prompt_length_picks_the_tier() -> None:
    rates = rates_for_prompt(GEMINI_PRO, 200_000)
    assert rates is not None and rates.input == 1.25 and rates.tier_above is None
    rates = rates_for_prompt(GEMINI_PRO, 200_001)
    assert rates is not None and rates.input == 2.50 and rates.tier_above == 200_000
    qwen = resolve_model_facts("qwen3-max").prices
    assert [rates_for_prompt(qwen, n).input for n in (1_000, 50_000, 200_000)] == [1.2, 2.4, 3.0]  # type: ignore[union-attr]


def test_many_calls_are_costed_one_by_one_because_of_tiers() -> None:
    calls = [Usage(150_000, 1_000), Usage(250_000, 1_000)]
    total = total_cost(calls, GEMINI_PRO)
    assert total is not None
    assert total.input == pytest.approx(150_000 * 1.25 / 1e6 + 250_000 * 2.50 / 1e6)
    lumped = cost_of(Usage(400_000, 2_000), GEMINI_PRO)
    assert lumped is not None and lumped.total != pytest.approx(total.total)
    assert total_cost([], GEMINI_PRO) == Cost()
    assert total_cost(calls, Prices()) is None


def test_unknown_prices_give_no_cost_and_unknown_cache_prices_count_as_input() -> None:
    assert cost_of(Usage(10, 10), Prices(input=1.0)) is None
    cost = cost_of(Usage(1_000_000, 0, 500_000, 100_000), Prices(input=2.0, output=4.0))
    assert cost is not None
    assert (cost.input, cost.cache_read, cost.cache_write) == pytest.approx((0.8, 1.0, 0.2))
    assert cost.saved == pytest.approx(0.0)


def test_a_first_anthropic_call_that_writes_the_cache_costs_more_than_no_cache() -> None:
    cost = cost_of(anthropic_usage(0, 0, cache_creation_input_tokens=10_000), SONNET)
    assert cost is not None and cost.saved == pytest.approx(-10_000 * 0.75 / 1e6)


def test_the_worked_example_of_model_cost() -> None:
    example = example_turn(SONNET)
    assert example is not None
    assert example.no_cache.total == pytest.approx(0.075)  # 20k × 3 + 1k × 15, per million
    # 2k written × 3.75 + 18k read × 0.30 + 1k out × 15
    assert example.cached.total == pytest.approx(0.0075 + 0.0054 + 0.015)
    assert (example.cached_usage.cache_read_tokens, example.cached_usage.cache_write_tokens) == (
        18_000,
        2_000,
    )
    assert example_turn(Prices()) is None
    with pytest.raises(ValueError, match="cache_hit"):
        example_turn(SONNET, cache_hit=1.5)


def test_costs_add_up() -> None:
    a, b = Cost(1, 2, 3, 4, 12), Cost(0.5, 0, 0, 1, 2)
    assert (a + b).total == pytest.approx(11.5) and (a + b).without_cache == 14


def test_money_and_prices_are_formatted_for_people() -> None:
    assert [format_usd(x) for x in (0, 0.0279, 0.075, 1, 1234.567, -0.5)] == [
        "$0.00",
        "$0.0279",
        "$0.0750",
        "$1.00",
        "$1,234.57",
        "-$0.5000",
    ]
    assert [format_price(x) for x in (3.0, 0.3, 0.175, 0.005, None)] == [
        "3.00",
        "0.30",
        "0.175",
        "0.005",
        "-",
    ]


@given(
    uncached=st.integers(0, 2_000_000),
    read=st.integers(0, 2_000_000),
    output=st.integers(0, 200_000),
    price=st.floats(0, 100),
    read_share=st.floats(0, 1),
)
def test_reading_from_the_cache_never_costs_more_than_no_cache(
    uncached: int, read: int, output: int, price: float, read_share: float
) -> None:
    prices = Prices(input=price, output=price * 4, cache_read=price * read_share, cache_write=price)
    cost = cost_of(Usage(uncached + read, output, read, 0), prices)
    assert cost is not None
    assert min(cost.input, cost.cache_read, cost.cache_write, cost.output) >= 0
    assert cost.total <= cost.without_cache + 1e-9
