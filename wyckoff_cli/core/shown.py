"""What a person saw of a stored message, so a resumed transcript and a session's title
show exactly that (tui/replay.py, storage/session_info.py). Imports only `core/`.

A user message is stored as sent to the model, which is not always what the person
typed or saw. The message's meta says what was:

- `command`: a custom command or `/init` typed as `/NAME ARGS`; the text is its
  expansion (`with_command`);
- `typed` (with `shell_runs`): what the person typed after running `!command`s, whose
  output went first;
- `skills`: the `$NAME` skills loaded into the message, as text parts after the typed one;
- a `<system-reminder>` before the text (a mode change's note) was never typed;
- `synthetic` messages were never typed: `notice` holds the line the transcript showed
  for one (the loop guard's retry notice).
"""

from __future__ import annotations

import dataclasses

from wyckoff_cli.core.messages import Message, TextPart

COMMAND = "command"
NOTICE = "notice"

_OPEN, _CLOSE = "<system-reminder>", "</system-reminder>"


def strip_reminders(text: str) -> str:
    """The text without the notes sent before it (`<system-reminder>…</system-reminder>`)."""
    while text.startswith(_OPEN) and _CLOSE in text:
        text = text.split(_CLOSE, 1)[1].lstrip("\n")
    return text


def shown_user_text(message: Message) -> str:
    """What the transcript showed for a user message the person sent."""
    command = message.meta.get(COMMAND)
    if isinstance(command, str) and command:
        return command
    if isinstance(message.meta.get("shell_runs"), list):
        return strip_reminders(str(message.meta.get("typed", "")))
    if message.meta.get("skills"):  # the skills' text follows the typed part
        first = next((p.text for p in message.parts if isinstance(p, TextPart)), "")
        return strip_reminders(first)
    return strip_reminders(message.text)


def with_command(message: str | Message, command: str) -> Message:
    """`message` (the expansion sent) remembering that the person typed `command`."""
    sent = Message.user(message) if isinstance(message, str) else message
    return dataclasses.replace(sent, meta={**sent.meta, COMMAND: command})
