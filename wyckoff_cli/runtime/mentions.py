"""`@path/to/image.png` in a prompt attaches the image itself to the user message.

A text file's mention asks the model to read it (runtime/expectation.py); an image's
becomes an `ImagePart` of the message, kept in the session's image store, so the
same happens in the app, `wyckoff run`, ACP and custom commands (they all reach the
runtime with the prompt's text). A mentioned image that cannot be attached is an
`ImageError` naming it: the turn sends nothing.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from wyckoff_cli.core.image_files import looks_like_image_path
from wyckoff_cli.core.messages import Message
from wyckoff_cli.runtime.expectation import mentioned_files
from wyckoff_cli.storage.images import ImageStore


def attach_mentioned_images(message: Message, workspace: Path, store: ImageStore) -> Message:
    """`message` with the images its text mentions appended (those not attached yet)."""
    if message.role != "user" or message.meta.get("synthetic") or "@" not in message.text:
        return message
    typed = str(message.meta.get("typed", message.text))
    already = {image.path for image in message.images}
    added = []
    for raw, target in mentioned_files(typed, workspace.resolve()):
        if not looks_like_image_path(target):
            continue
        part = store.add_file(target, name=raw)
        if part.path not in already:
            already.add(part.path)
            added.append(part)
    if not added:
        return message
    return replace(message, parts=(*message.parts, *added))
