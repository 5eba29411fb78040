"""web_fetch against a real HTTP server on 127.0.0.1: content types, redirects, limits,
errors, character sets, compression, the cache and the runtime's offloading."""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.support import collect, make_runtime, of_type
from tests.tools.conftest import run_tool
from tests.tools.web.conftest import FIXTURES, Clock, make_fetch
from tests.tools.web.pdf import make_pdf
from tests.tools.web.server import LocalServer, Reply
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy
from wyckoff_cli.tools.web.client import USER_AGENT
from wyckoff_cli.tools.web.fetch import WebFetch

HTML = {"Content-Type": "text/html; charset=utf-8"}


def page(title: str, body: str) -> bytes:
    return f"<html><head><title>{title}</title></head><body><main>{body}</main></body></html>".encode()


# --------------------------------------------------------------------------- content


@pytest.mark.parametrize(
    ("fixture", "title", "must_have"),
    [
        (
            "python-docs-json.html",
            "json — JSON encoder and decoder",
            ["json.dumps", "```", "| JSON | Python |"],
        ),
        ("rustdoc-book-what-is-rustdoc.html", "What is rustdoc?", ["cargo doc", "rustdoc src/lib.rs"]),
        ("github-issue.html", "Streaming response hangs forever", ["```python", "Timeout(10.0, read=30.0)"]),
        (
            "blog-post.html",
            "Why our Postgres connection pool ran dry",
            ["idle_in_transaction_session_timeout"],
        ),
    ],
)
async def test_html_pages_become_markdown_with_title_and_url_first(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext, fixture: str, title: str, must_have: list[str]
) -> None:
    server.route("/page", Reply(200, (FIXTURES / fixture).read_bytes(), HTML))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/page"))
    first, second, third = outcome.text.splitlines()[:3]
    assert first.startswith("# ") and title in first
    assert second == f"URL: {server.url('/page')}"
    assert third.startswith("Content: HTML (") and "as Markdown" in third
    for text in must_have:
        assert text in outcome.text, text
    for chrome in ("Sign up", "We use cookies", "Previous topic", "Keyboard shortcuts", "<script", "<div"):
        assert chrome not in outcome.text
    assert outcome.display is not None and outcome.display["status"] == 200


async def test_links_become_absolute(server: LocalServer, fetch: WebFetch, ctx: ToolContext) -> None:
    body = '<p>See <a href="/docs/api.html">the API</a>, <a href="#top">top</a>, <a href="javascript:x()">js</a>.</p>'
    server.route("/a/b", Reply(200, page("Links", body), HTML))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/a/b"))
    assert f"[the API]({server.url('/docs/api.html')})" in outcome.text
    assert "#top" not in outcome.text and "javascript:" not in outcome.text


@pytest.mark.parametrize(
    ("content_type", "body", "expected", "label"),
    [
        ("application/json", b'{"name":"wyckoff","tags":["a","b"]}', '{\n  "name": "wyckoff",', "JSON"),
        ("application/problem+json", b'{"title": "bad"}', '"title": "bad"', "JSON"),
        ("text/plain; charset=utf-8", b"just text\nline two\n", "just text\nline two", "text/plain"),
        ("text/markdown", b"# Notes\n\n- one\n- two\n", "# Notes\n\n- one\n- two", "Markdown"),
        ("text/csv", b"a,b\n1,2\n", "a,b\n1,2", "text/csv"),
    ],
)
async def test_json_text_and_markdown_pass_through(
    server: LocalServer,
    fetch: WebFetch,
    ctx: ToolContext,
    content_type: str,
    body: bytes,
    expected: str,
    label: str,
) -> None:
    server.route("/data", Reply(200, body, {"Content-Type": content_type}))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/data"))
    assert expected in outcome.text
    assert f"Content: {label}, " in outcome.text


async def test_markdown_title_is_its_first_heading(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext
) -> None:
    server.route(
        "/readme.md", Reply(200, b"intro\n\n# The Real Title\n\ntext", {"Content-Type": "text/markdown"})
    )
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/readme.md"))
    assert outcome.text.startswith("# The Real Title\nURL: ")


async def test_pdf_text(server: LocalServer, fetch: WebFetch, ctx: ToolContext) -> None:
    pdf = make_pdf(["Release notes for version 2.0", "Breaking change: the config moved"], "Release Notes")
    server.route("/notes.pdf", Reply(200, pdf, {"Content-Type": "application/pdf"}))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/notes.pdf"))
    assert outcome.text.startswith("# Release Notes\n")
    assert "Content: PDF, 2 pages" in outcome.text
    assert "Release notes for version 2.0" in outcome.text and "--- page 2 of 2 ---" in outcome.text
    server.route("/download", Reply(200, pdf, {"Content-Type": "application/octet-stream"}))
    assert "Breaking change" in (await run_tool(fetch.tool(), ctx, url=server.url("/download"))).text


async def test_broken_pdf_is_refused_clearly(server: LocalServer, fetch: WebFetch, ctx: ToolContext) -> None:
    server.route("/bad.pdf", Reply(200, b"%PDF-1.4\nnot really a pdf", {"Content-Type": "application/pdf"}))
    with pytest.raises(ToolError, match=r"application/pdf \(unreadable"):
        await run_tool(fetch.tool(), ctx, url=server.url("/bad.pdf"))


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("image/png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"),
        ("application/zip", b"PK\x03\x04\x14\x00\x00\x00"),
        ("application/octet-stream", b"\x00\x01\x02\x03"),
        ("", b"\x7fELF\x02\x01\x01\x00\x00\x00"),
        ("text/plain", b"looks like text\x00\x00\x00 but is not"),
    ],
)
async def test_binary_is_refused_with_its_type(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext, content_type: str, body: bytes
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    server.route("/file", Reply(200, body, headers))
    with pytest.raises(ToolError) as raised:
        await run_tool(fetch.tool(), ctx, url=server.url("/file"))
    message = str(raised.value)
    assert "not text" in message and (content_type or "application/octet-stream") in message


# --------------------------------------------------------------------------- charsets


@pytest.mark.parametrize(
    ("headers", "body", "expected"),
    [
        ({"Content-Type": "text/html; charset=ISO-8859-1"}, page("Caf\xe9", "<p>na\xefve r\xe9sum\xe9</p>").decode().encode("latin-1"), "naïve résumé"),
        ({"Content-Type": "text/html"}, '<html><head><meta charset="shift_jis"><title>日本語</title></head><body><p>こんにちは世界</p></body></html>'.encode("shift_jis"), "こんにちは世界"),
        ({"Content-Type": "text/html"}, b'<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1251"></head><body><p>' + "Привет".encode("cp1251") + b"</p></body></html>", "Привет"),
        ({"Content-Type": "text/plain"}, "smart \u201cquotes\u201d \u2014 and \u20ac".encode("cp1252"), "smart “quotes” — and €"),
        ({"Content-Type": "text/plain"}, "\ufeffUTF-16 with a BOM: ünïcødé".encode("utf-16"), "UTF-16 with a BOM: ünïcødé"),
        ({"Content-Type": "text/plain; charset=gb2312"}, "中文页面".encode("gb18030"), "中文页面"),
        ({"Content-Type": "application/json; charset=utf-8"}, '{"city": "Zürich"}'.encode(), "Zürich"),
    ],
    ids=["latin-1-header", "shift-jis-meta", "windows-1251-http-equiv", "cp1252-undeclared", "utf-16-bom", "gb2312", "json-utf8"],
)  # fmt: skip
async def test_non_utf8_charsets(
    server: LocalServer,
    fetch: WebFetch,
    ctx: ToolContext,
    headers: dict[str, str],
    body: bytes,
    expected: str,
) -> None:
    server.route("/charset", Reply(200, body, headers))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/charset"))
    assert expected in outcome.text
    assert "\ufffd" not in outcome.text


async def test_undecodable_bytes_are_noted(server: LocalServer, fetch: WebFetch, ctx: ToolContext) -> None:
    server.route("/mixed", Reply(200, b"ok \xff\xfe broken", {"Content-Type": "text/plain; charset=utf-8"}))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/mixed"))
    assert "Note: read as utf-8; bytes that did not decode are shown as �" in outcome.text


# --------------------------------------------------------------------------- HTTP behaviour


async def test_user_agent_and_compression(server: LocalServer, fetch: WebFetch, ctx: ToolContext) -> None:
    import brotli

    text = page("Compressed", "<p>" + "squeezed words " * 200 + "</p>")
    server.route("/gz", Reply(200, gzip.compress(text), {**HTML, "Content-Encoding": "gzip"}))
    server.route("/br", Reply(200, brotli.compress(text), {**HTML, "Content-Encoding": "br"}))
    for path in ("/gz", "/br"):
        outcome = await run_tool(fetch.tool(), ctx, url=server.url(path))
        assert outcome.text.startswith("# Compressed\n") and "squeezed words" in outcome.text
    sent = server.requests[0].headers
    assert sent["user-agent"] == USER_AGENT and USER_AGENT.startswith("Wyckoff/")
    assert "gzip" in sent["accept-encoding"] and "br" in sent["accept-encoding"]
    assert "text/html" in sent["accept"]


async def test_redirect_chain_is_followed_and_shown(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext
) -> None:
    server.route("/r1", Reply(301, headers={"Location": "/r2"}))
    server.route("/r2", Reply(302, headers={"Location": server.url("/r3")}))
    server.route("/r3", Reply(307, headers={"Location": "final?x=1"}))
    server.route("/final", Reply(200, page("Arrived", "<p>the end</p>"), HTML))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/r1"))
    lines = outcome.text.splitlines()
    assert lines[0] == "# Arrived"
    assert lines[1] == f"URL: {server.url('/final?x=1')}"
    assert lines[2] == "Redirected: " + " → ".join(server.url(p) for p in ("/r1", "/r2", "/r3", "/final?x=1"))
    assert outcome.display is not None and outcome.display["url"] == server.url("/final?x=1")


async def test_more_than_five_redirects_are_refused(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext
) -> None:
    for n in range(10):
        server.route(f"/loop{n}", Reply(302, headers={"Location": f"/loop{n + 1}"}))
    with pytest.raises(ToolError, match="more than 5 redirects"):
        await run_tool(fetch.tool(), ctx, url=server.url("/loop0"))
    assert server.hits("/loop5") == 1 and server.hits("/loop6") == 0
    server.route("/five0", Reply(302, headers={"Location": "/loop5"}))  # exactly five hops is fine
    server.route("/loop5", Reply(200, page("Five", "<p>ok</p>"), HTML))
    assert (await run_tool(fetch.tool(), ctx, url=server.url("/five0"))).text.startswith("# Five")


async def test_redirect_to_another_host_is_reported_not_followed(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext
) -> None:
    server.route("/moved", Reply(301, headers={"Location": "https://elsewhere.example/new"}))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/moved"))
    assert "redirects (301) to https://elsewhere.example/new, on another host" in outcome.text
    assert "call web_fetch with url='https://elsewhere.example/new'" in outcome.text


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://example.com/x", "gopher://127.0.0.1:70/"])
async def test_redirect_to_a_non_http_scheme_is_refused(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext, location: str
) -> None:
    server.route("/sneaky", Reply(302, headers={"Location": location}))
    with pytest.raises(ToolError, match="redirects to a URL that is not fetched: only http and https"):
        await run_tool(fetch.tool(), ctx, url=server.url("/sneaky"))


async def test_oversize_is_refused(server: LocalServer, ctx: ToolContext) -> None:
    fetch = make_fetch(max_bytes=10_000)
    big = page("Big", "<p>" + "x" * 20_000 + "</p>")
    server.route("/declared", Reply(200, big, HTML))
    server.route("/chunked", Reply(200, iter([big[:8000], big[8000:]]), HTML))
    server.route("/bomb", Reply(200, gzip.compress(big), {**HTML, "Content-Encoding": "gzip"}))
    for path in ("/declared", "/chunked", "/bomb"):
        with pytest.raises(ToolError, match=r"over the 10 KB limit|larger than the 10 KB limit"):
            await run_tool(fetch.tool(), ctx, url=server.url(path))
    assert len(gzip.compress(big)) < 10_000  # the bomb is small on the wire and big decoded


async def test_slow_server_times_out(server: LocalServer, ctx: ToolContext) -> None:
    fetch = make_fetch(timeout=0.5)

    def trickle() -> Iterator[bytes]:
        for _ in range(20):
            time.sleep(0.1)
            yield b"<p>slow</p>"

    server.route("/slow", Reply(200, page("Slow", ""), HTML, delay=3.0))
    server.route("/trickle", Reply(200, trickle(), HTML))
    started = time.monotonic()
    for path in ("/slow", "/trickle"):
        with pytest.raises(ToolError, match=r"longer than 0.5 seconds|did not answer within 0.5 seconds"):
            await run_tool(fetch.tool(), ctx, url=server.url(path))
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(
    ("status", "body", "headers", "expected"),
    [
        (
            404,
            b"<html><title>Nope</title><body><h1>Page not found</h1></body></html>",
            HTML,
            "answered 404 Not Found",
        ),
        (
            500,
            b'{"error": "database down"}',
            {"Content-Type": "application/json"},
            '"error": "database down"',
        ),
        (403, b"", {"Content-Type": "text/plain"}, "answered 403 Forbidden."),
    ],
)
async def test_error_statuses_are_tool_errors(
    server: LocalServer,
    fetch: WebFetch,
    ctx: ToolContext,
    status: int,
    body: bytes,
    headers: dict[str, str],
    expected: str,
) -> None:
    server.route("/err", Reply(status, body, headers))
    with pytest.raises(ToolError) as raised:
        await run_tool(fetch.tool(), ctx, url=server.url("/err"))
    assert expected in str(raised.value)
    if status == 404:
        assert "Page not found" in str(raised.value)


async def test_connection_refused_is_a_tool_error(fetch: WebFetch, ctx: ToolContext) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ToolError, match=rf"fetching http://127.0.0.1:{port}/ failed: ConnectError"):
        await run_tool(fetch.tool(), ctx, url=f"http://127.0.0.1:{port}/")


# --------------------------------------------------------------------------- cache, prompt, offload


async def test_cache_per_url_for_fifteen_minutes(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext, clock: Clock
) -> None:
    server.route("/cached", Reply(200, page("Cached", "<p>v1</p>"), HTML))
    first = await run_tool(fetch.tool(), ctx, url=server.url("/cached"))
    clock.now += 14 * 60
    second = await run_tool(fetch.tool(), ctx, url=server.url("/cached"), prompt="v1")
    assert server.hits("/cached") == 1
    assert "From the session's cache: fetched 14 minutes ago" in second.text
    assert second.display is not None and second.display["cached"] is True
    assert first.text.splitlines()[:3] == second.text.splitlines()[:3]
    clock.now += 2 * 60
    await run_tool(fetch.tool(), ctx, url=server.url("/cached"))
    assert server.hits("/cached") == 2
    await run_tool(fetch.tool(), ctx, url=server.url("/cached?other=1"))
    assert server.hits("/cached") == 3


async def test_errors_are_not_cached(server: LocalServer, fetch: WebFetch, ctx: ToolContext) -> None:
    for _ in range(2):
        with pytest.raises(ToolError):
            await run_tool(fetch.tool(), ctx, url=server.url("/missing"))
    assert server.hits("/missing") == 2


async def test_prompt_puts_matching_sections_first_on_long_pages(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext
) -> None:
    server.route("/docs", Reply(200, (FIXTURES / "python-docs-json.html").read_bytes(), HTML))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/docs"), prompt="JSONDecodeError exception")
    head = outcome.text[:3000]
    assert "## Sections matching “JSONDecodeError exception”" in head
    assert "JSONDecodeError" in head.split("## Sections matching", 1)[1]
    assert "## The whole page" in outcome.text
    server.route("/short", Reply(200, page("Short", "<h2>JSONDecodeError</h2><p>tiny</p>"), HTML))
    short = await run_tool(fetch.tool(), ctx, url=server.url("/short"), prompt="JSONDecodeError")
    assert "Sections matching" not in short.text  # a short page is shown whole anyway


async def test_big_page_is_offloaded_by_the_runtime_with_title_and_url_on_top(
    server: LocalServer, fetch: WebFetch, root: Path
) -> None:
    server.route("/docs", Reply(200, (FIXTURES / "python-docs-json.html").read_bytes(), HTML))
    url = server.url("/docs")
    rounds = [{"tool_calls": [{"name": "web_fetch", "args": {"url": url}}]}, {"text": "done"}]
    policy = ApprovalPolicy(allow=["web_fetch(domain:127.0.0.1)"])
    runtime, _provider = make_runtime(rounds, [fetch.tool()], root, policy=policy)
    events, history = await collect(runtime)
    result = of_type(events, ev.ToolSucceeded)[0]
    tool_text = next(m for m in history if m.role == "tool").text
    assert tool_text.startswith("# json — JSON encoder and decoder")
    assert tool_text.splitlines()[1] == f"URL: {url}"
    assert "was saved to" in tool_text and len(tool_text) < 8_000
    assert result.offloaded_path is not None
    assert Path(result.offloaded_path).read_text(encoding="utf-8").count("json.dumps") > 10


async def test_a_page_the_parser_chokes_on_is_a_tool_error(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext
) -> None:
    deep = b"<html><body>" + b"<div>" * 50_000 + b"x" + b"</div>" * 50_000 + b"</body></html>"
    server.route("/deep", Reply(200, deep, HTML))
    # a tool error that says what was refused (issue 27: it named the RecursionError before)
    with pytest.raises(ToolError, match="the HTML nests its elements too deeply to convert; not converted"):
        await run_tool(fetch.tool(), ctx, url=server.url("/deep"))


# Very deep bodies are refused with what was refused (issue 27), never "failed unexpectedly".
DEEP = 100_000


@pytest.mark.parametrize(
    ("content_type", "body", "said"),
    [
        ("application/json", b"[" * DEEP + b"]" * DEEP, "the JSON nests deeper than 200 levels"),
        ("application/json", b'{"a":' * DEEP + b"1" + b"}" * DEEP, "the JSON nests deeper than 200 levels"),
        ("application/vnd.api+json", b"[" * 201 + b"]" * 201, "the JSON nests deeper than 200 levels (201)"),
        ("application/json", b"[" * DEEP, "the JSON nests deeper than 200 levels"),  # never closed
        (
            "text/html",
            b"<html><body>" + b"<div>" * 5000 + b"x" + b"</div>" * 5000,
            "nests its elements too deeply",
        ),
    ],
    ids=["array", "object", "just-over", "unclosed", "html"],
)
async def test_a_body_nested_too_deeply_is_refused_clearly(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext, content_type: str, body: bytes, said: str
) -> None:
    server.route("/deep", Reply(200, body, {"Content-Type": content_type}))
    with pytest.raises(ToolError) as raised:
        await run_tool(fetch.tool(), ctx, url=server.url("/deep"))
    message = str(raised.value)
    assert said in message and "not converted" in message and server.url("/deep") in message
    assert "RecursionError" not in message


async def test_json_nested_within_the_limit_is_shown(
    server: LocalServer, fetch: WebFetch, ctx: ToolContext
) -> None:
    body = b'{"s": "' + b"[" * 5000 + b'"}'  # brackets inside a string are not nesting
    server.route("/ok", Reply(200, b"[" * 150 + body + b"]" * 150, {"Content-Type": "application/json"}))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/ok"))
    assert "Content: JSON" in outcome.text and "[[[[" in outcome.text
