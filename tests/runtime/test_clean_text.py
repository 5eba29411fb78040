"""`clean_text`: lone surrogates become U+FFFD, everything else is the same object."""

from __future__ import annotations

import pytest

from wyckoff_cli.runtime.assembly import clean_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain ascii", "plain ascii"),
        ("", ""),
        ("héllo ☃ 😀", "héllo ☃ 😀"),
        ("a\ud800b", "a\ufffdb"),  # a lone high surrogate
        ("a\udc00b", "a\ufffdb"),  # a lone low surrogate
        ("\ud83d\ude00", "😀"),  # a valid pair is joined
        ("x\ud83d", "x\ufffd"),  # cut in the middle of a pair
    ],
)
def test_lone_surrogates_are_replaced(text: str, expected: str) -> None:
    assert clean_text(text) == expected


@pytest.mark.parametrize("text", ["plain ascii", "héllo ☃ 😀"])
def test_clean_text_returns_the_same_object(text: str) -> None:
    assert clean_text(text) is text
