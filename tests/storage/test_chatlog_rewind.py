"""`rewind` records in chat.jsonl: the log stays append-only and resume reproduces the cut."""

from __future__ import annotations

import json
from pathlib import Path

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message
from wyckoff_cli.storage.chatlog import read_chat, read_jsonl, transcript
from wyckoff_cli.storage.recorder import SessionRecorder
from wyckoff_cli.storage.sessions import SessionStore


def record_turn(recorder: SessionRecorder, *messages: Message) -> None:
    for message in messages:
        recorder.conversation.append(message)
    recorder.record(ev.TurnDone("", "completed", 1))


def chat_file(root: Path) -> Path:
    return next((root / "sessions").rglob("chat.jsonl"))


def test_a_rewind_record_cuts_the_history_on_resume(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    recorder = store.create(tmp_path, model="scripted:x")
    first, second = Message.user("first"), Message.user("second")
    record_turn(recorder, first, Message.assistant("one"))
    record_turn(recorder, second, Message.assistant("two"))
    assert len(recorder.conversation.truncate_to(second.id)) == 2
    record_turn(recorder, Message.user("second, edited"), Message.assistant("two again"))
    recorder.close()

    path = chat_file(tmp_path)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    rewinds = [r for r in records if r["kind"] == "rewind"]
    assert rewinds == [{"kind": "rewind", "ts": rewinds[0]["ts"], "to": second.id, "removed": 2, "kept": 2}]
    assert [r["kind"] for r in records].count("message") == 6  # nothing was deleted
    log = read_chat(path)
    assert [m.text for m in log.history] == ["first", "one", "second, edited", "two again"]
    assert log.skipped == 0
    assert [m.text for m in store.load(recorder.id).history] == [m.text for m in log.history]
    assert any(item.get("kind") == "rewind" for item in transcript(read_jsonl(path).records))


def test_a_rewind_naming_an_unknown_message_is_skipped_and_counted(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    recorder = store.create(tmp_path, model="scripted:x")
    record_turn(recorder, Message.user("only"))
    recorder.close()
    path = chat_file(tmp_path)
    with path.open("a") as handle:
        handle.write(json.dumps({"kind": "rewind", "ts": "x", "to": "nope", "removed": 1}) + "\n")
        handle.write(json.dumps({"kind": "rewind", "ts": "x", "to": "nope", "removed": 1, "kept": 9}) + "\n")
    log = read_chat(path)
    assert [m.text for m in log.history] == ["only"] and log.skipped == 2


def test_a_log_without_message_ids_is_cut_by_the_kept_count(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    recorder = store.create(tmp_path, model="scripted:x")
    record_turn(recorder, Message.user("a"), Message.assistant("b"), Message.user("c"))
    recorder.close()
    path = chat_file(tmp_path)
    old_style = [json.loads(line) for line in path.read_text().splitlines()]
    for line in old_style:
        line.get("message", {}).pop("id", None)  # as written before messages had ids
    path.write_text("".join(json.dumps(line) + "\n" for line in old_style))
    again = store.reopen(store.load(recorder.id))
    again.conversation.truncate_to(again.conversation[1].id)  # this read's fresh id
    again.close()
    assert [m.text for m in read_chat(path).history] == ["a"]  # the ids differ now; `kept` holds
