"""`infer_context_window()`: name patterns from the data file, first match wins, else 64K."""

from __future__ import annotations

import pytest

from wyckoff_cli.models.catalogue import ContextPattern
from wyckoff_cli.models.inference import (
    DEFAULT_CONTEXT_WINDOW,
    infer_context_window,
    match_context_pattern,
)


@pytest.mark.parametrize(
    ("name", "window"),
    [
        ("claude-3-7-sonnet-20250219", 200_000),
        ("anthropic.claude-3-5-haiku-20241022-v1:0", 200_000),
        ("claude-sonnet-4-6-20260217", 1_000_000),
        ("gpt-5-chat-latest", 128_000),
        ("gpt-5.3-codex", 400_000),
        ("gpt-4.1-2025-04-14", 1_047_576),
        ("chatgpt-4o-latest", 128_000),
        ("gpt-4-0613", 8_192),
        ("gpt-4-1106-preview", 128_000),
        ("o3-pro", 200_000),
        ("o1-mini", 128_000),
        ("gemini-2.5-flash-image", 1_048_576),
        ("gemini-1.5-pro-002", 2_097_152),
        ("gemma3:27b", 131_072),
        ("deepseek-ai/DeepSeek-V3.2", 128_000),
        ("deepseek-r1:14b", 128_000),
        ("Qwen/Qwen3-Coder-480B-A35B-Instruct", 262_144),
        ("qwen3-235b-a22b-instruct-2507", 262_144),
        ("qwen3:8b", 131_072),
        ("qwen2.5-coder:7b", 32_768),
        ("moonshotai/Kimi-K2-Instruct-0905", 262_144),
        ("kimi-k2-0711-preview", 131_072),
        ("mistral-large-2411", 131_072),
        ("devstral-small-2505", 131_072),
        ("open-mistral-nemo", 131_072),
        ("llama-3.3-70b-versatile", 131_072),
        ("llama3:8b", 8_192),
        ("meta-llama/llama-4-maverick", 1_048_576),
    ],
)
def test_common_names_get_their_window(name: str, window: int) -> None:
    assert infer_context_window(name) == window


@pytest.mark.parametrize("name", ["my-local-model", "", "starcoder2", "acme-9000"])
def test_an_unknown_model_counts_as_64k(name: str) -> None:
    assert match_context_pattern(name) is None
    assert infer_context_window(name) == DEFAULT_CONTEXT_WINDOW == 65_536


def test_the_first_matching_pattern_wins_and_matching_ignores_case() -> None:
    patterns = [
        ContextPattern("acme-big*", 1_000),
        ContextPattern("ACME*", 10),
        ContextPattern("acme-big", 5),
    ]
    assert infer_context_window("Acme-Big-2", patterns) == 1_000
    assert infer_context_window("acme-small", patterns) == 10
    found = match_context_pattern("vendor/ACME-BIG", patterns)
    assert found is not None and found.pattern == "acme-big*"
    assert infer_context_window("other", patterns) == DEFAULT_CONTEXT_WINDOW
