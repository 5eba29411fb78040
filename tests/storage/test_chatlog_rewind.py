"""`rewind` records in chat.jsonl: the log stays append-only and resume reproduces the cut."""

from __future__ import annotations

import json
from pathlib import Path

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message
from wyckoff_cli.storage.chatlog import read_chat, read_jsonl, transcript, truncate_before
from wyckoff_cli.storage.sessions import SessionStore


def record_turn(recorder: object, *messages: Message) -> None:
    for message in messages:
        recorder.history.append(message)  # type: ignore[attr-defined]
        recorder.record(ev.MessageCommitted(message.to_dict()))  # type: ignore[attr-defined]
    recorder.record(ev.TurnDone("", "completed", 1))  # type: ignore[attr-defined]


def test_a_rewind_record_cuts_the_history_on_resume(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    recorder = store.create(tmp_path, model="scripted:x")
    first, second = Message.user("first"), Message.user("second")
    record_turn(recorder, first, Message.assistant("one"))
    record_turn(recorder, second, Message.assistant("two"))
    assert recorder.record_rewind(second.id) == 2
    assert [m.text for m in recorder.history] == ["first", "one"]
    record_turn(recorder, Message.user("second, edited"), Message.assistant("two again"))
    recorder.close()

    chat = tmp_path / "sessions"
    path = next(chat.rglob("chat.jsonl"))
    lines = path.read_text().splitlines()
    kinds = [json.loads(line)["kind"] for line in lines]
    assert kinds.count("rewind") == 1 and kinds.count("message") == 6  # nothing was deleted
    log = read_chat(path)
    assert [m.text for m in log.history] == ["first", "one", "second, edited", "two again"]
    assert log.rewinds == 1 and log.skipped == 0
    assert [m.text for m in store.load(recorder.id).history] == [m.text for m in log.history]
    items = transcript(read_jsonl(path).records)
    assert any(item.get("kind") == "rewind" and item["before"] == second.id for item in items)


def test_a_rewind_to_an_unknown_message_changes_nothing(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    recorder = store.create(tmp_path, model="scripted:x")
    record_turn(recorder, Message.user("only"))
    assert recorder.record_rewind("no-such-id") == 0
    recorder.close()
    path = next((tmp_path / "sessions").rglob("chat.jsonl"))
    assert '"kind":"rewind"' not in path.read_text()
    with path.open("a") as handle:  # a record naming a message the log never had is skipped
        handle.write(json.dumps({"kind": "rewind", "ts": "x", "before": "nope", "removed": 1}) + "\n")
        handle.write(
            json.dumps({"kind": "rewind", "ts": "x", "before": "nope", "removed": 1, "kept": 9}) + "\n"
        )
    log = read_chat(path)
    assert [m.text for m in log.history] == ["only"] and log.skipped == 2


def test_a_log_without_message_ids_is_cut_by_the_kept_count(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "sessions")
    recorder = store.create(tmp_path, model="scripted:x")
    record_turn(recorder, Message.user("a"), Message.assistant("b"), Message.user("c"))
    recorder.close()
    path = next((tmp_path / "sessions").rglob("chat.jsonl"))
    old_style = [json.loads(line) for line in path.read_text().splitlines()]
    for line in old_style:
        line.get("message", {}).pop("id", None)  # as written before messages had ids
    path.write_text("".join(json.dumps(line) + "\n" for line in old_style))
    loaded = store.load(recorder.id)
    again = store.reopen(loaded)
    assert again.record_rewind(again.history[1].id) == 2  # this read's fresh id
    again.close()
    assert [m.text for m in read_chat(path).history] == ["a"]  # the ids differ now; `kept` holds


def test_truncate_before() -> None:
    messages = [Message.user("a"), Message.assistant("b"), Message.user("c")]
    history = list(messages)
    assert truncate_before(history, messages[1].id) == 2 and history == messages[:1]
    assert truncate_before(history, "missing") == 0 and history == messages[:1]
