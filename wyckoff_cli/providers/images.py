"""An `ImagePart`'s stored bytes as the adapters send them: base64, or a data URL.

The bytes are read from the session's image store when a request is built; the
encoded text of the last few images is kept so a long session does not re-read and
re-encode every image on every request. A stored image that is gone (its session
folder deleted) is a clear error and nothing is sent.
"""

from __future__ import annotations

import base64
from collections import OrderedDict

from wyckoff_cli.core.errors import BadRequest
from wyckoff_cli.core.messages import ImagePart

_CACHE_LIMIT = 32
_cache: OrderedDict[tuple[str, str], str] = OrderedDict()


def image_base64(part: ImagePart) -> str:
    key = (part.sha256, part.path)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    try:
        data = part.read_bytes()
    except OSError as exc:
        raise BadRequest(
            f"image {part.name or part.sha256[:12]}: its stored copy {part.path} cannot be read "
            f"({exc.strerror or exc}); nothing was sent"
        ) from None
    encoded = base64.b64encode(data).decode("ascii")
    _cache[key] = encoded
    if len(_cache) > _CACHE_LIMIT:
        _cache.popitem(last=False)
    return encoded


def image_data_url(part: ImagePart) -> str:
    return f"data:{part.media_type};base64,{image_base64(part)}"
