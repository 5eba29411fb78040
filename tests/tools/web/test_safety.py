"""web_fetch's safety as tables of attack forms: URL spellings, private addresses in
every disguise (checked after DNS and after each redirect, against a real server on
127.0.0.1), and the permission rules `web_fetch(domain:HOST)`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools.conftest import run_tool
from tests.tools.web.conftest import make_fetch
from tests.tools.web.server import LocalServer, Reply
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy, invalid_rules
from wyckoff_cli.tools.web.addresses import AddressGuard, BlockedAddress, refusal_reason
from wyckoff_cli.tools.web.client import FetchLimits, WebClient
from wyckoff_cli.tools.web.fetch import WebFetch
from wyckoff_cli.tools.web.urls import BadURL, canonical_url

HTML = {"Content-Type": "text/html"}
OK_PAGE = b"<html><head><title>Secret</title></head><body><p>internal data</p></body></html>"

# --------------------------------------------------------------------------- addresses


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"), ("127.255.255.254", "loopback"), ("::1", "loopback"),
        ("10.0.0.8", "private"), ("172.16.5.4", "private"), ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"), ("fe80::1", "link-local"), ("fd00:ec2::254", "private"),
        ("0.0.0.0", "unspecified"), ("::", "unspecified"), ("224.0.0.251", "multicast"), ("ff02::1", "multicast"),
        ("100.64.0.1", "shared (carrier-grade NAT)"), ("240.0.0.1", "private"), ("198.18.0.1", "private"),
        ("::ffff:127.0.0.1", "loopback"), ("::ffff:169.254.169.254", "link-local"), ("::ffff:10.1.2.3", "private"),
        ("64:ff9b::7f00:1", "loopback"), ("64:ff9b::a9fe:a9fe", "link-local"), ("2002:7f00:1::", "loopback"),
        ("2002:c0a8:101::1", "private"), ("::127.0.0.1", "loopback"), ("fc00::1", "private"),
        ("8.8.8.8", None), ("1.1.1.1", None), ("2606:4700:4700::1111", None), ("151.101.0.223", None),
        ("::ffff:8.8.8.8", None), ("64:ff9b::808:808", None),
    ],
)  # fmt: skip
def test_refusal_reason(address: str, reason: str | None) -> None:
    assert refusal_reason(address) == reason


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:{port}/",
        "http://localhost:{port}/",
        "http://LOCALHOST.:{port}/",
        "http://127.0.0.1.:{port}/",
        "http://127.1:{port}/",
        "http://0x7f000001:{port}/",
        "http://0x7f.0.0.1:{port}/",
        "http://2130706433:{port}/",
        "http://0177.0.0.1:{port}/",
        "http://017700000001:{port}/",
        "http://0.0.0.0:{port}/",
        "http://0:{port}/",
        "http://[::1]:{port}/",
        "http://[::ffff:127.0.0.1]:{port}/",
        "http://[::ffff:7f00:1]:{port}/",
        "http://[0:0:0:0:0:ffff:127.0.0.1]:{port}/",
        "http://127.0.0.2:{port}/",
        "HTTP://127.0.0.1:{port}/secret",
    ],
)
async def test_loopback_in_every_spelling_is_refused(server: LocalServer, ctx: ToolContext, url: str) -> None:
    """A real server listens on 127.0.0.1: without allow_hosts, none of these reach it."""
    server.route("/", Reply(200, OK_PAGE, HTML))
    server.route("/secret", Reply(200, OK_PAGE, HTML))
    fetch = make_fetch(allow_hosts=())
    with pytest.raises(ToolError) as raised:
        await run_tool(fetch.tool(), ctx, url=url.format(port=server.port))
    message = str(raised.value)
    assert "web_fetch only reads public web sites" in message
    assert any(word in message for word in ("loopback", "unspecified")), message
    assert server.requests == []


def fake_dns(table: dict[str, list[str]]) -> object:
    async def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise OSError(f"unknown host {host}")
        return table[host]

    return resolve


@pytest.mark.parametrize(
    ("addresses", "reason"),
    [
        (["10.0.0.5"], "private"),
        (["169.254.169.254"], "link-local"),
        (["93.184.215.14", "127.0.0.1"], "loopback"),  # one bad address among good ones is enough
        (["fd00::1"], "private"),
        (["::ffff:192.168.0.1"], "private"),
        (["100.100.100.200"], "shared (carrier-grade NAT)"),
    ],
)
async def test_names_resolving_to_private_addresses_are_refused(addresses: list[str], reason: str) -> None:
    guard = AddressGuard(resolver=fake_dns({"innocent.example": addresses}))  # type: ignore[arg-type]
    with pytest.raises(BlockedAddress) as raised:
        await guard.addresses("innocent.example", 443)
    assert raised.value.reason == reason


async def test_allow_private_and_allow_hosts() -> None:
    dns = fake_dns({"wiki.corp.example": ["10.1.1.1"], "db.other.example": ["10.2.2.2"]})
    guard = AddressGuard(allow_hosts=["*.corp.example", "127.0.0.1"], resolver=dns)  # type: ignore[arg-type]
    assert await guard.addresses("wiki.corp.example", 80) == ["10.1.1.1"]
    assert await guard.addresses("127.0.0.1", 80) == ["127.0.0.1"]
    with pytest.raises(BlockedAddress):
        await guard.addresses("db.other.example", 80)
    with pytest.raises(BlockedAddress):
        await guard.addresses("127.0.0.2", 80)
    anything = AddressGuard(allow_private=True, resolver=dns)  # type: ignore[arg-type]
    assert await anything.addresses("db.other.example", 80) == ["10.2.2.2"]


async def test_the_connection_goes_to_the_checked_address(server: LocalServer, ctx: ToolContext) -> None:
    """The name is resolved once, checked, and that very address is connected to, so a
    second DNS answer (rebinding) has no say."""
    answers = iter([["127.0.0.1"], ["10.9.9.9"]])

    async def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    server.route("/", Reply(200, OK_PAGE, HTML))
    guard = AddressGuard(allow_hosts=["docs.trusted.test"], resolver=rebinding)
    fetch = WebFetch(WebClient(guard))
    outcome = await run_tool(fetch.tool(), ctx, url=f"http://docs.trusted.test:{server.port}/")
    assert "internal data" in outcome.text
    assert server.requests[0].headers["host"] == f"docs.trusted.test:{server.port}"


async def test_a_redirect_to_a_private_address_is_refused(
    server: LocalServer, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first answer for docs.site.test is (for this test) a public address; the
    redirect on the same host connects again and the name now resolves to the cloud
    metadata address: refused at the redirect, before anything is sent there."""
    from wyckoff_cli.tools.web import addresses

    real = addresses.refusal_reason
    monkeypatch.setattr(addresses, "refusal_reason", lambda a: None if a == "127.0.0.1" else real(a))
    answers = iter([["127.0.0.1"], ["169.254.169.254"]])

    async def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    fetch = WebFetch(WebClient(AddressGuard(resolver=rebinding)))
    server.route("/start", Reply(302, headers={"Location": "/admin"}))
    server.route("/admin", Reply(200, OK_PAGE, HTML))
    with pytest.raises(ToolError) as raised:
        await run_tool(fetch.tool(), ctx, url=f"http://docs.site.test:{server.port}/start")
    message = str(raised.value)
    assert (
        f"refused http://docs.site.test:{server.port}/admin (redirected from http://docs.site.test" in message
    )
    assert "169.254.169.254) is a link-local address" in message
    assert server.hits("/start") == 1 and server.hits("/admin") == 0


@pytest.mark.parametrize("target", ["http://site.test:{port}/x", "http://www.docs.site.test:{port}/x"])
async def test_a_redirect_to_another_host_is_never_connected_to(
    server: LocalServer, ctx: ToolContext, target: str
) -> None:
    dns = fake_dns({"www.site.test": ["127.0.0.1"], "site.test": ["127.0.0.1"]})
    guard = AddressGuard(allow_hosts=["*.site.test"], resolver=dns)  # type: ignore[arg-type]
    fetch = WebFetch(WebClient(guard))
    server.route("/start", Reply(302, headers={"Location": target.format(port=server.port)}))
    outcome = await run_tool(fetch.tool(), ctx, url=f"http://www.site.test:{server.port}/start")
    assert "on another host, which was not followed" in outcome.text
    assert server.hits("/x") == 0


async def test_a_redirect_to_the_metadata_service_is_not_followed(
    server: LocalServer, ctx: ToolContext
) -> None:
    fetch = make_fetch()
    server.route("/r", Reply(302, headers={"Location": "http://169.254.169.254/latest/meta-data/"}))
    outcome = await run_tool(fetch.tool(), ctx, url=server.url("/r"))
    assert "on another host, which was not followed" in outcome.text
    with pytest.raises(ToolError, match="link-local address"):
        await run_tool(fetch.tool(), ctx, url="http://169.254.169.254/latest/meta-data/")


async def test_unresolvable_host_is_a_clear_error(ctx: ToolContext) -> None:
    guard = AddressGuard(resolver=fake_dns({}))  # type: ignore[arg-type]
    fetch = WebFetch(WebClient(guard, FetchLimits(timeout=5)))
    with pytest.raises(ToolError, match="cannot resolve nowhere.invalid"):
        await run_tool(fetch.tool(), ctx, url="https://nowhere.invalid/")


# --------------------------------------------------------------------------- URLs


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("file:///etc/passwd", "only http and https"),
        ("ftp://example.com/", "only http and https"),
        ("gopher://example.com/", "only http and https"),
        ("javascript:alert(1)", "only http and https"),
        ("data:text/html,<b>x</b>", "only http and https"),
        ("example.com/page", "only http and https URLs can be fetched, not no scheme"),
        ("//example.com/page", "not no scheme"),
        ("http://", "has no host"),
        ("http://user:pw@example.com/", "user name or password"),
        ("http://example.com@127.0.0.1/", "user name or password"),
        ("http://good.example\\@evil.example/", "backslash"),
        ("http://exa mple.com/", "space"),
        ("http://example.com/\r\nHost: evil", "control character"),
        ("http://example.com:99999/", "not a valid URL"),
        ("http://ex_ample..com/", "not a valid domain name"),
        ("http://999.1.1.1/", "not a valid IPv4 address"),
        ("", "empty"),
    ],
)
async def test_bad_urls_are_refused_before_any_request(ctx: ToolContext, url: str, problem: str) -> None:
    with pytest.raises(BadURL, match=problem):
        canonical_url(url)
    with pytest.raises(ToolError, match="web_fetch: "):
        await make_fetch().run({"url": url}, ctx)


@pytest.mark.parametrize(
    ("url", "canonical", "host"),
    [
        ("HTTPS://Docs.Python.ORG/3/", "https://docs.python.org/3/", "docs.python.org"),
        ("https://docs.python.org./3/#frag", "https://docs.python.org/3/", "docs.python.org"),
        ("https://docs.python.org:443/", "https://docs.python.org/", "docs.python.org"),
        ("http://docs.python.org:8080", "http://docs.python.org:8080/", "docs.python.org"),
        (
            "https://bücher.example/straße?q=ä",
            "https://xn--bcher-kva.example/straße?q=ä",
            "xn--bcher-kva.example",
        ),
        ("http://[0:0::1]:81/x", "http://[::1]:81/x", "::1"),
        ("http://0x7f000001/", "http://127.0.0.1/", "127.0.0.1"),
        ("  https://example.com/a?b=c  ", "https://example.com/a?b=c", "example.com"),
    ],
)
def test_canonical_urls(url: str, canonical: str, host: str) -> None:
    parsed = canonical_url(url)
    assert (parsed.url, parsed.host) == (canonical, host)


# --------------------------------------------------------------------------- rules and modes


def evaluate(policy: ApprovalPolicy, url: str, root: Path) -> str:
    tool = make_fetch().tool()
    return policy.evaluate(tool, {"url": url}, ToolContext(workspace=root)).action


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("https://docs.python.org/3/library/json.html", True),
        ("http://docs.python.org/", True),
        ("https://DOCS.PYTHON.ORG/3/", True),
        ("https://docs.python.org./3/", True),
        ("https://docs.python.org:8443/x", True),
        ("https://python.org/", False),
        ("https://evil-docs.python.org/", False),
        ("https://docs.python.org.evil.example/", False),
        ("https://evil.example/docs.python.org", False),
        ("https://evil.example/?u=https://docs.python.org/", False),
        ("https://docs.python.org@evil.example/", False),
        ("https://evil.example#@docs.python.org", False),
        ("https://evil.example\\@docs.python.org/", False),
    ],
)
@pytest.mark.parametrize("rule", ["web_fetch(domain:docs.python.org)", "WebFetch(domain:docs.python.org)"])
def test_domain_allow_rule_table(root: Path, url: str, allowed: bool, rule: str) -> None:
    policy = ApprovalPolicy(allow=[rule])
    assert evaluate(policy, url, root) == ("allow" if allowed else "ask")


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/",
        "https://EVIL.example./x",
        "http://evil.example:8080/",
        "https://cdn.evil.example/payload",
        "https://a.b.evil.example/",
    ],
)
@pytest.mark.parametrize("rule", ["web_fetch(domain:*.evil.example)", "WebFetch(domain:*.evil.example)"])
def test_domain_deny_rule_covers_every_spelling(root: Path, url: str, rule: str) -> None:
    policy = ApprovalPolicy(mode="yolo", allow=["web_fetch(*)"], deny=[rule])
    assert evaluate(policy, url, root) == "deny"
    assert evaluate(policy, "https://notevil.example/", root) == "allow"
    for mode in ("default", "plan", "auto-edit"):
        assert evaluate(ApprovalPolicy(mode=mode, deny=[rule]), url, root) == "deny"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("rule", "url"),
    [
        ("web_fetch(domain:bücher.example)", "https://xn--bcher-kva.example/"),
        ("web_fetch(domain:bücher.example)", "https://BÜCHER.example./x"),
        ("web_fetch(domain:xn--bcher-kva.example)", "https://bücher.example/"),
        ("WebFetch(domain:*.bücher.example)", "https://cdn.xn--bcher-kva.example/"),
        ("web_fetch(domain:127.0.0.1)", "http://0x7f000001/"),
        ("web_fetch(domain:127.0.0.1)", "http://2130706433/"),
        ("web_fetch(domain:127.0.0.1)", "http://127.1/"),
        ("web_fetch(domain:127.0.0.1)", "http://0177.0.0.1/"),
        ("web_fetch(domain:[::1])", "http://[0:0::1]:81/"),
        ("web_fetch(domain:::1)", "http://[0:0::1]/"),
    ],
)
def test_domain_deny_rule_sees_the_canonical_host(root: Path, rule: str, url: str) -> None:
    """A deny rule holds against internationalised and numeric spellings of its host
    (the subject's host is the one the tool connects to, and the rule's host is
    normalised the same way)."""
    assert evaluate(ApprovalPolicy(mode="yolo", deny=[rule]), url, root) == "deny"
    assert evaluate(ApprovalPolicy(allow=[rule]), url, root) == "allow"


def test_always_never_saves_every_url_for_a_refused_url(root: Path) -> None:
    tool = make_fetch().tool()
    ctx = ToolContext(workspace=root)
    verdict = ApprovalPolicy().evaluate(tool, {"url": "https://evil.example\\@docs.python.org/"}, ctx)
    assert verdict.action == "ask" and verdict.rule is not None
    assert verdict.rule not in ("web_fetch", "web_fetch(*)") and "domain:" not in verdict.rule
    remembered = ApprovalPolicy()
    remembered.remember(verdict.rule)
    assert remembered.evaluate(tool, {"url": "https://evil.example/"}, ctx).action == "ask"
    assert remembered.evaluate(tool, {"url": "https://docs.python.org/"}, ctx).action == "ask"


def test_always_saves_the_domain_and_modes(root: Path) -> None:
    tool = make_fetch().tool()
    ctx = ToolContext(workspace=root)
    args = {"url": "https://Docs.Python.org/3/library/asyncio.html"}
    verdict = ApprovalPolicy().evaluate(tool, args, ctx)
    assert verdict.action == "ask" and verdict.rule == "web_fetch(domain:docs.python.org)"
    assert ApprovalPolicy(mode="plan").evaluate(tool, args, ctx).action == "ask"  # plan mode allows fetching
    assert ApprovalPolicy(mode="auto-edit").evaluate(tool, args, ctx).action == "ask"
    assert ApprovalPolicy(mode="yolo").evaluate(tool, args, ctx).action == "allow"
    assert ApprovalPolicy(allow=["web_fetch(*)"]).evaluate(tool, args, ctx).action == "allow"
    assert ApprovalPolicy(allow=["web_fetch"]).evaluate(tool, args, ctx).action == "allow"
    glob = ApprovalPolicy(allow=["web_fetch(https://docs.python.org/3/*)"])
    assert glob.evaluate(tool, args, ctx).action == "allow"
    assert glob.evaluate(tool, {"url": "https://docs.python.org/2/"}, ctx).action == "ask"
    remembered = ApprovalPolicy()
    remembered.remember(str(verdict.rule))
    assert remembered.evaluate(tool, {"url": "http://docs.python.org/3/x"}, ctx).action == "allow"
    assert remembered.evaluate(tool, {"url": "https://peps.python.org/"}, ctx).action == "ask"
    preview = tool.preview(args, ctx) if tool.preview else {}
    assert preview == {
        "kind": "fetch",
        "url": "https://docs.python.org/3/library/asyncio.html",
        "host": "docs.python.org",
        "rule": "web_fetch(domain:docs.python.org)",
    }


@pytest.mark.parametrize(
    "rule", ["web_fetch(domain:)", "web_fetch(domain:*)", "web_fetch(domain:a/b)", "web_fetch(domain:x@y)"]
)
def test_malformed_domain_rules_are_configuration_errors(rule: str) -> None:
    assert invalid_rules([rule]) and "domain: takes a host name" in invalid_rules([rule])[0]
