"""`glob_match` answers as `fnmatch.fnmatchcase` does, on the shipped patterns and on a table."""

from __future__ import annotations

import fnmatch
import itertools

import pytest

from wyckoff_cli.models.catalogue import default_catalogue, glob_match
from wyckoff_cli.models.inference import infer_context_window, match_context_pattern

CASES = [
    ("gpt-4o", "gpt-4o"),
    ("gpt-4o", "gpt-4o*"),
    ("gpt-4o-mini", "*mini"),
    ("claude-opus-4-6-20260101", "*claude-opus-4-6*"),
    ("claude-opus-4", "*claude-opus-4-6*"),
    ("aa", "a*a"),  # the pieces may not overlap
    ("a", "a*a"),
    ("abcabc", "*abc*abc*"),
    ("abcab", "*abc*abc*"),
    ("", "*"),
    ("", ""),
    ("x", ""),
    ("llama-3.2-90b", "*llama-3.[123]*"),  # brackets: fnmatch's own path
    ("o3-mini", "o[134]*"),
    ("o2", "o[134]*"),
    ("gpt-4x", "gpt-4?"),
    ("gpt-4.1", "gpt-4?1"),  # a dot is a plain character
    ("gpt-4x1", "gpt-4.1"),
    ("a**b", "a**b"),
]


@pytest.mark.parametrize(("name", "pattern"), CASES)
def test_the_table_matches_as_fnmatch_does(name: str, pattern: str) -> None:
    assert glob_match(name, pattern) is fnmatch.fnmatchcase(name, pattern)


def test_every_short_star_pattern_over_a_small_alphabet() -> None:
    checked = 0
    for size in range(6):
        for pattern in map("".join, itertools.product("ab*", repeat=size)):
            for length in range(6):
                for name in map("".join, itertools.product("ab", repeat=length)):
                    assert glob_match(name, pattern) is fnmatch.fnmatchcase(name, pattern), (name, pattern)
                    checked += 1
    assert checked > 20_000


def test_the_shipped_patterns_pick_the_same_window_as_fnmatch() -> None:
    patterns = default_catalogue().patterns
    names = ["gpt-bench", "llama-3.3-70b-versatile", "claude-opus-4-6-x", "qwen3-coder", "o3-mini", "glm-4.6"]
    for name in names:
        expected = next((p for p in patterns if fnmatch.fnmatchcase(name, p.pattern.lower())), None)
        assert match_context_pattern(name) == expected
        window = infer_context_window(name)
        assert window == (expected.context_window if expected else 65_536)
