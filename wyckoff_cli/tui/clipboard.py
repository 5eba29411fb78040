"""An image from the system clipboard, through the first clipboard command there is.

Wayland `wl-paste`, X11 `xclip` or `xsel`, macOS `pngpaste` or `osascript`: each is
asked for image bytes (PNG, JPEG, GIF or WebP), with a short timeout. `read_clipboard_image()`
gives the bytes, or a `ClipboardMiss` saying why not (no command; the clipboard holds
no image), so a terminal without any of them can say how to attach instead.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass

TIMEOUT = 3.0
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"RIFF")
HOW_TO_ATTACH = "attach a file with @path/to/image.png, or paste or drag its path into the prompt"
_OSASCRIPT_DATA = re.compile(rb"\xabdata PNGf([0-9A-Fa-f]+)\xbb")


@dataclass(frozen=True, slots=True)
class ClipboardMiss:
    reason: str


def _run(command: list[str]) -> bytes | None:
    try:
        done = subprocess.run(command, capture_output=True, timeout=TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 and done.stdout else None


def _image(data: bytes | None) -> bytes | None:
    return data if data is not None and data.startswith(MAGIC) else None


def _wl_paste() -> bytes | None:
    types = (_run(["wl-paste", "--list-types"]) or b"").decode(errors="replace").split()
    for media_type in IMAGE_TYPES:
        if media_type in types:
            return _image(_run(["wl-paste", "--no-newline", "--type", media_type]))
    return None


def _xclip() -> bytes | None:
    targets = (_run(["xclip", "-selection", "clipboard", "-t", "TARGETS", "-o"]) or b"").decode(
        errors="replace"
    )
    for media_type in IMAGE_TYPES:
        if media_type in targets.split():
            return _image(_run(["xclip", "-selection", "clipboard", "-t", media_type, "-o"]))
    return None


def _xsel() -> bytes | None:
    return _image(_run(["xsel", "--clipboard", "--output"]))


def _pngpaste() -> bytes | None:
    return _image(_run(["pngpaste", "-"]))


def _osascript() -> bytes | None:
    out = _run(["osascript", "-e", "the clipboard as «class PNGf»"])
    match = _OSASCRIPT_DATA.search(out or b"")
    return _image(bytes.fromhex(match.group(1).decode())) if match else None


READERS = (
    ("wl-paste", _wl_paste),
    ("xclip", _xclip),
    ("xsel", _xsel),
    ("pngpaste", _pngpaste),
    ("osascript", _osascript),
)


def read_clipboard_image() -> bytes | ClipboardMiss:
    """The clipboard's image from the first clipboard command on PATH that has one."""
    found = [name for name, _ in READERS if shutil.which(name)]
    if not found:
        return ClipboardMiss(
            f"no clipboard command (wl-paste, xclip, xsel, pngpaste, osascript): {HOW_TO_ATTACH}"
        )
    for name, reader in READERS:
        if name in found and (data := reader()) is not None:
            return data
    return ClipboardMiss(f"the clipboard holds no image ({', '.join(found)} asked): {HOW_TO_ATTACH}")
