"""The token estimator against a real tokenizer, and what a request counts.

Reference counts: OpenAI's `o200k_base` encoding, as computed by `js-tiktoken` 1.0.21
(the npm port of tiktoken, which ships the o200k_base ranks in the package, so it runs
offline) with `getEncoding("o200k_base").encode(text).length` over each file in
`token_samples/` read as UTF-8. Python's `tiktoken` needs to download its encoding
files, which this machine cannot; when it is installed and its cache holds
o200k_base, `test_reference_counts_match_tiktoken` checks the committed numbers.
To regenerate:  npm install js-tiktoken@1.0.21 && node -e 'const {getEncoding} =
require("js-tiktoken"); const e = getEncoding("o200k_base"); for (const f of
process.argv.slice(1)) console.log(f, e.encode(require("fs").readFileSync(f,
"utf8")).length)' tests/context/token_samples/*
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from wyckoff_cli.context import tokens
from wyckoff_cli.context.tokens import (
    TokenEstimator,
    estimate_message,
    estimate_text,
    estimate_tool_spec,
)
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart, ToolSpec

SAMPLES = Path(__file__).parent / "token_samples"
O200K_REFERENCE = {
    "english.txt": 183,
    "code.txt": 281,
    "chinese.txt": 167,
    "mixed.txt": 106,
    "tool_schema.txt": 126,
}


def sample(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(O200K_REFERENCE))
def test_estimate_is_within_15_percent_of_o200k(name: str) -> None:
    reference = O200K_REFERENCE[name]
    estimate = estimate_text(sample(name))
    assert abs(estimate - reference) / reference <= 0.15, (name, estimate, reference)


def test_reference_counts_match_tiktoken() -> None:
    tiktoken = pytest.importorskip("tiktoken")
    try:
        encoding = tiktoken.get_encoding("o200k_base")
    except Exception as exc:  # no network and no cached encoding file
        pytest.skip(f"o200k_base is not available offline: {exc}")
    for name, count in O200K_REFERENCE.items():
        assert len(encoding.encode(sample(name))) == count, name


def test_chinese_is_not_counted_like_spaced_text() -> None:
    # A character-count heuristic (len / 4) would say ~40 tokens here; o200k says 167.
    text = sample("chinese.txt")
    assert estimate_text(text) > len(text) // 2


def test_empty_and_tiny_texts() -> None:
    assert estimate_text("") == 0
    assert estimate_text("a") == 1
    assert estimate_text("hello world") == 2


def test_a_message_counts_thinking_tool_arguments_and_results() -> None:
    plain = Message.assistant("Let me look.")
    with_thinking = Message(
        "assistant", (ThinkingPart("I should read the config file first " * 10), TextPart("Let me look."))
    )
    with_call = Message(
        "assistant",
        (TextPart("Let me look."), ToolCallPart("c1", "read_file", {"path": "src/config/settings.py"})),
    )
    result = Message.tool_result("c1", "read_file", "x = 1\n" * 200)
    assert estimate_message(with_thinking) > estimate_message(plain) + 60
    assert estimate_message(with_call) > estimate_message(plain) + 8
    assert estimate_message(result) > 600


def test_a_request_counts_system_prompt_tool_schemas_and_messages() -> None:
    estimator = TokenEstimator()
    spec = ToolSpec(
        "grep",
        "Search file contents by regular expression.",
        {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]},
    )
    history = [Message.user("Find the bug"), Message.assistant("Looking.")]
    bare = estimator.request("", [], history)
    full = estimator.request("You are a coding assistant. " * 20, [spec], history)
    assert full.messages == bare.messages
    assert full.system > 100
    assert full.tools == estimate_tool_spec(spec) > 20
    assert full.total == full.system + full.tools + full.messages


def test_message_counts_are_cached_by_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[Message] = []
    real = tokens.estimate_message

    def counting(message: Message) -> int:
        counted.append(message)
        return real(message)

    monkeypatch.setattr(tokens, "estimate_message", counting)
    estimator = TokenEstimator()
    message = Message.user("some text " * 1000)
    first = estimator.message(message)
    for _ in range(1000):
        assert estimator.message(message) == first
    assert counted == [message]  # counted once; every later call is a cache hit
    same_text = Message.user("some text " * 1000)
    assert estimator.message(same_text) == first and len(counted) == 2  # another object is counted


def test_calibration_moves_towards_the_reported_input_tokens() -> None:
    estimator = TokenEstimator()
    history = [Message.user("word " * 3000)]
    raw = estimator.request("", [], history).raw
    estimator.calibrate(raw, int(raw * 1.3))
    assert estimator.ratio == pytest.approx(1.15, abs=0.001)
    estimator.calibrate(raw, int(raw * 1.3))
    assert 1.2 < estimator.ratio < 1.3
    assert estimator.estimate_request("", [], history) > raw * 1.2


def test_calibration_ignores_small_requests_and_is_clamped() -> None:
    estimator = TokenEstimator()
    estimator.calibrate(100, 5_000)  # tiny request: the vendor's hidden framing dominates
    assert estimator.ratio == 1.0
    for _ in range(10):
        estimator.calibrate(10_000, 100_000)
    assert estimator.ratio == estimator.max_ratio


def test_a_megabyte_is_estimated_quickly() -> None:
    text = sample("code.txt") * 1000  # ~1 MB
    started = time.perf_counter()
    estimate_text(text)
    assert time.perf_counter() - started < 2.0


# --------------------------------------------------------------------------- incremental counts


def counting(monkeypatch: pytest.MonkeyPatch) -> list[Message]:
    import wyckoff_cli.context.tokens as tokens

    seen: list[Message] = []
    real = tokens.estimate_message

    def spy(message: Message) -> int:
        seen.append(message)
        return real(message)

    monkeypatch.setattr(tokens, "estimate_message", spy)
    return seen


def test_a_growing_history_is_never_recounted(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = counting(monkeypatch)
    estimator = TokenEstimator()
    history: list[Message] = []
    for n in range(20_000):  # longer than any cache size the old estimator had
        history.append(Message.user(f"message number {n}"))
        total = estimator.messages(history)
    assert len(seen) == 20_000  # each message estimated exactly once
    assert total == sum(estimate_message(m) for m in history)
    assert estimator.messages(tuple(history)) == total  # a tuple of the same messages hits too
    assert len(seen) == 20_000


def test_a_replaced_message_is_counted_from_there_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = counting(monkeypatch)
    estimator = TokenEstimator()
    history = [Message.user(f"text {n} " * n) for n in range(50)]
    estimator.messages(history)
    seen.clear()
    history[10] = Message.user("a compacted summary")  # in place, same length
    assert estimator.messages(history) == sum(estimate_message(m) for m in history)
    assert seen[0] is history[10] and history[9] not in seen[:1]
    shorter = history[:5] + [Message.user("tail")]
    assert estimator.messages(shorter) == sum(estimate_message(m) for m in shorter)


def test_equal_copies_count_the_same_and_take_over(monkeypatch: pytest.MonkeyPatch) -> None:
    estimator = TokenEstimator()
    history = [Message.user(f"text {n}") for n in range(100)]
    total = estimator.messages(history)
    copies = [Message.from_dict(m.to_dict()) for m in history]  # as read back from a chat log
    assert estimator.messages(copies) == total
    seen = counting(monkeypatch)
    copies.append(Message.user("new"))
    estimator.messages(copies)
    assert seen == [copies[-1]]


def test_the_per_message_cache_forgets_freed_messages() -> None:
    import gc

    estimator = TokenEstimator()
    message = Message.user("short-lived " * 50)
    count = estimator.message(message)
    assert len(estimator._messages) == 1 and count > 0
    del message
    gc.collect()
    assert estimator._messages == {}  # nothing left that a reused id() could hit
