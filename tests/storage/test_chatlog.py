"""chat.jsonl: torn last lines, damaged lines, repair before appending."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.storage.chatlog import JsonlFile, read_chat, read_jsonl, repair_tail
from wyckoff_cli.storage.recorder import SessionRecorder
from wyckoff_cli.storage.redact import Redactor
from wyckoff_cli.storage.sessions import SessionStore

MESSAGES = [
    Message.user("Fix the bug in a.py\u2028(line separator inside)"),
    Message(
        "assistant",
        (
            ThinkingPart("Look first.", signature="c2lnbmF0dXJl", provider="anthropic"),
            TextPart("Reading it."),
            ToolCallPart("toolu_01", "read_file", {"path": "a.py"}, extra={"thought_signature": "Zm9v"}),
        ),
        meta={"model": "anthropic:claude"},
    ),
    Message.tool_result("toolu_01", "read_file", "def f():\n    return 1\n"),
    Message.assistant("Done: f returns 1 — “quoted” 日本語."),
]


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "sessions", redactor=Redactor())


def record_messages(recorder: SessionRecorder, messages: list[Message], *, end_turn: bool = True) -> None:
    for message in messages:
        recorder.conversation.append(message)
        recorder.record(ev.MessageCommitted(message.to_dict()))
    if end_turn:
        recorder.record(ev.TurnDone(messages[-1].text, "completed", 1))


def test_every_cut_of_the_file_loads_a_prefix_of_the_history(
    store: SessionStore, workspace: Path, tmp_path: Path
) -> None:
    recorder = store.create(workspace, model="m")
    record_messages(recorder, MESSAGES)
    recorder.close()
    data = (recorder.directory / "chat.jsonl").read_bytes()
    header_end = data.index(b"\n") + 1
    copy = tmp_path / "cut.jsonl"
    seen_torn = 0
    for cut in range(header_end, len(data) + 1):
        copy.write_bytes(data[:cut])
        log = read_chat(copy)
        assert log.history == MESSAGES[: len(log.history)], cut
        assert log.skipped == 0
        # a cut just before a newline leaves a whole record: kept, not torn
        whole = data[:cut].endswith(b"\n") or data[cut : cut + 1] == b"\n"
        assert log.torn == (not whole), cut
        seen_torn += log.torn
    assert seen_torn > len(data) // 2


def test_a_torn_tail_is_reported_and_cut_before_appending(store: SessionStore, workspace: Path) -> None:
    recorder = store.create(workspace, model="m")
    record_messages(recorder, MESSAGES[:2], end_turn=False)
    recorder.close()
    chat = recorder.directory / "chat.jsonl"
    with open(chat, "ab") as handle:  # what a crash in the middle of a write leaves
        handle.write(json.dumps({"kind": "message", "message": MESSAGES[2].to_dict()}).encode()[:25])
    loaded = store.load(recorder.id)
    assert loaded.torn and loaded.interrupted and loaded.history == MESSAGES[:2]
    resumed = store.reopen(loaded)
    assert resumed.conversation.messages == MESSAGES[:2] + resumed.conversation.messages[2:]
    # the assistant's call had no answer: the resume answered it
    assert [m.tool_call_id for m in resumed.conversation.messages[2:]] == ["toolu_01"]
    record_messages(resumed, [Message.user("again"), Message.assistant("ok")])
    resumed.close()
    again = store.load(recorder.id)
    assert not again.torn and again.skipped == 0 and not again.interrupted
    assert again.history == resumed.conversation.messages and again.history[-1].text == "ok"
    pad = read_jsonl(recorder.directory / "scratchpad.jsonl").records
    resumed_record = next(r for r in pad if r.get("type") == "resumed")
    assert resumed_record["torn_tail"] and resumed_record["answered_dangling_calls"] == ["toolu_01"]


def test_a_whole_last_record_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}')
    read = read_jsonl(path)
    assert read.records == [{"a": 1}, {"b": 2}] and not read.torn
    assert repair_tail(path) is False
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n'


def test_repair_cuts_a_torn_line_longer_than_the_read_window(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a":1}\n{"text":"' + b"y" * 200_000)
    assert repair_tail(path) is True
    assert path.read_bytes() == b'{"a":1}\n'
    handle = JsonlFile.reopen(path)
    assert handle.lines == 1
    handle.append({"b": 2})
    handle.close()
    assert read_jsonl(path).records == [{"a": 1}, {"b": 2}]


def test_damaged_lines_in_the_middle_are_skipped_and_counted(store: SessionStore, workspace: Path) -> None:
    recorder = store.create(workspace, model="m")
    record_messages(recorder, MESSAGES[:1])
    recorder.close()
    chat = recorder.directory / "chat.jsonl"
    with open(chat, "ab") as handle:
        handle.write(b"\x00garbage\n")
        handle.write(b'{"kind":"message","message":{"role":"user"}}\n')  # no parts: still a message
        handle.write(b'{"kind":"message"}\n')  # no message: skipped
        handle.write(b'{"kind":"future_kind","x":1}\n')  # unknown kinds are ignored
    log = read_chat(chat)
    assert log.skipped == 2 and not log.torn
    assert log.history == [MESSAGES[0], Message("user")]
