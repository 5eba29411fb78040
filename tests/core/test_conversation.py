"""The conversation owns the messages and tells its observers every change, in order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from wyckoff_cli.core.conversation import Conversation, ConversationObserver
from wyckoff_cli.core.messages import Message


class Log(ConversationObserver):
    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def on_append(self, message: Message) -> None:
        self.seen.append(("append", message.text))

    def on_replace(
        self,
        start: int,
        stop: int,
        replaced: Sequence[Message],
        messages: Sequence[Message],
        note: dict[str, Any],
    ) -> None:
        self.seen.append(
            ("replace", start, stop, [m.text for m in replaced], [m.text for m in messages], note)
        )

    def on_truncate(self, message_id: str, removed: Sequence[Message]) -> None:
        self.seen.append(("truncate", message_id, [m.text for m in removed]))


def test_every_change_is_told_in_order_after_it_happened() -> None:
    conversation = Conversation()
    log = Log()
    unsubscribe = conversation.subscribe(log)
    a, b, c = Message.user("a"), Message.assistant("b"), Message.user("c")
    for message in (a, b, c):
        conversation.append(message)
    conversation.replace_range(0, 2, [Message.user("summary")], archive_path="archive/001.jsonl")
    assert [m.text for m in conversation] == ["summary", "c"]
    removed = conversation.truncate_to(c.id)
    assert [m.text for m in removed] == ["c"] and [m.text for m in conversation] == ["summary"]
    unsubscribe()
    conversation.append(Message.user("unseen"))
    assert log.seen == [
        ("append", "a"),
        ("append", "b"),
        ("append", "c"),
        ("replace", 0, 2, ["a", "b"], ["summary"], {"archive_path": "archive/001.jsonl"}),
        ("truncate", c.id, ["c"]),
    ]


def test_observers_see_the_state_after_the_change() -> None:
    conversation = Conversation([Message.user("a")])
    lengths: list[int] = []

    class Length(ConversationObserver):
        def on_append(self, message: Message) -> None:
            lengths.append(len(conversation))

    conversation.subscribe(Length())
    conversation.append(Message.user("b"))
    assert lengths == [2]


def test_a_fork_is_a_copy_without_observers() -> None:
    parent = Conversation([Message.user("a")])
    log = Log()
    parent.subscribe(log)
    child = parent.fork()
    child.append(Message.user("child only"))
    assert [m.text for m in parent] == ["a"] and [m.text for m in child] == ["a", "child only"]
    assert log.seen == []


def test_reading_never_hands_out_the_list_itself() -> None:
    conversation = Conversation([Message.user("a")])
    conversation.messages.append(Message.user("outside"))
    assert len(conversation) == 1
    assert isinstance(conversation[0:1], tuple)


def test_bad_ranges_and_unknown_ids_are_errors() -> None:
    conversation = Conversation([Message.user("a")])
    with pytest.raises(IndexError):
        conversation.replace_range(0, 5, [])
    with pytest.raises(KeyError, match="no message"):
        conversation.truncate_to("nope")
