"""Sessions on disk: a scripted multi-turn session recorded, loaded back and resumed."""

from __future__ import annotations

import json
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message, ToolCallPart
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.storage.chatlog import SessionFormatError, read_chat
from wyckoff_cli.storage.redact import Redactor
from wyckoff_cli.storage.sessions import (
    SessionNotFound,
    SessionStore,
    answer_dangling_calls,
    project_key,
)

from .sessions_support import (
    BIG_RESULT,
    SummarizingContext,
    make_runtime,
    messages_equal,
    read_lines,
    run_turn,
)

SIGNATURE = "EqQBCkgIARABGAIiQNn3+/sig=="
ROUNDS = [
    # turn 1: thinking with a signature, text, three tool calls (one offloaded, one approved)
    {
        "thinking": "I should echo and read the big file.",
        "signature": SIGNATURE,
        "text": "Let me look.",
        "tool_calls": [
            {"id": "t1", "name": "echo", "args": {"x": 1}},
            {"id": "t2", "name": "big", "args": {}},
            {"id": "t3", "name": "shell", "args": {"command": "pytest"}},
        ],
        "chunk_size": 5,
        "usage": {"input_tokens": 1000, "output_tokens": 50, "cache_read_tokens": 800},
    },
    {"text": "All three done.", "usage": {"input_tokens": 1200, "output_tokens": 20}},
    # turn 2: compaction before the first call, then an unparseable tool call
    [
        {"raw_tool_call": {"id": "t4", "name": "echo", "arguments": "{not json"}},
        {"usage": {"output_tokens": 5}},
    ],
    {"thinking": "The arguments were bad.", "signature": "sig-two", "text": "Fixed it."},
]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions", redactor=Redactor())


async def record_session(store: SessionStore, workspace: Path):  # type: ignore[no-untyped-def]
    recorder = store.create(workspace, model="scripted:test")
    context = SummarizingContext()
    context.recorder = recorder
    runtime, provider = make_runtime(ROUNDS, recorder, workspace, context)
    await run_turn(runtime, recorder, "Echo x and read the big file.")
    context.armed = True
    await run_turn(runtime, recorder, "Now echo with broken arguments.")
    recorder.close()
    return recorder, provider


async def test_load_rebuilds_the_exact_history(store: SessionStore, workspace: Path) -> None:
    recorder, provider = await record_session(store, workspace)
    loaded = store.load(recorder.id)
    assert messages_equal(loaded.history, recorder.conversation.messages)
    assert not loaded.torn and not loaded.interrupted and loaded.skipped == 0
    # what the provider was sent last is the loaded history minus the final answer
    assert messages_equal(provider.requests[-1].messages, loaded.history[:-1])
    # the compaction summary replaced the first turn
    assert loaded.history[0].meta == {"synthetic": "compaction"}
    signed = [p for m in loaded.history for p in m.thinking]
    assert [p.signature for p in signed] == ["sig-two"]
    bad_call = next(m for m in loaded.history if m.tool_calls).tool_calls[0]
    assert bad_call.raw_arguments == "{not json" and bad_call.arguments == {}


async def test_compaction_archives_the_replaced_messages(store: SessionStore, workspace: Path) -> None:
    recorder, _ = await record_session(store, workspace)
    archives = sorted((recorder.directory / "archive").glob("*.jsonl"))
    assert len(archives) == 1
    lines = read_lines(archives[0])
    assert lines[0]["format"] == "wyckoff.archive" and lines[0]["messages"] == 6
    archived = [Message.from_dict(line["message"]) for line in lines[1:]]
    assert archived[0].text == "Echo x and read the big file."
    # the first turn's signed thinking survives in the archive
    assert archived[1].thinking[0].signature == SIGNATURE
    assert [c.id for c in archived[1].tool_calls] == ["t1", "t2", "t3"]
    compaction = next(r for r in read_lines(recorder.directory / "chat.jsonl") if r["kind"] == "compaction")
    assert compaction["archive"] == archives[0].relative_to(recorder.directory).as_posix()
    assert compaction["replaced"] == 6


async def test_offloaded_results_live_in_the_session_and_stay_valid(
    store: SessionStore, workspace: Path
) -> None:
    recorder, _ = await record_session(store, workspace)
    archive = sorted((recorder.directory / "archive").glob("*.jsonl"))[0]
    big = next(
        Message.from_dict(r["message"])
        for r in read_lines(archive)[1:]
        if r["message"].get("tool_call_id") == "t2"
    )
    path = recorder.results_dir / "big-t2.txt"
    assert str(path) in big.text
    assert path.read_text(encoding="utf-8") == BIG_RESULT
    assert store.load(recorder.id).results_dir == path.parent


async def test_scratchpad_folds_deltas_and_keeps_timings(store: SessionStore, workspace: Path) -> None:
    recorder, _ = await record_session(store, workspace)
    records = read_lines(recorder.directory / "scratchpad.jsonl")
    assert records[0]["format"] == "wyckoff.scratchpad" and records[0]["version"] == 1
    types = [r["type"] for r in records[1:]]
    assert "text_delta" not in types and "thinking_delta" not in types and "tool_output" not in types
    text_blocks = [r for r in records if r.get("type") == "text_block"]
    assert text_blocks[0]["text"] == "Let me look." and text_blocks[0]["chunks"] == 3
    thinking = next(r for r in records if r.get("type") == "thinking_block")
    assert thinking["text"] == "I should echo and read the big file." and "after_model_start_ms" in thinking
    output = next(r for r in records if r.get("type") == "tool_output_block")
    assert output["id"] == "t3" and output["text"] == "collecting 3 items\n3 passed\n"
    assert types.index("tool_output_block") < types.index("tool_result", types.index("approval_result"))
    approval = next(r for r in records if r.get("type") == "approval_result")
    assert approval["decision"] == "allow" and approval["wait_ms"] >= 0
    usage = [r for r in records if r.get("type") == "usage"]
    assert len(usage) == 4 and usage[0]["cache_read_tokens"] == 800 and usage[0]["call_ms"] >= 0
    assert [r["type"] for r in records if r.get("type") in ("turn_start", "done")] == [
        "turn_start",
        "done",
        "turn_start",
        "done",
    ]
    assert all(r["turn_ms"] >= 0 for r in records if r.get("type") == "done")
    assert any(r.get("type") == "compaction" and r["archive_path"] for r in records)
    message = next(r for r in records if r.get("type") == "message")
    chat = (recorder.directory / "chat.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(chat[message["chat_line"] - 1])["message"]["role"] == message["role"] == "user"


async def test_summary_counts_turns_and_tokens(store: SessionStore, workspace: Path) -> None:
    recorder, _ = await record_session(store, workspace)
    (info,) = store.list(workspace)
    assert info.id == recorder.id and info.turns == 2 and info.compactions == 1
    assert info.title == "Echo x and read the big file."
    assert info.usage.input_tokens == 1000 + 1200 + 100 and info.usage.cache_read_tokens == 800
    assert info.usage_by_model["scripted:test"] == info.usage
    assert info.last_reason == "completed"
    # the rebuild from the logs (used when session.json is stale or missing) agrees
    (recorder.directory / "session.json").unlink()
    (rebuilt,) = store.list(workspace)
    assert (rebuilt.turns, rebuilt.messages, rebuilt.usage, rebuilt.compactions, rebuilt.title) == (
        info.turns,
        info.messages,
        info.usage,
        info.compactions,
        info.title,
    )


async def test_resume_appends_to_the_same_session(store: SessionStore, workspace: Path) -> None:
    recorder, _ = await record_session(store, workspace)
    loaded = store.load(recorder.id[:12])
    resumed = store.reopen(loaded)
    runtime, provider = make_runtime([{"text": "Still here."}], resumed, workspace)
    await run_turn(runtime, resumed, "Are you there?")
    resumed.close()
    again = store.load(recorder.id)
    assert messages_equal(
        again.history, [*loaded.history, *resumed.conversation.messages[len(loaded.history) :]]
    )
    assert again.history[-1].text == "Still here."
    assert messages_equal(provider.requests[0].messages, again.history[:-1])
    assert store.list(workspace)[0].turns == 3


def test_files_are_private(store: SessionStore, workspace: Path) -> None:
    recorder = store.create(workspace, model="m")
    old, new = [Message.user("old")], [Message.user("new")]
    recorder.conversation.append(old[0])
    recorder.conversation.replace_all(new, archive_path=str(recorder.archive_replaced(old, new)))
    recorder.close()
    for path in [store.root, recorder.directory.parent, *recorder.directory.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


def test_ids_sort_by_time_and_prefixes_resolve(tmp_path: Path, workspace: Path) -> None:
    times = iter(datetime(2026, 11, 30, 12, 0, s, tzinfo=UTC) for s in range(3))
    store = SessionStore(tmp_path / "s", redactor=Redactor(), clock=lambda: next(times))
    ids = [store.create(workspace, model="m").id for _ in range(3)]
    assert ids == sorted(ids) and ids[0].startswith("20261130-120000-")
    assert [info.id for info in store.list(workspace)] == ids[::-1]
    assert store.find(ids[1][:17]).id == ids[1]
    with pytest.raises(SessionNotFound, match="matches 3 sessions"):
        store.find("20261130")
    with pytest.raises(SessionNotFound, match="no session matches"):
        store.find("19990101")
    with pytest.raises(SessionNotFound):
        store.find("../../etc")


def test_projects_are_kept_apart(store: SessionStore, tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "app", tmp_path / "b" / "app"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    assert project_key(a) != project_key(b) and project_key(a).startswith("app-")
    first = store.create(a, model="m")
    second = store.create(b, model="m")
    assert [i.id for i in store.list(a)] == [first.id]
    assert {i.id for i in store.list()} == {first.id, second.id}
    assert store.latest(b) is not None and store.latest(b).id == second.id  # type: ignore[union-attr]


def test_delete_and_prune(tmp_path: Path, workspace: Path) -> None:
    now = [datetime(2026, 1, 1, tzinfo=UTC)]
    store = SessionStore(tmp_path / "s", redactor=Redactor(), clock=lambda: now[0])
    old = store.create(workspace, model="m")
    old.info.updated = "2026-01-01T00:00:00.000+00:00"
    old.info.save()
    now[0] += timedelta(days=40)
    recent = store.create(workspace, model="m")
    assert [i.id for i in store.prune(timedelta(days=30), dry_run=True)] == [old.id]
    assert old.directory.exists()
    assert [i.id for i in store.prune(timedelta(days=30))] == [old.id]
    assert not old.directory.exists()
    assert store.delete(recent.id).id == recent.id
    assert store.list() == [] and not store.project_dir(workspace).exists()


def test_answer_dangling_calls() -> None:
    call = lambda i: ToolCallPart(i, "echo", {})  # noqa: E731
    history = [
        Message.user("go"),
        Message("assistant", (call("a"), call("b"))),
        Message.tool_result("a", "echo", "ok"),
    ]
    (answer,) = answer_dangling_calls(history)
    assert answer.tool_call_id == "b" and answer.is_error and answer.meta == {"interrupted": True}
    assert answer_dangling_calls(history[:1]) == []
    assert answer_dangling_calls([*history, answer]) == []


def test_a_newer_format_is_refused(store: SessionStore, workspace: Path) -> None:
    recorder = store.create(workspace, model="m")
    recorder.close()
    chat = recorder.directory / "chat.jsonl"
    header = json.loads(chat.read_text().splitlines()[0])
    chat.write_text(json.dumps({**header, "version": 99}) + "\n")
    with pytest.raises(SessionFormatError, match="newer"):
        read_chat(chat)


def test_write_errors_never_break_the_turn(
    store: SessionStore, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = store.create(workspace, model="m")

    def disk_full(record: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(recorder.chat, "append", disk_full)
    recorder.record(ev.MessageCommitted(Message.user("hi").to_dict()))
    recorder.record(ev.TurnDone("", "completed", 1))
    assert isinstance(recorder.write_error, OSError) and recorder.write_error.errno == 28
    recorder.close()


def test_each_call_is_priced_as_it_is_recorded(tmp_path: Path, workspace: Path) -> None:
    def price(model: str, usage: Usage) -> float | None:
        return None if model == "local:llama" else usage.input_tokens * 1e-6 + usage.output_tokens * 5e-6

    store = SessionStore(tmp_path / "s", redactor=Redactor(), call_cost=price)
    recorder = store.create(workspace, model="m")
    recorder.record(ev.UsageReported("paid:model", 1_000_000, 100_000))
    recorder.record(ev.UsageReported("paid:model", 2_000_000, 0))
    recorder.record(ev.UsageReported("local:llama", 5_000, 50))
    recorder.record(ev.TurnDone("", "completed", 3))
    recorder.close()
    (info,) = store.list(workspace)
    assert info.cost_usd == pytest.approx(3.5) and info.uncosted_calls == 1
    usage = [r for r in read_lines(recorder.directory / "scratchpad.jsonl") if r.get("type") == "usage"]
    assert [r.get("cost_usd") for r in usage] == [pytest.approx(1.5), pytest.approx(2.0), None]
    (recorder.directory / "session.json").unlink()
    (rebuilt,) = store.list(workspace)
    assert rebuilt.cost_usd == pytest.approx(3.5) and rebuilt.uncosted_calls == 1


def test_the_last_context_and_each_agents_usage_are_kept_for_resume(tmp_path: Path, workspace: Path) -> None:
    """What the status bar needs after a resume: the context the last main-agent call
    left (a sub-agent's later call does not count) and each sub-agent's usage by model."""
    store = SessionStore(tmp_path / "s", redactor=Redactor())
    recorder = store.create(workspace, model="m")
    recorder.record(ev.UsageReported("a:main", 40_000, 2_000))
    recorder.record(ev.UsageReported("a:main", 50_000, 1_000))
    child = ev.UsageReported("b:small", 9_000, 300)
    recorder.record(ev.SubagentEvent("agent-1", "explore", "call_7", child))
    recorder.record(ev.SubagentEvent("agent-1", "explore", "call_7", child))
    recorder.record(ev.TurnDone("", "completed", 1))
    recorder.close()
    (info,) = store.list(workspace)
    assert info.context_tokens == 51_000
    assert info.agent_usage == {"explore": {"b:small": Usage(18_000, 600)}}
    assert info.usage_by_model["b:small"] == Usage(18_000, 600)  # the session's totals hold it too
    (recorder.directory / "session.json").unlink()  # the rebuild from the logs agrees
    (rebuilt,) = store.list(workspace)
    assert (rebuilt.context_tokens, rebuilt.agent_usage, rebuilt.usage) == (
        info.context_tokens,
        info.agent_usage,
        info.usage,
    )


def test_a_pricing_error_or_a_late_event_does_not_break_the_turn(tmp_path: Path, workspace: Path) -> None:
    def broken(model: str, usage: Usage) -> float | None:
        raise ValueError("bad catalogue")

    store = SessionStore(tmp_path / "s", redactor=Redactor(), call_cost=broken)
    recorder = store.create(workspace, model="m")
    recorder.record(ev.UsageReported("paid:model", 10, 1))
    recorder.close()
    recorder.record(ev.TextDelta("late"))  # ignored
    assert store.list(workspace)[0].uncosted_calls == 1
