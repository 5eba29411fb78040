"""Images attached in the app: Ctrl+V, a pasted or dragged image path, the chips.

Each attachment is checked, normalised and stored by the session's image store
(storage/images.py) at once, in a thread (decoding a large image takes a tenth of a
second or more: never on the app's own loop), so a bad file is a one-line notice and
nothing is attached; the chips (widgets/image_chips.py) go with the next message.
"""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, urlparse

from wyckoff_cli.core.errors import ImageError
from wyckoff_cli.core.image_files import looks_like_image_path
from wyckoff_cli.core.messages import ImagePart
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.tui.clipboard import ClipboardMiss, read_clipboard_image
from wyckoff_cli.tui.widgets.image_chips import ImageChips
from wyckoff_cli.tui.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from wyckoff_cli.storage.images import ImageStore


class ImageHost(Protocol):
    controller: ChatController

    def add_notice(self, kind: str, message: str) -> None: ...
    def run_worker(self, work: Any) -> Any: ...


def pasted_image_path(text: str, root: Path) -> Path | None:
    """The image file a paste names (a dragged file arrives as its path, maybe quoted,
    with escaped spaces or as a `file://` URI), or None."""
    text = text.strip()
    if not text or "\n" in text:
        return None
    if text.startswith("file://"):
        text = unquote(urlparse(text).path)
    elif not (root / Path(text).expanduser()).is_file():  # else a path typed as is, spaces and all
        try:
            words = shlex.split(text)
        except ValueError:
            return None
        if len(words) != 1:
            return None
        text = words[0]
    path = (root / Path(text).expanduser()).resolve()
    return path if looks_like_image_path(path) and path.is_file() else None


def attach_image(host: ImageHost, chips: ImageChips, part: ImagePart) -> None:
    label = chips.add(part)
    host.add_notice("info", f"Attached {label}")


def attach_path(host: ImageHost, chips: ImageChips, text: str) -> bool:
    """A paste that names an image file attaches it (in a worker); True when it names
    one (the paste is not typed then)."""
    path = pasted_image_path(text, host.controller.root)
    if path is None:
        return False
    store = host.controller.session.images
    if store is None:
        return False
    host.run_worker(_attach_file(host, chips, store, path))
    return True


async def _attach_file(host: ImageHost, chips: ImageChips, store: ImageStore, path: Path) -> None:
    try:
        part = await asyncio.to_thread(store.add_file, path, name=path.name)
    except ImageError as exc:
        host.add_notice("error", exc.message)
        return
    attach_image(host, chips, part)


async def paste_clipboard(host: ImageHost, chips: ImageChips, prompt: PromptInput) -> None:
    """Ctrl+V: the clipboard's image as a chip; else the app's own clipboard text, or a
    notice saying how to attach."""
    found = await asyncio.to_thread(read_clipboard_image)
    if isinstance(found, ClipboardMiss):
        if prompt.app.clipboard:
            prompt.paste_text()
        else:
            host.add_notice("warning", f"Ctrl+V: {found.reason}")
        return
    store = host.controller.session.images
    if store is None:
        return
    try:
        part = await asyncio.to_thread(store.add, found, "clipboard.png")
    except ImageError as exc:
        host.add_notice("error", exc.message)
        return
    attach_image(host, chips, part)


def drop_last(host: ImageHost, chips: ImageChips) -> bool:
    """Backspace on an empty prompt: the last attached image is not sent after all."""
    count = len(chips.images)
    removed = chips.remove_last()
    if removed is None:
        return False
    host.add_notice("info", f"[Image #{count} {removed.label}] will not be sent")
    return True
