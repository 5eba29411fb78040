"""`[web]`: the settings of web_fetch and web_search (docs/CONFIG.md, docs/TOOLS.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


def _doc(text: str, **kwargs: Any) -> Any:
    return field(metadata={"doc": text}, **kwargs)


@dataclass
class WebConfig:
    """`[web]`: fetching pages and searching the web."""

    fetch: bool = _doc("Offer the web_fetch tool.", default=True)
    allow_private: bool = _doc(
        "Let web_fetch reach private, loopback and link-local addresses (off: only public ones).",
        default=False,
    )
    allow_hosts: list[str] = _doc(
        "Hosts web_fetch may reach even when they are private, e.g. `127.0.0.1`, `*.corp.example`.",
        default_factory=list,
    )
    max_bytes: int = _doc(
        "Largest response web_fetch reads, in bytes (after decompression).", default=5_000_000
    )
    timeout: float = _doc("Seconds a whole fetch may take, redirects included.", default=30.0)
    cache_minutes: float = _doc("Minutes a fetched page is kept in the session's cache.", default=15.0)
    search: Literal["brave", "tavily", "searxng"] | None = _doc(
        "The search API behind the web_search tool (none: no web_search tool).", default=None
    )
    search_url: str | None = _doc(
        "The search API's address: required for searxng (e.g. `http://localhost:8888`); "
        "brave and tavily default to their public endpoints.",
        default=None,
    )
    search_key_env: str | None = _doc(
        "Environment variable holding the search API key (default `BRAVE_API_KEY`, `TAVILY_API_KEY`; "
        "searxng needs none).",
        default=None,
    )
    search_results: int = _doc("Results web_search returns (1-20).", default=8)
    server_search: bool = _doc(
        "Use the provider's own web search where the model has one (Anthropic, Gemini, OpenAI Responses).",
        default=True,
    )
