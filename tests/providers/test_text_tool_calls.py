"""`<tool_call>` blocks printed as text become tool calls, however the text is split."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from wyckoff_cli.core.messages import TextPart, ToolCallPart
from wyckoff_cli.providers.text_tool_calls import TextToolCallParser, parse_call
from wyckoff_cli.runtime.assembly import ResponseAssembler

NESTED = {"path": "a.py", "edits": [{"old": "x = {1: 2}", "new": "y"}], "opts": {"a": {"b": {"c": None}}}}
TEXT = (
    "Checking two files.\n\n<tool_call>\n"
    + json.dumps({"name": "edit_file", "arguments": NESTED})
    + "\n</tool_call>\n<tool_call>"
    + json.dumps({"name": "read_file", "arguments": {"path": "</tool_call>.md"}})
    + "</tool_call>\nDone for now."
)


def _run(pieces: list[str]) -> list[object]:
    parser = TextToolCallParser()
    assembler = ResponseAssembler()
    for piece in pieces:
        for chunk in parser.feed(piece):
            assembler.add(chunk)
    for chunk in parser.finish():
        assembler.add(chunk)
    return [p if not isinstance(p, ToolCallPart) else (p.name, p.arguments) for p in assembler.parts()]


EXPECTED = [
    TextPart("Checking two files."),
    ("edit_file", NESTED),
    ("read_file", {"path": "</tool_call>.md"}),
    TextPart("Done for now."),
]


def test_whole_text() -> None:
    assert _run([TEXT]) == EXPECTED


def test_every_two_way_split() -> None:
    for cut in range(1, len(TEXT)):
        assert _run([TEXT[:cut], TEXT[cut:]]) == EXPECTED, cut


def test_one_character_at_a_time() -> None:
    assert _run(list(TEXT)) == EXPECTED


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(TEXT) - 1), max_size=12))
def test_random_splits(cuts: list[int]) -> None:
    points = [0, *sorted(set(cuts)), len(TEXT)]
    assert _run([TEXT[a:b] for a, b in zip(points, points[1:], strict=False)]) == EXPECTED


def test_plain_text_passes_straight_through() -> None:
    parser = TextToolCallParser()
    assert [c.text for c in parser.feed("no tags here")] == ["no tags here"]  # type: ignore[union-attr]
    assert _run(["a < b and ", "<tool is not a tag", " <tool_cal"]) == [
        TextPart("a < b and <tool is not a tag <tool_cal")
    ]


def test_invalid_block_stays_visible() -> None:
    assert _run(["<tool_call>not json</tool_call> after"]) == [
        TextPart("<tool_call>not json</tool_call> after")
    ]


def test_unclosed_block_at_the_end_is_still_a_call() -> None:
    assert _run(['Go. <tool_call>{"name": "run", "parameters": {"cmd": "ls"}}']) == [
        TextPart("Go."),
        ("run", {"cmd": "ls"}),
    ]


def test_parse_call_variants() -> None:
    assert parse_call('```json\n{"name": "a", "arguments": {}}\n```') == ("a", {})
    assert parse_call('{"name": "a", "args": {"x": 1}}') == ("a", {"x": 1})
    assert parse_call('{"name": "", "arguments": {}}') is None
    assert parse_call('{"name": "a", "arguments": [1]}') is None
