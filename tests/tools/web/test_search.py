"""web_search against fake Brave, Tavily and SearXNG APIs on 127.0.0.1, each answering
in the service's real response format; when the tool is (not) offered."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.tools.conftest import run_tool
from tests.tools.web.server import LocalServer, Reply, Request
from wyckoff_cli.core.errors import ConfigError, ToolError
from wyckoff_cli.storage.web_config import WebConfig
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.web import web_tools
from wyckoff_cli.tools.web.search import WebSearch, backend_from_config, missing_key_hint

JSON = {"Content-Type": "application/json"}

BRAVE = {
    "type": "search",
    "query": {"original": "httpx timeout", "show_strict_warning": False, "is_navigational": False},
    "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": False}]},
    "web": {
        "type": "search",
        "results": [
            {
                "title": "Timeouts - <strong>HTTPX</strong>",
                "url": "https://www.python-httpx.org/advanced/timeouts/",
                "is_source_local": False,
                "is_source_both": False,
                "description": "HTTPX is careful to enforce <strong>timeouts</strong> everywhere by default.",
                "page_age": "2025-01-10T00:00:00",
                "profile": {"name": "Python-httpx", "url": "https://www.python-httpx.org/"},
                "language": "en",
                "family_friendly": True,
                "type": "search_result",
                "subtype": "generic",
                "meta_url": {
                    "scheme": "https",
                    "netloc": "python-httpx.org",
                    "hostname": "www.python-httpx.org",
                },
                "age": "January 10, 2025",
                "extra_snippets": ["The default timeout is 5 seconds of network inactivity."],
            },
            {
                "title": "ReadTimeout &amp; friends",
                "url": "https://github.com/encode/httpx/discussions/1234",
                "description": "A discussion of read timeouts.",
                "type": "search_result",
            },
        ],
        "family_friendly": True,
    },
}

TAVILY = {
    "query": "httpx timeout",
    "follow_up_questions": None,
    "answer": "HTTPX applies a 5 second timeout by default.",
    "images": [],
    "results": [
        {
            "title": "Timeouts - HTTPX",
            "url": "https://www.python-httpx.org/advanced/timeouts/",
            "content": "HTTPX is careful to enforce timeouts everywhere by default.",
            "score": 0.91,
            "raw_content": None,
            "published_date": "2025-01-10",
        }
    ],
    "response_time": 1.02,
    "request_id": "7f3c9a2e-1b4d-4c1e-9f1a-2a5b8c3d4e6f",
}

SEARXNG = {
    "query": "httpx timeout",
    "number_of_results": 0,
    "results": [
        {
            "url": "https://www.python-httpx.org/advanced/timeouts/",
            "title": "Timeouts - HTTPX",
            "content": "HTTPX is careful to enforce timeouts everywhere by default.",
            "publishedDate": None,
            "thumbnail": "",
            "engine": "duckduckgo",
            "parsed_url": ["https", "www.python-httpx.org", "/advanced/timeouts/", "", "", ""],
            "template": "default.html",
            "engines": ["duckduckgo", "brave"],
            "positions": [1, 2],
            "score": 3.0,
            "category": "general",
        }
    ],
    "answers": [],
    "corrections": [],
    "infoboxes": [],
    "suggestions": ["httpx timeout read", "httpx timeout default"],
    "unresponsive_engines": [["google", "timeout"]],
}


def search_tool(server: LocalServer, service: str, env: dict[str, str] | None = None) -> WebSearch:
    backend = backend_from_config(service, server.url("").rstrip("/"), None, env or {}, timeout=5)
    assert backend is not None
    return WebSearch(backend)


async def test_brave(server: LocalServer, ctx: ToolContext) -> None:
    server.route("/res/v1/web/search", Reply(200, json.dumps(BRAVE).encode(), JSON))
    tool = search_tool(server, "brave", {"BRAVE_API_KEY": "brave-key-123"}).tool()
    outcome = await run_tool(tool, ctx, query="httpx   timeout", count=5)
    sent = server.requests[0]
    assert sent.method == "GET" and sent.headers["x-subscription-token"] == "brave-key-123"
    assert parse_qs(urlsplit(sent.path).query) == {"q": ["httpx timeout"], "count": ["5"]}
    assert outcome.text.splitlines()[0] == "Search results for 'httpx timeout' (brave, 2):"
    assert (
        "1. Timeouts - HTTPX (January 10, 2025)\n   https://www.python-httpx.org/advanced/timeouts/"
        in outcome.text
    )
    assert "enforce timeouts everywhere by default. … The default timeout is 5 seconds" in outcome.text
    assert "2. ReadTimeout & friends" in outcome.text and "<strong>" not in outcome.text
    assert outcome.display == {
        "query": "httpx timeout",
        "service": "brave",
        "sources": [
            {"title": "Timeouts - HTTPX", "url": "https://www.python-httpx.org/advanced/timeouts/"},
            {"title": "ReadTimeout & friends", "url": "https://github.com/encode/httpx/discussions/1234"},
        ],
    }


async def test_tavily(server: LocalServer, ctx: ToolContext) -> None:
    server.route("/search", Reply(200, json.dumps(TAVILY).encode(), JSON))
    tool = search_tool(server, "tavily", {"TAVILY_API_KEY": "tvly-abc"}).tool()
    outcome = await run_tool(tool, ctx, query="httpx timeout")
    sent = server.requests[0]
    assert sent.method == "POST" and sent.headers["authorization"] == "Bearer tvly-abc"
    assert json.loads(sent.body) == {"query": "httpx timeout", "max_results": 8, "search_depth": "basic"}
    assert "Answer (from the search service): HTTPX applies a 5 second timeout by default." in outcome.text
    assert "1. Timeouts - HTTPX (2025-01-10)" in outcome.text


async def test_searxng(server: LocalServer, ctx: ToolContext) -> None:
    def answer(request: Request) -> Reply:
        query = parse_qs(urlsplit(request.path).query)
        assert query == {"q": ["httpx timeout"], "format": ["json"]}
        return Reply(200, json.dumps(SEARXNG).encode(), JSON)

    server.route("/search", answer)
    outcome = await run_tool(search_tool(server, "searxng").tool(), ctx, query="httpx timeout")
    assert "authorization" not in server.requests[0].headers
    assert "1. Timeouts - HTTPX\n   https://www.python-httpx.org/advanced/timeouts/" in outcome.text
    assert "Suggestions: httpx timeout read; httpx timeout default" in outcome.text


async def test_no_results(server: LocalServer, ctx: ToolContext) -> None:
    server.route(
        "/search", Reply(200, json.dumps({**SEARXNG, "results": [], "suggestions": []}).encode(), JSON)
    )
    outcome = await run_tool(search_tool(server, "searxng").tool(), ctx, query="zzqx")
    assert outcome.text == "No results for 'zzqx' (searxng)."


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (401, b'{"error": "bad key"}', "refused the API key (401)"),
        (429, b"{}", "rate limiting (429)"),
        (403, b"Forbidden", "refused the API key (403)"),
        (500, b"boom", "answered 500 (is the json format enabled in the SearXNG settings?): boom"),
        (200, b"<html>not json</html>", "did not answer with JSON"),
        (200, b"[1, 2]", "unexpected answer from searxng"),
    ],
)
async def test_search_errors(
    server: LocalServer, ctx: ToolContext, status: int, body: bytes, expected: str
) -> None:
    server.route("/search", Reply(status, body, JSON))
    with pytest.raises(ToolError, match="web_search: ") as raised:
        await run_tool(search_tool(server, "searxng").tool(), ctx, query="q")
    assert expected in str(raised.value)


async def test_unreachable_and_slow_search(server: LocalServer, ctx: ToolContext) -> None:
    server.route("/search", Reply(200, b"{}", JSON, delay=3))
    backend = backend_from_config("searxng", server.url(""), None, {}, timeout=0.3)
    assert backend is not None
    with pytest.raises(ToolError, match="did not answer in time"):
        await run_tool(WebSearch(backend).tool(), ctx, query="q")


def test_offered_only_when_configured() -> None:
    names = lambda config, env: [t.name for t in web_tools(config, env)]  # noqa: E731
    assert names(WebConfig(), {}) == ["web_fetch"]
    assert names(WebConfig(search="brave"), {}) == ["web_fetch"]  # no key: not offered
    assert names(WebConfig(search="brave"), {"BRAVE_API_KEY": "k"}) == ["web_fetch", "web_search"]
    assert (
        names(WebConfig(search="tavily", search_key_env="MY_TAVILY"), {"MY_TAVILY": "k"})[-1] == "web_search"
    )
    assert names(WebConfig(search="searxng", search_url="http://127.0.0.1:8888"), {})[-1] == "web_search"
    assert names(WebConfig(fetch=False, search="brave"), {"BRAVE_API_KEY": "k"}) == ["web_search"]
    # a model with its own server-side search gets no client-side one
    config = WebConfig(search="brave")
    assert [t.name for t in web_tools(config, {"BRAVE_API_KEY": "k"}, provider_searches=True)] == [
        "web_fetch"
    ]
    config = WebConfig(search="brave", server_search=False)
    assert [t.name for t in web_tools(config, {"BRAVE_API_KEY": "k"}, provider_searches=True)][
        -1
    ] == "web_search"


def test_hints_say_how_to_enable_it() -> None:
    assert "set [web] search" in str(missing_key_hint(None, None, {}))
    assert "BRAVE_API_KEY is not set" in str(missing_key_hint("brave", None, {}))
    assert missing_key_hint("brave", None, {"BRAVE_API_KEY": "k"}) is None


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (WebConfig(search="searxng"), "needs [web] search_url"),
        (WebConfig(max_bytes=0), "max_bytes must be a positive"),
        (WebConfig(timeout=-1), "timeout must be a positive"),
        (WebConfig(search_results=50), "search_results must be between 1 and 20"),
        (WebConfig(allow_hosts=["bad/host"]), "allow_hosts"),
    ],
)
def test_bad_web_config(config: WebConfig, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        web_tools(config, {})


def test_search_keys_never_reach_the_result(server: LocalServer) -> None:
    tool = search_tool(server, "brave", {"BRAVE_API_KEY": "brave-key-123"})
    assert "brave-key-123" not in repr(tool.tool().parameters) + tool.tool().description


def test_web_section_is_read_from_config_files(tmp_path: object, isolated_environment: object) -> None:
    from pathlib import Path

    from wyckoff_cli.storage import paths
    from wyckoff_cli.storage.config import load_config

    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        '[web]\nsearch = "tavily"\nallow_hosts = ["127.0.0.1"]\nmax_bytes = 1000\n', encoding="utf-8"
    )
    web = load_config(None).config.web
    assert (web.search, web.allow_hosts, web.max_bytes, web.timeout) == ("tavily", ["127.0.0.1"], 1000, 30.0)
    path.write_text('[web]\nsearch = "google"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="web.search must be one of 'brave', 'tavily', 'searxng'"):
        load_config(None)
    assert isinstance(Path(path), Path)
