"""The raw SSE reader: line ends, comments, multi-line data, events split across reads."""

from __future__ import annotations

import pytest

from wyckoff_cli.providers.base import TextChunk, ThinkingChunk
from wyckoff_cli.providers.sdk_base import coalesce
from wyckoff_cli.providers.sse import SSEDecoder, parse_block


async def _events(*pieces: bytes) -> list[list[tuple[str, bytes]]]:
    """The batches of events the pieces complete, as the adapter feeds them, then the end."""
    decoder = SSEDecoder()
    batches = [events for piece in pieces if (events := decoder.feed(piece))]
    if last := decoder.end():
        batches.append(last)
    return batches


async def test_one_read_gives_one_batch_of_events() -> None:
    batches = await _events(b'data: {"a":1}\n\ndata: {"a":2}\n\n')
    assert batches == [[("", b'{"a":1}'), ("", b'{"a":2}')]]


@pytest.mark.parametrize("end", [b"\r\n", b"\r", b"\n"])
async def test_every_line_ending(end: bytes) -> None:
    raw = b"event: message_start" + end + b'data: {"x":1}' + end + end
    assert await _events(raw) == [[("message_start", b'{"x":1}')]]


async def test_an_event_split_across_reads_and_a_crlf_split_in_half() -> None:
    batches = await _events(b'data: {"long', b'":true}\r', b"\n\r\n", b"data: [DONE]\n\n")
    assert [e for batch in batches for e in batch] == [("", b'{"long":true}'), ("", b"[DONE]")]


async def test_comments_unknown_fields_and_a_leading_space_are_ignored() -> None:
    raw = b': OPENROUTER PROCESSING\n\n id: 7\nretry: 10\n\n data: {"ignored":1}\n\ndata:{"kept":1}\n\n'
    assert await _events(raw) == [[("", b'{"kept":1}')]]


async def test_several_data_lines_are_joined_and_a_torn_last_event_is_dropped() -> None:
    assert parse_block(b'data: {"a":\ndata: 1}') == ("", b'{"a":\n1}')
    assert await _events(b'data: {"whole":1}\n\ndata: {"cut') == [[("", b'{"whole":1}')]]


def test_neighbouring_plain_deltas_are_joined_but_signed_ones_are_not() -> None:
    chunks = [
        TextChunk("a"),
        TextChunk("b"),
        ThinkingChunk("t"),
        ThinkingChunk("u"),
        ThinkingChunk(signature="s"),
    ]
    assert coalesce(chunks) == [TextChunk("ab"), ThinkingChunk("tu"), ThinkingChunk(signature="s")]
    assert coalesce([TextChunk("x", signature="g"), TextChunk("y")]) == [
        TextChunk("x", signature="g"),
        TextChunk("y"),
    ]


def test_an_event_without_data_dispatches_nothing() -> None:
    assert parse_block(b"event: ping\ndata") is None
    assert parse_block(b"data:") is None
    assert parse_block(b"event: ping") is None
