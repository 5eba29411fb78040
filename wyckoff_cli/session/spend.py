"""What every session spent today: the starting point of `[session] max_day_usd`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from wyckoff_cli.core.usage import Usage
from wyckoff_cli.storage.sessions import SessionStore
from wyckoff_cli.storage.spend import spent_since


def spent_today(
    store: SessionStore, price: Callable[[str, Usage], float | None], now: datetime | None = None
) -> float:
    """USD of every call recorded since midnight UTC, in every project's sessions."""
    now = now or datetime.now(UTC)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return spent_since((info.directory for info in store.list(None)), midnight, price)
