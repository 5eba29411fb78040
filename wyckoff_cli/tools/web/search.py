"""`web_search(query)`: a client-side search tool for models without a server-side one.

Backed by the search API in `[web] search`:

- `brave` — `GET {url}/res/v1/web/search?q=…&count=N` with `X-Subscription-Token`
  (key in `BRAVE_API_KEY`); results in `web.results[]` (`title`, `url`, `description`
  with `<strong>` marks, `age`, `extra_snippets`).
- `tavily` — `POST {url}/search` with `Authorization: Bearer KEY` (key in
  `TAVILY_API_KEY`) and `{"query", "max_results"}`; results in `results[]` (`title`,
  `url`, `content`, `score`, `published_date`), an optional `answer`.
- `searxng` — `GET {url}/search?q=…&format=json` (the instance must enable the `json`
  format); results in `results[]` (`title`, `url`, `content`, `engines`,
  `publishedDate`), plus `answers`, `suggestions`.

Without `[web] search` (or without the key) the tool is not offered. The search API's
address is the user's own setting, so it is not subject to web_fetch's address guard
(a local SearXNG is fine).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wyckoff_cli.core.errors import ConfigError, ToolError
from wyckoff_cli.tools.base import Tool, ToolContext, ToolOutcome
from wyckoff_cli.tools.web.client import USER_AGENT

DEFAULT_URLS = {"brave": "https://api.search.brave.com", "tavily": "https://api.tavily.com"}
DEFAULT_KEY_ENV = {"brave": "BRAVE_API_KEY", "tavily": "TAVILY_API_KEY"}
SNIPPET_CHARS = 400

DESCRIPTION = """\
Search the web and get a list of results (title, URL, snippet).

- `query`: what to search for, as you would type it into a search engine (under 400 characters).
- `count` (optional): how many results (1-20).
- Read a promising result with web_fetch. Cite the URLs you used in your answer."""

_TAGS = re.compile(r"<[^>]+>")


@dataclass(frozen=True, slots=True)
class SearchResult:
    title: str
    url: str
    snippet: str
    date: str | None = None


@dataclass(frozen=True, slots=True)
class SearchBackend:
    service: str  # brave | tavily | searxng
    url: str
    key: str | None
    timeout: float = 20.0


def _clean(text: object) -> str:
    return " ".join(html.unescape(_TAGS.sub("", str(text or ""))).split())


def backend_from_config(
    service: str | None,
    url: str | None,
    key_env: str | None,
    env: Mapping[str, str],
    *,
    timeout: float = 20.0,
) -> SearchBackend | None:
    """The configured search backend; None when none is configured or its key is not
    set (the tool is then not offered). A SearXNG without `search_url` is a config error."""
    if service is None:
        return None
    if service == "searxng":
        if not url:
            raise ConfigError('[web] search = "searxng" needs [web] search_url, e.g. "http://localhost:8888"')
        key = env.get(key_env, "").strip() or None if key_env else None
        return SearchBackend(service, url.rstrip("/"), key, timeout)
    variable = key_env or DEFAULT_KEY_ENV[service]
    secret = env.get(variable, "").strip()
    if not secret:
        return None
    return SearchBackend(service, (url or DEFAULT_URLS[service]).rstrip("/"), secret, timeout)


def missing_key_hint(service: str | None, key_env: str | None, env: Mapping[str, str]) -> str | None:
    """For /doctor and start-up notices: why web_search is not offered, or None."""
    if service is None:
        return 'web_search is off: set [web] search = "brave", "tavily" or "searxng" (docs/TOOLS.md)'
    if service == "searxng":
        return None
    variable = key_env or DEFAULT_KEY_ENV[service]
    if not env.get(variable, "").strip():
        return f"web_search ({service}) is off: the key variable {variable} is not set"
    return None


def parse_results(service: str, data: Any) -> tuple[list[SearchResult], list[str]]:
    """The results and the extra lines (an answer, suggestions) of one API answer."""
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    extra: list[str] = []
    results: list[SearchResult] = []
    if service == "brave":
        web = data.get("web") or {}
        for item in web.get("results") or []:
            snippets = [item.get("description"), *(item.get("extra_snippets") or [])[:1]]
            snippet = " … ".join(_clean(s) for s in snippets if s)
            results.append(
                SearchResult(_clean(item.get("title")), str(item.get("url", "")), snippet, item.get("age"))
            )
        altered = (data.get("query") or {}).get("altered")
        if altered:
            extra.append(f"Searched for: {altered}")
    elif service == "tavily":
        if data.get("answer"):
            extra.append(f"Answer (from the search service): {_clean(data['answer'])}")
        for item in data.get("results") or []:
            results.append(
                SearchResult(
                    _clean(item.get("title")), str(item.get("url", "")), _clean(item.get("content")),
                    item.get("published_date"),
                )
            )  # fmt: skip
    else:
        for answer in data.get("answers") or []:
            text = answer.get("answer") if isinstance(answer, dict) else answer
            if text:
                extra.append(f"Answer: {_clean(text)}")
        for item in data.get("results") or []:
            results.append(
                SearchResult(
                    _clean(item.get("title")), str(item.get("url", "")), _clean(item.get("content")),
                    item.get("publishedDate"),
                )
            )  # fmt: skip
        suggestions = [str(s) for s in data.get("suggestions") or []][:5]
        if suggestions:
            extra.append("Suggestions: " + "; ".join(suggestions))
    return [r for r in results if r.url], extra


def format_results(query: str, service: str, results: list[SearchResult], extra: list[str]) -> str:
    if not results:
        return f"No results for {query!r} ({service})." + ("\n" + "\n".join(extra) if extra else "")
    lines = [f"Search results for {query!r} ({service}, {len(results)}):", *extra, ""]
    for number, result in enumerate(results, 1):
        snippet = result.snippet
        if len(snippet) > SNIPPET_CHARS:
            snippet = snippet[:SNIPPET_CHARS].rstrip() + " …"
        date = f" ({result.date})" if result.date else ""
        lines.append(f"{number}. {result.title or result.url}{date}\n   {result.url}")
        if snippet:
            lines.append(f"   {snippet}")
    return "\n".join(lines)


class WebSearch:
    def __init__(self, backend: SearchBackend, *, default_count: int = 8) -> None:
        self.backend = backend
        self.default_count = max(1, min(20, default_count))

    async def _request(self, query: str, count: int) -> Any:
        import httpx2

        b = self.backend
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        async with httpx2.AsyncClient(timeout=b.timeout, headers=headers, trust_env=True) as client:
            if b.service == "brave":
                headers = {"X-Subscription-Token": b.key or ""}
                params: dict[str, str | int] = {"q": query, "count": count}
                response = await client.get(f"{b.url}/res/v1/web/search", params=params, headers=headers)
            elif b.service == "tavily":
                body = {"query": query, "max_results": count, "search_depth": "basic"}
                headers = {"Authorization": f"Bearer {b.key}"}
                response = await client.post(f"{b.url}/search", json=body, headers=headers)
            else:
                extra = {"Authorization": f"Bearer {b.key}"} if b.key else {}
                params = {"q": query, "format": "json"}
                response = await client.get(f"{b.url}/search", params=params, headers=extra)
        if response.status_code in (401, 403):
            raise ToolError(
                f"web_search: {b.service} refused the API key ({response.status_code}); "
                "the user needs to check it. Do not retry."
            )
        if response.status_code == 429:
            raise ToolError(f"web_search: {b.service} is rate limiting (429); wait before searching again.")
        if response.status_code >= 400:
            hint = " (is the json format enabled in the SearXNG settings?)" if b.service == "searxng" else ""
            raise ToolError(
                f"web_search: {b.service} answered {response.status_code}{hint}: {response.text[:300].strip()}"
            )
        try:
            return response.json()
        except ValueError:
            raise ToolError(
                f"web_search: {b.service} did not answer with JSON: {response.text[:200]!r}"
            ) from None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        import httpx2

        query = " ".join(str(args.get("query", "")).split())
        if not query:
            raise ToolError("web_search: the query is empty")
        count = args.get("count", self.default_count)
        count = max(1, min(20, count)) if isinstance(count, int) else self.default_count
        try:
            data = await self._request(query, count)
        except httpx2.TimeoutException:
            raise ToolError(f"web_search: {self.backend.service} did not answer in time") from None
        except httpx2.HTTPError as exc:
            raise ToolError(f"web_search: cannot reach {self.backend.service}: {exc}") from None
        try:
            results, extra = parse_results(self.backend.service, data)
        except (ValueError, AttributeError, TypeError) as exc:
            raise ToolError(f"web_search: unexpected answer from {self.backend.service}: {exc}") from None
        results = results[:count]
        display = {
            "query": query,
            "service": self.backend.service,
            "sources": [{"title": r.title, "url": r.url} for r in results],
        }
        return ToolOutcome(format_results(query, self.backend.service, results, extra), display)

    def tool(self) -> Tool:
        return Tool(
            name="web_search",
            description=DESCRIPTION,
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "description": "The search query."},
                    "count": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": 20,
                        "description": "How many results.",
                    },
                },
                "required": ["query"],
                "additionalProperties": False,
            },
            run=self.run,
            concurrency_safe=True,
            requires_approval=False,
            kind="read",
            summary_arg="query",
        )
