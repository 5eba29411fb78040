"""The one owner of a session's messages.

Every change goes through a `Conversation` call — `append`, `replace_range`
(compaction), `truncate_to` (rewind) — and each call tells the observers (the session
recorder, a UI) what happened, in order, as it happens. `fork()` gives a child
conversation (a sub-agent) that starts from a copy and has no observers. Nothing
outside edits the message list: the runtime, the context manager and the hosts ask.
It lives in core/ so that every layer can hold one (storage's recorder observes it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

from wyckoff_cli.core.messages import Message


class ConversationObserver:
    """Told about every change, synchronously and in order; the defaults do nothing."""

    def on_append(self, message: Message) -> None:
        return None

    def on_replace(
        self,
        start: int,
        stop: int,
        replaced: Sequence[Message],
        messages: Sequence[Message],
        note: dict[str, Any],
    ) -> None:
        """`replaced` (what was at `start:stop`) became `messages`; `note` says why
        (e.g. `{"archive_path": ...}` for a compaction)."""
        return None

    def on_truncate(self, message_id: str, removed: Sequence[Message]) -> None:
        """The message `message_id` and everything after it (`removed`) are gone."""
        return None


class Conversation(Sequence[Message]):
    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = list(messages)
        self._observers: list[ConversationObserver] = []

    # ---------------------------------------------------------------- reading

    def __len__(self) -> int:
        return len(self._messages)

    @overload
    def __getitem__(self, index: int) -> Message: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Message]: ...
    def __getitem__(self, index: int | slice) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            return tuple(self._messages[index])
        return self._messages[index]

    def __iter__(self) -> Iterator[Message]:
        return iter(tuple(self._messages))

    @property
    def messages(self) -> list[Message]:
        """A copy of the messages, oldest first."""
        return list(self._messages)

    def index_of(self, message_id: str) -> int:
        for index, message in enumerate(self._messages):
            if message.id == message_id:
                return index
        raise KeyError(f"no message {message_id!r} in this conversation")

    # ---------------------------------------------------------------- observers

    def subscribe(self, observer: ConversationObserver) -> Callable[[], None]:
        self._observers.append(observer)
        return lambda: self._observers.remove(observer)

    # ---------------------------------------------------------------- changes

    def append(self, message: Message) -> None:
        self._messages.append(message)
        for observer in list(self._observers):
            observer.on_append(message)

    def replace_range(self, start: int, stop: int, messages: Iterable[Message], **note: Any) -> None:
        """Replace `start:stop` with `messages` (compaction replaces everything)."""
        if not 0 <= start <= stop <= len(self._messages):
            raise IndexError(f"range {start}:{stop} is outside 0:{len(self._messages)}")
        new = list(messages)
        replaced = self._messages[start:stop]
        self._messages[start:stop] = new
        for observer in list(self._observers):
            observer.on_replace(start, stop, replaced, new, note)

    def replace_all(self, messages: Iterable[Message], **note: Any) -> None:
        self.replace_range(0, len(self._messages), messages, **note)

    def truncate_to(self, message_id: str) -> list[Message]:
        """Remove the message `message_id` and everything after it (a rewind to just
        before it); returns what was removed."""
        index = self.index_of(message_id)
        removed = self._messages[index:]
        del self._messages[index:]
        for observer in list(self._observers):
            observer.on_truncate(message_id, removed)
        return removed

    def fork(self) -> Conversation:
        """A copy with no observers (for a sub-agent or a what-if)."""
        return Conversation(self._messages)
