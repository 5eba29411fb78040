"""Fixtures for the web tool tests: a local HTTP server and web_fetch pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tools.web.server import LocalServer
from wyckoff_cli.tools.web.addresses import AddressGuard
from wyckoff_cli.tools.web.client import FetchLimits, WebClient
from wyckoff_cli.tools.web.fetch import WebFetch

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as running:
        yield running


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_fetch(
    *, allow_hosts: tuple[str, ...] = ("127.0.0.1",), clock: Clock | None = None, **limits: float
) -> WebFetch:
    guard = AddressGuard(allow_hosts=allow_hosts)
    client = WebClient(guard, FetchLimits(**limits))  # type: ignore[arg-type]
    return WebFetch(client, clock=clock or Clock())


@pytest.fixture
def fetch(clock: Clock) -> WebFetch:
    """web_fetch allowed to reach 127.0.0.1 (as `[web] allow_hosts = ["127.0.0.1"]`)."""
    return make_fetch(clock=clock)
