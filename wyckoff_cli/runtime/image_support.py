"""Which models may be sent images, and the one clear error when one may not.

The session fills `ImageSupport` from the model catalogue. Before a request that
carries images, the runtime asks `refusal(model)`: a model whose catalogue entry
says it takes no images gets nothing sent. An unknown model is tried, and a vendor's
refusal that talks about images becomes the same error (`vendor_refusal`). The loop
calls `refuse_before_sending` before the request and `image_refusal` on a `BadRequest`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wyckoff_cli.core.errors import BadRequest, ImagesNotSupported
from wyckoff_cli.core.messages import Message

_IMAGE_REFUSAL = re.compile(r"image|vision|multi-?modal|modalit|inline_?data|image_url", re.IGNORECASE)


def carries_images(messages: Sequence[Message]) -> bool:
    return any(message.images for message in messages)


def looks_like_image_refusal(reason: str) -> bool:
    return bool(_IMAGE_REFUSAL.search(reason))


@dataclass(frozen=True, slots=True)
class ImageSupport:
    """`takes_images(model)`: True or False by the catalogue, None for an unknown model;
    `capable`: the configured models (default, fallbacks, aliases) that take images."""

    takes_images: Callable[[str], bool | None]
    capable: tuple[str, ...] = ()

    def refusal(self, model: str) -> str | None:
        if self.takes_images(model) is not False:
            return None
        return f"{model} takes no images (by the model catalogue), so nothing was sent. {self._hint()}"

    def vendor_refusal(self, model: str, reason: str) -> str:
        return f"{model} refused the images ({reason}). {self._hint()}"

    def _hint(self) -> str:
        if self.capable:
            return f"Models configured here that take images: {', '.join(self.capable)} (switch with /model or --model)."
        return "No configured model takes images; use one that does, e.g. anthropic:claude-sonnet-4-5."


def refuse_before_sending(support: ImageSupport | None, model: str, messages: Sequence[Message]) -> bool:
    """Whether the request carries images the model may get (False without a support
    table); `ImagesNotSupported` before any request when the catalogue says it takes none."""
    if support is None or not carries_images(messages):
        return False
    refusal = support.refusal(model)
    if refusal is not None:
        raise ImagesNotSupported(refusal, provider=model)
    return True


def image_refusal(
    support: ImageSupport | None, with_images: bool, exc: BadRequest, model: str
) -> ImagesNotSupported | None:
    """A vendor's refusal of a request carrying images, as the clear error; None when
    `exc` is some other bad request (raised as it is)."""
    if support is None or not with_images or isinstance(exc, ImagesNotSupported):
        return None
    if not looks_like_image_refusal(exc.message):
        return None
    return ImagesNotSupported(
        support.vendor_refusal(model, exc.reason(model)), status=exc.status, provider=model
    )
