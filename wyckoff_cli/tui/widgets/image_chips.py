"""The images attached to the prompt, as chips above it: `[Image #1 screenshot.png 1280×720]`.

Backspace on an empty prompt removes the last chip (the help lists the key), a click
removes that chip; the chips go with the next message and are cleared when it is sent.
"""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.widgets import Static

from wyckoff_cli.core.messages import ImagePart


def chip_label(number: int, image: ImagePart) -> str:
    return f"[Image #{number} {image.label}]"


def chips_line(images: list[ImagePart]) -> str:
    """How a message's images show in the transcript (live and on resume)."""
    return " ".join(chip_label(number, image) for number, image in enumerate(images, start=1))


class ImageChips(Static):
    DEFAULT_CSS = """
    ImageChips { display: none; height: auto; padding: 0 1; color: $accent; }
    ImageChips.-visible { display: block; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self.images: list[ImagePart] = []
        self._spans: list[tuple[int, int]] = []

    def add(self, image: ImagePart) -> str:
        self.images.append(image)
        self._refresh()
        return chip_label(len(self.images), image)

    def remove_last(self) -> ImagePart | None:
        if not self.images:
            return None
        removed = self.images.pop()
        self._refresh()
        return removed

    def take(self) -> list[ImagePart]:
        """The attached images, for the message being sent; the chips are cleared."""
        images, self.images = self.images, []
        self._refresh()
        return images

    def _refresh(self) -> None:
        text = Text()
        self._spans = []
        for number, image in enumerate(self.images, start=1):
            start = len(text)
            text.append(chip_label(number, image), style="bold")
            self._spans.append((start, len(text)))
            text.append(" ")
        self.update(text)
        self.set_class(bool(self.images), "-visible")

    def on_click(self, event: events.Click) -> None:
        offset = event.x - 1  # the padding
        for index, (start, end) in enumerate(self._spans):
            if start <= offset < end and event.y == 0:
                self.images.pop(index)
                self._refresh()
                return
