"""Compaction: threshold, tail selection, tool-pair integrity, archive, fallback."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.runtime.support import assert_history_valid
from wyckoff_cli.context.compaction import (
    compaction_threshold,
    cut_words,
    drop_oldest_exchanges,
    parse_memory_items,
    render_transcript,
    select_tail,
    shrink_stale_tool_results,
    split_units,
)
from wyckoff_cli.context.manager import ContextManager
from wyckoff_cli.context.memory import MemoryStore
from wyckoff_cli.context.tokens import estimate_message
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.providers.scripted import ScriptedProvider

SUMMARY = "## Goals\nFix the parser.\n\n## Open\nRun the tests."


def count(messages: Sequence[Message]) -> int:
    return sum(estimate_message(m) for m in messages)


def call(call_id: str, name: str = "read_file", **args: Any) -> ToolCallPart:
    return ToolCallPart(call_id, name, args or {"path": f"{call_id}.py"})


def tool_round(call_id: str, result: str = "content " * 50) -> list[Message]:
    return [
        Message("assistant", (TextPart("Reading."), call(call_id))),
        Message.tool_result(call_id, "read_file", result),
    ]


def exchange(n: int, rounds: int = 2, size: int = 50) -> list[Message]:
    messages = [Message.user(f"request number {n}: please fix parser bug {n}")]
    for r in range(rounds):
        messages += tool_round(f"c{n}_{r}", f"line {n} {r} " * size)
    messages.append(Message.assistant(f"Fixed bug {n}."))
    return messages


def long_history(exchanges: int = 6) -> list[Message]:
    history: list[Message] = []
    for n in range(exchanges):
        history += exchange(n)
    return history


class Archive:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.calls: list[tuple[list[Message], list[Message]]] = []

    def __call__(self, before: Sequence[Message], after: Sequence[Message]) -> Path:
        self.calls.append((list(before), list(after)))
        kept = {id(m) for m in after}
        path = self.folder / f"archive-{len(self.calls)}.jsonl"
        path.write_text(
            "".join(json.dumps(m.to_dict()) + "\n" for m in before if id(m) not in kept), encoding="utf-8"
        )
        return path


def manager_for(history: list[Message], *, over_by: int, **kwargs: Any) -> ContextManager:
    """A manager whose threshold sits `over_by` tokens below the history's estimate."""
    probe = ContextManager(context_window=1_000_000)
    estimate = probe.estimator.estimate_request("", [], history)
    threshold = estimate - over_by
    return ContextManager(context_window=threshold + 10_000, reserve_tokens=10_000, **kwargs)


# ------------------------------------------------------------------- threshold


async def before_model_call(manager: ContextManager, history: list[Message], *args: Any) -> Any:
    """What the runtime does before a model call: ask for a compaction, apply it."""
    compaction = await manager.maybe_compact(history, *args)
    if compaction is None:
        return None
    history[:] = compaction.messages
    return compaction.event


def test_threshold_leaves_room_for_the_answer_and_15_percent() -> None:
    assert compaction_threshold(200_000, 64_000) == 136_000
    assert compaction_threshold(100_000, 4_000) == 85_000  # at least 15% free
    assert compaction_threshold(128_000, 128_000) == 64_000  # max output capped at half
    assert compaction_threshold(200_000, 64_000, reserve_tokens=10_000) == 190_000
    assert compaction_threshold(64_000, None) == 54_400


async def test_no_compaction_at_the_threshold_and_compaction_just_above(tmp_path: Path) -> None:
    history = long_history()
    at = manager_for(history, over_by=0)
    provider = ScriptedProvider([{"text": SUMMARY}])
    assert await before_model_call(at, history, "", [], provider) is None
    assert provider.requests == []

    above = manager_for(history, over_by=1)
    before = list(history)
    event = await before_model_call(above, history, "", [], provider)
    assert event is not None and event.method == "summary"
    assert (event.before_messages, event.after_messages) == (len(before), len(history))
    assert event.after_tokens < event.before_tokens
    assert len(provider.requests) == 1
    assert history[0].meta["synthetic"] == "compaction"
    assert SUMMARY in history[0].text
    assert_history_valid(history)


# ------------------------------------------------------------------------ tail


def test_units_keep_tool_calls_with_their_results() -> None:
    history = exchange(0, rounds=2)
    assert split_units(history) == [(0, 1), (1, 3), (3, 5), (5, 6)]


def test_tail_takes_whole_units_within_the_budget() -> None:
    history = long_history(3)
    units = split_units(history)
    starts = {start for start, _ in units}
    for budget in (1, 50, 200, 500, 1_000, 5_000, 100_000):
        start = select_tail(history, budget, count)
        assert start in starts
        assert history[start].role != "tool"
        tail = history[start:]
        if start < units[-1][0]:
            assert count(tail) <= budget
    assert select_tail(history, 1, count) == units[-1][0]  # always at least the last unit
    assert select_tail(history, 10**9, count) == 0


async def test_latest_request_is_kept_word_for_word_when_older_than_the_tail(tmp_path: Path) -> None:
    request = Message.user("Refactor the tokenizer, keep the public API exactly as it is!")
    history = [*long_history(3), request]
    for r in range(8):
        history += tool_round(f"t{r}", "x " * 400)
    manager = manager_for(history, over_by=1, tail_fraction=0.05)
    provider = ScriptedProvider([{"text": SUMMARY}])
    await before_model_call(manager, history, "", [], provider)
    assert history[0].meta["synthetic"] == "compaction"
    assert history[1] is request
    assert history[2].role == "assistant"
    assert_history_valid(history)
    transcript = provider.requests[0].messages[0].text
    assert "Refactor the tokenizer" in transcript  # the summary also covers the request


async def test_tool_pairs_survive_any_compaction(tmp_path: Path) -> None:
    for tail_fraction in (0.01, 0.05, 0.1, 0.3, 0.6):
        history = long_history(5)
        manager = manager_for(history, over_by=1, tail_fraction=tail_fraction)
        await before_model_call(manager, history, "", [], ScriptedProvider([{"text": SUMMARY}]))
        assert_history_valid(history)
        assert history[0].role == "user"


# --------------------------------------------------------------------- archive


async def test_replaced_messages_are_archived_and_the_event_says_where(tmp_path: Path) -> None:
    history = long_history()
    original = list(history)
    archive = Archive(tmp_path)
    manager = manager_for(history, over_by=1, archive=archive)
    event = await before_model_call(manager, history, "", [], ScriptedProvider([{"text": SUMMARY}]))
    assert event is not None and event.archive_path == str(tmp_path / "archive-1.jsonl")
    ((before, after),) = archive.calls
    assert before == original and after == history
    archived = [json.loads(line) for line in Path(event.archive_path).read_text().splitlines()]
    kept = {id(m) for m in history}
    assert archived == [m.to_dict() for m in original if id(m) not in kept]
    assert len(archived) == history[0].meta["replaced_messages"]
    assert "archived in the session's folder" in history[0].text


async def test_an_archive_failure_does_not_stop_compaction(tmp_path: Path) -> None:
    def broken(before: Sequence[Message], after: Sequence[Message]) -> Path:
        raise OSError("disk full")

    history = long_history()
    manager = manager_for(history, over_by=1, archive=broken)
    event = await before_model_call(manager, history, "", [], ScriptedProvider([{"text": SUMMARY}]))
    assert event is not None and event.method == "summary" and event.archive_path is None


# -------------------------------------------------------------------- fallback


@pytest.mark.parametrize("round_", [{"error": {"kind": "server", "message": "boom"}}, {"text": "  "}])
async def test_a_failed_summary_drops_the_oldest_exchanges(tmp_path: Path, round_: dict[str, Any]) -> None:
    history = long_history(6)
    original = list(history)
    archive = Archive(tmp_path)
    manager = manager_for(history, over_by=1, archive=archive)
    event = await before_model_call(manager, history, "", [], ScriptedProvider([round_]))
    assert event is not None and event.method == "drop_oldest"
    assert history[0].role == "user" and "synthetic" not in history[0].meta
    assert history == original[len(original) - len(history) :]  # a suffix, untouched
    assert history[0].text.startswith("request number")
    assert_history_valid(history)
    assert event.after_tokens < event.before_tokens
    assert event.archive_path is not None


def test_drop_oldest_keeps_the_exchange_of_the_latest_request() -> None:
    history = long_history(2) + [Message.user("the latest request")]
    for r in range(6):
        history += tool_round(f"z{r}", "y " * 1500)
    history.append(Message.user("retry: call the tools", synthetic="loop_guard"))
    result = drop_oldest_exchanges(history, target_tokens=10, count=count)
    assert result is not None
    assert result.messages[0].text == "the latest request"
    # still too long: its older tool results were shrunk, the newest two kept whole
    shrunk = [m for m in result.messages if m.role == "tool" and "characters omitted" in m.text]
    assert len(shrunk) == 4
    assert_history_valid(result.messages)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.tuples(st.booleans(), st.integers(0, 3), st.integers(1, 300)), min_size=1, max_size=12),
    budget=st.integers(1, 3_000),
)
def test_tail_and_drop_never_split_pairs_or_start_badly(
    shape: list[tuple[bool, int, int]], budget: int
) -> None:
    history: list[Message] = []
    for index, (synthetic, rounds, size) in enumerate(shape):
        meta = {"synthetic": "loop_guard"} if synthetic else {}
        history.append(Message.user(f"request {index}", **meta))
        for r in range(rounds):
            history += tool_round(f"c{index}_{r}", "w " * size)
        history.append(Message.assistant("ok"))
    start = select_tail(history, budget, count)
    assert_history_valid(history[start:])
    dropped = drop_oldest_exchanges(history, budget, count)
    if dropped is not None:
        assert dropped.messages[0].role == "user"
        assert_history_valid(dropped.messages)


# ------------------------------------------------------------ shrink and flush


def test_stale_tool_results_are_shrunk_in_a_copy() -> None:
    offloaded = (
        "head " * 1000 + "[The full result (9000 characters, 1 lines) was saved to /tmp/r/read_file-c1.txt. "
        "Read it in pages with read_file(path='/tmp/r/read_file-c1.txt', offset=LINE, limit=N) "
        "instead of asking for it again.]"
    )
    history = [
        Message("assistant", (call("c1"), call("c2"), call("c3"))),
        Message.tool_result("c1", "read_file", offloaded),
        Message.tool_result("c2", "read_file", "short"),
        Message.tool_result("c3", "read_file", "tail " * 1000),
    ]
    copy = shrink_stale_tool_results(history, keep_recent=1, max_chars=600)
    assert history[1].text == offloaded  # the input is untouched
    assert copy[2] is history[2] and copy[3] is history[3]
    assert len(copy[1].text) < 800
    assert "characters omitted" in copy[1].text
    assert "[Full result: /tmp/r/read_file-c1.txt]" in copy[1].text
    assert copy[1].tool_call_id == "c1"


def test_transcript_leaves_out_reasoning_and_the_oldest_messages_over_budget() -> None:
    history = [
        Message("assistant", (ThinkingPart("secret reasoning"), TextPart("visible"))),
        *long_history(4),
    ]
    text = render_transcript(history)
    assert "visible" in text and "secret reasoning" not in text
    assert (
        "[user]\nrequest number 0" in text and "→ read_file(" in text and "[tool result: read_file]" in text
    )
    short = render_transcript(history, max_tokens=400)
    assert "older messages left out" in short and "Fixed bug 3." in short


async def test_memory_flush_saves_durable_facts_once(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    store.add("The user prefers pytest over unittest", kind="preference", scope="user")
    flush_answer = json.dumps(
        [
            {"text": "User prefers pytest over unittest.", "kind": "preference", "scope": "user"},
            {
                "text": "Integration tests need `docker compose up db` first",
                "kind": "fact",
                "scope": "project",
            },
        ]
    )
    history = long_history()
    manager = manager_for(history, over_by=1, memory=store, project_root=tmp_path, session_id="s1")
    provider = ScriptedProvider([{"text": SUMMARY}, {"text": f"```json\n{flush_answer}\n```"}])
    event = await before_model_call(manager, history, "", [], provider)
    assert event is not None and event.method == "summary"
    assert len(provider.requests) == 2
    assert "durable memories" in provider.requests[1].system_prompt
    memories = store.list_memories(project=tmp_path)
    assert sorted(m.text for m in memories) == [
        "Integration tests need `docker compose up db` first",
        "The user prefers pytest over unittest",
    ]
    assert [m.source_session for m in memories if m.scope == "project"] == ["s1"]
    assert manager.last_compaction is not None
    assert [r.created for r in manager.last_compaction.memories] == [False, True]
    assert manager.last_compaction.usage.input_tokens == 200  # both calls, 100 each (scripted default)


async def test_a_failing_memory_flush_does_not_stop_compaction(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    history = long_history()
    manager = manager_for(history, over_by=1, memory=store, project_root=tmp_path)
    provider = ScriptedProvider([{"text": SUMMARY}, {"error": {"kind": "rate_limited"}}])
    event = await before_model_call(manager, history, "", [], provider)
    assert event is not None and event.method == "summary"
    assert store.list_memories(project=tmp_path) == []


def test_memory_items_are_parsed_leniently() -> None:
    items = parse_memory_items(
        'Here you go:\n[{"text": "a fact"}, {"text": "", "kind": "fact"}, 3, '
        '{"text": "pref", "kind": "preference", "scope": "user"}]'
    )
    assert [(i.text, i.kind, i.scope) for i in items] == [
        ("a fact", "fact", "project"),
        ("pref", "preference", "user"),
    ]
    assert parse_memory_items("nothing durable") == []
    assert parse_memory_items("[not json]") == []


def test_long_summaries_are_cut() -> None:
    text = "word " * 900
    cut = cut_words(text, 700)
    assert len(cut.split()) == 701 and cut.endswith("[…]")
    assert cut_words("short text", 700) == "short text"
