"""Images for a session: where they are kept and which of its models may get them.

`image_store(recorder)` is the session's store (`<session folder>/images/`, one file
per image named by its hash), or a private temporary folder for a session that is
not recorded. `image_support(config)` tells the runtime, from the model catalogue,
which models take images and which configured ones do (for the refusal's hint).
`turn_message` is the user message of a `Turn` request: its `!command` runs, its text
and its attached images.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wyckoff_cli.core.messages import ImagePart, Message, with_images
from wyckoff_cli.runtime.image_support import ImageSupport
from wyckoff_cli.session.user_shell import ShellRun, attach
from wyckoff_cli.storage.images import ImageStore

if TYPE_CHECKING:
    from wyckoff_cli.storage.config import Config
    from wyckoff_cli.storage.recorder import SessionRecorder

IMAGES_DIR = "images"


def image_store(recorder: SessionRecorder | None) -> ImageStore:
    if recorder is not None:
        return ImageStore(recorder.directory / IMAGES_DIR)
    return ImageStore(lambda: Path(tempfile.mkdtemp(prefix="wyckoff-images-")))


def takes_images(name: str, config: Config) -> bool | None:
    """True or False by the catalogue; None for a model it does not know."""
    from wyckoff_cli.models.facts import resolve_model_facts
    from wyckoff_cli.session.models import model_id

    facts = resolve_model_facts(model_id(name, config), config.model_overrides)
    return None if facts.entry is None else facts.entry.images


def every_model_takes_images(config: Config, model: str | None) -> bool:
    """Whether every model of the session (the default and the fallbacks) takes images,
    by the model catalogue; an unknown model counts as not. Tools (read_file, MCP) give
    images to the model only then."""
    return all(takes_images(name, config) for name in [model or config.model, *config.fallbacks])


def image_support(config: Config) -> ImageSupport:
    names = dict.fromkeys([config.model, *config.fallbacks, *config.models])
    capable = tuple(name for name in names if name and takes_images(name, config))
    return ImageSupport(lambda name: takes_images(name, config), capable)


def turn_message(text: str, attached: Sequence[ShellRun], images: Sequence[ImagePart]) -> str | Message:
    """What a turn sends: the `!command` runs' output before `text`, then the images."""
    message = attach(text, attached) if attached else text
    return with_images(message, images) if images else message
