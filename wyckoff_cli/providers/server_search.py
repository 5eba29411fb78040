"""The vendors' own web search, turned on per model (docs/TOOLS.md, "Server-side search").

A model gets its vendor's search when `[web] server_search` is on (the default), the
catalogue gives it a `web_search` price (USD per 1,000 searches: the models whose
search Wyckoff knows how to request and bill) and it is served by an adapter that can
ask for it:

- Anthropic Messages API: the `web_search_20250305` server tool (at most `MAX_USES`
  searches per request); searches are counted from `usage.server_tool_use.web_search_requests`;
- OpenAI Responses API: the `web_search` tool; one search per `web_search_call` item
  whose action is a search;
- Gemini (3 and later): the `googleSearch` tool beside the function declarations; one
  search per query in `groundingMetadata.webSearchQueries`.

The composition root marks such a spec with `with_server_search`; each adapter adds
its vendor's tool to the request when `enabled(spec)`. The results, sources and
citations come back as server-tool parts (kept verbatim in the history by the
adapters) and `server_tool` events. The client-side `web_search` tool is then not
offered (its name would clash with Anthropic's).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from wyckoff_cli.providers.spec import ModelSpec

FLAG = "server_web_search"  # ModelSpec.extra key
RESPONSES_SOURCES = "web_search_call.action.sources"  # Responses `include`: the URLs a search read
MAX_USES = 5
ANTHROPIC_TOOL = "web_search_20250305"


def enabled(spec: ModelSpec) -> bool:
    return bool(spec.extra.get(FLAG))


def _adapter(spec: ModelSpec) -> str | None:
    from wyckoff_cli.providers.registry import entry_for, uses_responses_api

    try:
        entry = entry_for(spec.provider)
    except Exception:  # an unknown provider is reported elsewhere
        return None
    if entry.adapter in ("openai", "openai-responses"):
        return "responses" if uses_responses_api(spec) else None
    return entry.adapter if entry.adapter in ("anthropic", "gemini") else None


def supports(spec: ModelSpec) -> bool:
    """Whether Wyckoff can ask for `spec`'s vendor search: a catalogue `web_search`
    price and an adapter that can request it (an `openai:` model only through the
    Responses API)."""
    from wyckoff_cli.models.catalogue import default_catalogue

    found = default_catalogue().lookup(spec.model)
    if found is None or found[0].web_search is None:
        return False
    return _adapter(spec) is not None


def with_server_search(spec: ModelSpec, on: bool) -> ModelSpec:
    """`spec`, marked to use its vendor's web search when `on` and it is supported."""
    if not on or not supports(spec):
        return spec
    return dataclasses.replace(spec, extra={**spec.extra, FLAG: True})


def anthropic_tools(spec: ModelSpec) -> list[dict[str, Any]]:
    return [{"type": ANTHROPIC_TOOL, "name": "web_search", "max_uses": MAX_USES}] if enabled(spec) else []


def responses_tools(spec: ModelSpec) -> list[dict[str, Any]]:
    return [{"type": "web_search"}] if enabled(spec) else []


def gemini_tools(spec: ModelSpec) -> list[dict[str, Any]]:
    return [{"googleSearch": {}}] if enabled(spec) else []


def searches_server_side(provider: object) -> bool:
    """Whether the provider's first model (through retry, watchdog and fallback
    wrappers) uses its vendor's web search."""
    current: object | None = provider
    while current is not None:
        spec = getattr(current, "spec", None)
        if isinstance(spec, ModelSpec):
            return enabled(spec)
        providers = getattr(current, "providers", None)
        current = (
            providers[0] if isinstance(providers, list) and providers else getattr(current, "inner", None)
        )
    return False


def search_sources(action: Any) -> tuple[dict[str, str], ...]:
    """A Responses `web_search_call` action's sources (with `include` asked for)."""
    found = action.get("sources") if isinstance(action, dict) else None
    return tuple(
        {"url": str(s["url"]), "title": str(s.get("title") or "")}
        for s in found or ()
        if isinstance(s, dict) and s.get("url")
    )


def url_citations(item: dict[str, Any]) -> tuple[dict[str, str], ...]:
    """The `url_citation` annotations of a Responses message item, once per URL."""
    seen: dict[str, dict[str, str]] = {}
    for content in item.get("content") or ():
        for note in (content.get("annotations") or ()) if isinstance(content, dict) else ():
            if isinstance(note, dict) and note.get("type") == "url_citation" and note.get("url"):
                seen.setdefault(
                    str(note["url"]), {"url": str(note["url"]), "title": str(note.get("title") or "")}
                )
    return tuple(seen.values())
