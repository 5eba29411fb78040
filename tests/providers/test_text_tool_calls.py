"""`<tool_call>` blocks printed as text become tool calls, however the text is split."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wyckoff_cli.core.messages import TextPart, ToolCallPart
from wyckoff_cli.providers.base import TextChunk, ThinkingChunk, ToolCallChunk
from wyckoff_cli.providers.openai_compat import ChunkReader
from wyckoff_cli.providers.sdk_base import coalesce
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


STREAM = [
    {"content": "Let me look "},
    {"content": "at it. <tool_"},
    {"content": 'call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool'},
    {"content": "_call>  "},
    {"reasoning_content": "Then the tests."},
    {"content": "Done <b>"},
    {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "list_dir", "arguments": "{}"}}]},
    {"content": " after."},
]


@pytest.mark.parametrize("parse", [True, False], ids=["text-calls", "plain"])
@pytest.mark.parametrize("per_read", [1, 2, 3, len(STREAM)])
def test_a_read_of_many_deltas_gives_what_one_delta_at_a_time_gives(parse: bool, per_read: int) -> None:
    """The Chat Completions reader holds a read's content deltas and handles them together
    (one parser pass per read): the chunks, once joined, are the same as delta by delta,
    in the same order around thinking and native tool calls."""

    def run(group: int) -> list[object]:
        reader = ChunkReader("openai:x", parse)
        for start in range(0, len(STREAM), group):
            for delta in STREAM[start : start + group]:
                reader.feed("", json.dumps({"choices": [{"delta": delta}]}).encode())
            reader.flush()
        reader.feed("", b"[DONE]")
        reader.finish()
        shown = coalesce(reader.out)
        return [
            (type(c).__name__, c.name, c.arguments) if isinstance(c, ToolCallChunk) else c
            for c in shown
            if isinstance(c, TextChunk | ThinkingChunk | ToolCallChunk)
        ]

    batched, one_by_one = run(per_read), run(1)
    assert batched == one_by_one
    names = [c[1] for c in batched if isinstance(c, tuple)]
    assert names == (["read_file", "list_dir"] if parse else ["list_dir"])
