"""`CoalescingOut`: every byte written, one flush per pass of the event loop, errors kept."""

from __future__ import annotations

import asyncio
import io
import json

import pytest

from wyckoff_cli.cli.stream_out import CoalescingOut, line_encoder


class CountingOut(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0
        self.fail: OSError | None = None

    def flush(self) -> None:
        if self.fail is not None:
            raise self.fail
        self.flushes += 1


def test_without_a_loop_each_write_is_flushed_at_once() -> None:
    out = CountingOut()
    stream = CoalescingOut(out)
    stream.write("a\n")
    stream.write("b\n")
    assert out.getvalue() == "a\nb\n" and out.flushes == 2


def test_writes_of_one_loop_pass_share_one_flush_that_comes_on_the_next_pass() -> None:
    out = CountingOut()
    stream = CoalescingOut(out)
    seen: list[tuple[str, int]] = []

    async def scenario() -> None:
        for line in ("1\n", "2\n", "3\n"):
            stream.write(line)
        assert out.flushes == 0  # still in the same pass
        await asyncio.sleep(0)  # the turn waits for something: the loop flushes
        seen.append((out.getvalue(), out.flushes))
        stream.write("4\n")
        await asyncio.sleep(0)
        seen.append((out.getvalue(), out.flushes))

    asyncio.run(scenario())
    assert seen == [("1\n2\n3\n", 1), ("1\n2\n3\n4\n", 2)]


def test_a_failed_flush_on_the_loop_is_raised_by_the_next_write() -> None:
    out = CountingOut()
    stream = CoalescingOut(out)

    async def scenario() -> None:
        stream.write("x\n")
        out.fail = BrokenPipeError(32, "Broken pipe")
        await asyncio.sleep(0)
        with pytest.raises(BrokenPipeError):
            stream.write("y\n")
        out.fail = None
        stream.write("z\n")  # raised once, then writing goes on

    asyncio.run(scenario())
    assert out.getvalue() == "x\nz\n"


def test_a_failed_flush_is_raised_by_the_final_flush() -> None:
    out = CountingOut()
    stream = CoalescingOut(out)

    async def scenario() -> None:
        stream.write("x\n")
        out.fail = BrokenPipeError(32, "Broken pipe")
        await asyncio.sleep(0)

    asyncio.run(scenario())
    out.fail = None
    with pytest.raises(BrokenPipeError):
        stream.flush()


@pytest.mark.parametrize(
    "value",
    [{"type": "text_delta", "text": 'héllo \u2603 "q" \\ \n'}, {"n": 1.5, "l": [None, True]}, "\ud83d\ude00"],
)
def test_the_line_encoder_writes_what_json_dumps_writes(value: object) -> None:
    assert line_encoder(value) == json.dumps(value, ensure_ascii=False)
