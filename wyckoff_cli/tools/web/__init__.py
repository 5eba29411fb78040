"""Web tools: `web_fetch` (fetch.py) and the client-side `web_search` (search.py).

`web_tools(config.web, os.environ)` builds a session's web tools from `[web]`; the
composition root appends them after the built-ins (docs/TOOLS.md, docs/CONFIG.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.tools.base import Tool

__all__ = ["WebOptions", "check_web_config", "web_tools"]


class WebOptions(Protocol):
    """The `[web]` settings the tools read (storage.web_config.WebConfig has them all)."""

    @property
    def fetch(self) -> bool: ...
    @property
    def allow_private(self) -> bool: ...
    @property
    def allow_hosts(self) -> list[str]: ...
    @property
    def max_bytes(self) -> int: ...
    @property
    def timeout(self) -> float: ...
    @property
    def cache_minutes(self) -> float: ...
    @property
    def search(self) -> str | None: ...
    @property
    def search_url(self) -> str | None: ...
    @property
    def search_key_env(self) -> str | None: ...
    @property
    def search_results(self) -> int: ...
    @property
    def server_search(self) -> bool: ...


def check_web_config(config: WebOptions) -> None:
    """Raise `ConfigError` for `[web]` values no tool can work with."""
    from wyckoff_cli.tools.web.urls import check_domain_pattern

    if config.max_bytes <= 0:
        raise ConfigError(f"[web] max_bytes must be a positive number of bytes, got {config.max_bytes}")
    if config.timeout <= 0:
        raise ConfigError(f"[web] timeout must be a positive number of seconds, got {config.timeout:g}")
    if config.cache_minutes < 0:
        raise ConfigError(f"[web] cache_minutes must be 0 or more, got {config.cache_minutes:g}")
    if not 1 <= config.search_results <= 20:
        raise ConfigError(f"[web] search_results must be between 1 and 20, got {config.search_results}")
    for host in config.allow_hosts:
        problem = check_domain_pattern(f"domain:{host}")
        if problem:
            raise ConfigError(f"[web] allow_hosts: {problem.removeprefix('domain: takes ')}")


def web_tools(
    config: WebOptions,
    env: Mapping[str, str],
    *,
    provider_searches: bool = False,
    current: Callable[[], WebOptions] | None = None,
) -> list[Tool]:
    """The session's web tools: web_fetch (unless `[web] fetch = false`) and, when a
    search API is configured with its key and the model has no server-side search of
    its own (`provider_searches`), web_search. Each call makes new tools (a new cache).
    With `current` (the `[web]` of now), `allow_private` and `allow_hosts` are read at
    every fetch, so changing them needs no restart; the other settings are read here."""
    from wyckoff_cli.tools.web.addresses import AddressGuard
    from wyckoff_cli.tools.web.client import FetchLimits, WebClient
    from wyckoff_cli.tools.web.fetch import WebFetch
    from wyckoff_cli.tools.web.search import WebSearch, backend_from_config

    check_web_config(config)
    tools: list[Tool] = []
    if config.fetch:
        guard = AddressGuard(
            allow_private=config.allow_private, allow_hosts=config.allow_hosts, settings=current
        )
        limits = FetchLimits(max_bytes=config.max_bytes, timeout=config.timeout)
        fetch = WebFetch(WebClient(guard, limits), cache_seconds=config.cache_minutes * 60)
        tools.append(fetch.tool())
    backend = backend_from_config(config.search, config.search_url, config.search_key_env, env)
    if backend is not None and not (provider_searches and config.server_search):
        tools.append(WebSearch(backend, default_count=config.search_results).tool())
    return tools
