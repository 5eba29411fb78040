"""`[shell] allowed_domains`: sandboxed commands reach only the listed host names,
through Wyckoff's proxy, on real processes in the real sandbox (bubblewrap, curl,
python inside). Every name resolves, through the proxy's resolver, to a server on
127.0.0.1 that records who connects: the allowed name to one, every other name to a
second that must never see a connection."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.storage.config import Config
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.net_proxy import Refused, parse_request, system_resolve
from wyckoff_cli.tools.permissions.domains import normal_host, parse_allowed_domains
from wyckoff_cli.tools.permissions.sandbox import SandboxMode, ShellSettings, probe, sandbox_run
from wyckoff_cli.tools.process import OutputCapture, run_process
from wyckoff_cli.tools.shell import make_shell_tools

from .conftest import run_tool

WHY_NOT = probe()
needs_sandbox = pytest.mark.skipif(WHY_NOT is not None, reason=f"the sandbox cannot start here: {WHY_NOT}")
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
PY = sys.executable


@dataclass
class Recorder:
    """A loopback HTTP server that answers every request with its name and keeps the heads."""

    name: str
    heads: list[bytes] = field(default_factory=list)
    connections: int = 0
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        self.heads.append(head)
        body = f"hello from {self.name}\n".encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
        )
        await writer.drain()
        writer.close()


@dataclass
class Net:
    allowed: Recorder
    evil: Recorder
    asked: list[tuple[str, int]]
    workspace: Path
    entries: tuple[str, ...] = ("allowed.test", "*.wild.test", "odd.test:8443")

    async def run(self, command: str, mode: SandboxMode = "workspace-write") -> tuple[int | None, str]:
        settings = ShellSettings(sandbox=mode, allowed_domains=parse_allowed_domains(self.entries))
        sandbox = sandbox_run(settings, self.workspace)
        assert sandbox is not None

        async def resolve(host: str, port: int) -> tuple[str, int]:
            self.asked.append((host, port))
            good = host in ("allowed.test", "a.b.wild.test", "odd.test")
            return "127.0.0.1", (self.allowed if good else self.evil).port

        result = await run_process(
            command, cwd=self.workspace, env=None, timeout=60, emit=lambda _: None,
            capture=OutputCapture(None, "net"), sandbox=replace(sandbox, resolve=resolve),
        )  # fmt: skip
        return result.exit_code, result.output


@pytest.fixture
async def net(root: Path) -> AsyncIterator[Net]:
    allowed, evil = Recorder("allowed"), Recorder("evil")
    servers = []
    for recorder in (allowed, evil):
        server = await asyncio.start_server(recorder.handle, "127.0.0.1", 0)
        recorder.port = server.sockets[0].getsockname()[1]
        servers.append(server)
    yield Net(allowed, evil, [], root)
    for server in servers:
        server.close()


ALLOWED_FORMS = [
    ("plain http", "curl -sS http://allowed.test/x"),
    ("CONNECT tunnel", "curl -sS -p http://allowed.test:443/"),
    ("case and trailing dot", "curl -sS -p http://ALLOWED.Test.:443/"),
    ("a subdomain under *.wild.test", "curl -sS http://a.b.wild.test/"),
    ("the port an entry names", "curl -sS -p http://odd.test:8443/"),
    ("python urllib", f"{PY} -c \"import urllib.request as u; print(u.urlopen('http://allowed.test/').read().decode())\""),
]  # fmt: skip


@needs_sandbox
@needs_curl
@pytest.mark.parametrize(("form", "command"), ALLOWED_FORMS, ids=[f for f, _ in ALLOWED_FORMS])
async def test_listed_hosts_are_reached_through_the_proxy(net: Net, form: str, command: str) -> None:
    code, output = await net.run(command)
    assert code == 0, output
    assert "hello from allowed" in output
    assert net.evil.connections == 0


def _raw(request: str) -> str:
    """A python one-liner sending `request` straight to the proxy's port and printing the answer."""
    return (
        f"{PY} -c \"import socket; s=socket.create_connection(('127.0.0.1', 3128)); "
        f's.sendall({request!r}.encode()); print(s.recv(4096).decode())"'
    )


def _connect(target: str, family: str = "AF_INET") -> str:
    return (
        f'{PY} -c "import socket; s=socket.socket(socket.{family}); s.settimeout(5); '
        f"s.connect({target}); print('CONNECTED')\""
    )


# (form, command, what the output must say)
BYPASS_FORMS = [
    ("direct IP through the proxy", "curl -sS http://127.0.0.1:{evil}/", "IP address"),
    ("direct IP, proxy skipped", "curl -sS --noproxy '*' http://127.0.0.1:{allowed}/", "Couldn't connect"),
    ("proxy variables unset", "env -u http_proxy -u HTTP_PROXY -u all_proxy -u ALL_PROXY curl -sS http://allowed.test/",
     "Could not resolve host"),
    ("another port of a listed host", "curl -sS -p http://allowed.test:{evil}/", "port"),
    ("port 8443 of an entry without it", "curl -sS -p http://allowed.test:8443/", "port 8443"),
    ("raw socket to loopback", _connect("('127.0.0.1', {allowed})"), "Connection refused"),
    ("raw socket to a public address", _connect("('1.1.1.1', 80)"), "unreachable"),
    ("DNS lookup", f"{PY} -c \"import socket; print(socket.getaddrinfo('allowed.test', 80))\"", "gaierror"),
    ("DNS lookup of a real name", "getent hosts example.com || echo NO-ANSWER", "NO-ANSWER"),
    ("IPv6 loopback through the proxy", "curl -sS 'http://[::1]:{allowed}/'", "IP address"),
    ("IPv4-mapped IPv6 by CONNECT", "curl -sS -p 'http://[::ffff:127.0.0.1]:{allowed}/'", "IP address"),
    ("raw IPv6 socket", _connect("('::1', {allowed})", "AF_INET6"), "Error"),
    ("decimal IPv4 by curl", "curl -sS http://2130706433:{allowed}/", "IP address"),
    ("hex IPv4 by curl", "curl -sS http://0x7f.0.0.1:{allowed}/", "IP address"),
    ("decimal IPv4", _raw("CONNECT 2130706433:{allowed} HTTP/1.1\r\n\r\n"), "not a host name"),
    ("hex IPv4", _raw("GET http://0x7f.0.0.1:{allowed}/ HTTP/1.1\r\n\r\n"), "not a host name"),
    ("short IPv4", _raw("CONNECT 127.1:{allowed} HTTP/1.1\r\n\r\n"), "not a host name"),
    ("CONNECT to a host not listed", "curl -sS -p http://evil.test:443/", "evil.test is not in"),
    ("plain http to a host not listed", "curl -sS http://evil.test/", "evil.test is not in"),
    ("Host header mismatch", "curl -sS -H 'Host: evil.test' http://allowed.test/", "does not match"),
    ("two Host headers", _raw("GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nHost: evil.test\r\n\r\n"),
     "more than one Host"),
    ("absolute URI to another host", _raw("GET http://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n"), "403"),
    ("origin-form request", _raw("GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"), "http:// URIs only"),
    ("https URI without CONNECT", _raw("GET https://allowed.test/ HTTP/1.1\r\n\r\n"), "without CONNECT"),
    ("userinfo in the URI", _raw("GET http://allowed.test@evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n"),
     "userinfo"),
    ("userinfo by curl", "curl -sS http://allowed.test@evil.test/", "evil.test is not in"),
    ("userinfo in CONNECT", _raw("CONNECT allowed.test@evil.test:443 HTTP/1.1\r\n\r\n"), "expected host:port"),
    ("CONNECT without a port", _raw("CONNECT allowed.test HTTP/1.1\r\n\r\n"), "expected host:port"),
    ("a subdomain of an exact entry", "curl -sS http://sub.allowed.test/", "sub.allowed.test is not in"),
    ("the parent of a wildcard entry", "curl -sS http://wild.test/", "wild.test is not in"),
    ("a listed name as prefix", "curl -sS http://allowed.test.evil.test/", "is not in"),
    ("a listed name as suffix", "curl -sS http://evilallowed.test/", "evilallowed.test is not in"),
    ("a listed name with a trailing junk dot", "curl -sS -p 'http://allowed.test..:443/'", "not a host name"),
    ("percent-encoded host", _raw("GET http://allowed%2etest/ HTTP/1.1\r\n\r\n"), "not a host name"),
    ("unicode look-alike", "curl -sS http://аllowed.test/", "is not in"),
    ("a backslash authority", _raw("GET http://allowed.test\\\\@evil.test/ HTTP/1.1\r\n\r\n"), "403"),
]  # fmt: skip


@needs_sandbox
@needs_curl
@pytest.mark.parametrize(("form", "command", "said"), BYPASS_FORMS, ids=[f for f, _, _ in BYPASS_FORMS])
async def test_every_bypass_is_refused_and_reaches_no_server(
    net: Net, form: str, command: str, said: str
) -> None:
    code, output = await net.run(command.replace("{allowed}", str(net.allowed.port)).replace(
        "{evil}", str(net.evil.port)))  # fmt: skip
    assert said in output, output
    assert "hello from" not in output and "CONNECTED" not in output
    assert net.evil.connections == 0 and net.allowed.connections == 0
    assert all(host in ("allowed.test", "a.b.wild.test", "odd.test") for host, _ in net.asked)


@needs_sandbox
@needs_curl
async def test_the_read_only_sandbox_reaches_listed_hosts_only_too(net: Net) -> None:
    code, output = await net.run(
        "curl -sS -p http://allowed.test:443/; curl -sS http://evil.test/", "read-only"
    )
    assert "hello from allowed" in output and "evil.test is not in" in output
    assert net.evil.connections == 0


@needs_sandbox
@needs_curl
async def test_a_refusal_is_named_in_the_commands_output(net: Net) -> None:
    code, output = await net.run("curl -sS -p http://evil.test:443/; curl -sS http://allowed.test/")
    assert "hello from allowed" in output
    assert "[sandbox network: refused evil.test is not in [shell] allowed_domains" in output
    assert "allowed.test, *.wild.test, odd.test:8443" in output


@needs_sandbox
@needs_curl
async def test_the_run_shell_tool_applies_the_configured_list(ctx: ToolContext) -> None:
    shell = ShellSettings(sandbox="workspace-write", allowed_domains=parse_allowed_domains(["pypi.org"]))
    tool, _, _ = make_shell_tools(shell)
    outcome = await run_tool(tool, ctx, command="curl -sS http://example.com/")
    assert (
        "[sandbox network: refused example.com is not in [shell] allowed_domains (pypi.org)" in outcome.text
    )


def test_the_setting_comes_from_the_user_config_and_bad_entries_are_named(root: Path) -> None:
    from wyckoff_cli.session.shell import shell_settings

    config = Config()
    config.shell.allowed_domains = ["PyPI.org.", "*.github.com", "example.com:8443"]
    allow = shell_settings(config, root).allowed_domains
    assert allow is not None and str(allow) == "pypi.org, *.github.com, example.com:8443"
    assert shell_settings(Config(), root).allowed_domains is None
    config.shell.allowed_domains = ["10.0.0.1"]
    with pytest.raises(ConfigError, match="an IP address"):
        shell_settings(config, root)


@pytest.mark.parametrize(
    "entry", ["10.0.0.1", "[::1]", "ex*ample.com", "*", "*.", "user@example.com", "example.com:0",
              "example.com:http", "exa mple.com", "-bad.com", "a..b", "http://example.com", "127.1"],
)  # fmt: skip
def test_bad_entries_are_config_errors(entry: str) -> None:
    with pytest.raises(ConfigError, match=r"\[shell\] allowed_domains"):
        parse_allowed_domains([entry])


@pytest.mark.parametrize(
    ("text", "normal"),
    [("Example.COM.", "example.com"), ("bücher.de", "xn--bcher-kva.de"), ("127.0.0.1", None), ("::1", None),
     ("[::ffff:7f00:1]", None), ("0x7f000001", None), ("2130706433", None), ("a_b.com", None), ("", None),
     ("a..b", None), ("example.com..", None), ("x" * 64 + ".com", None)],
)  # fmt: skip
def test_host_names_compare_in_one_normal_form(text: str, normal: str | None) -> None:
    assert normal_host(text) == normal


def test_the_upstream_request_names_only_the_checked_host() -> None:
    head = b"GET http://allowed.test:80/p?q HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: x\r\n\r\n"
    method, host, port, upstream = parse_request(head)
    assert (method, host, port) == ("GET", "allowed.test", 80)
    assert upstream.startswith(b"GET /p?q HTTP/1.1\r\n")
    assert b"Proxy-Authorization" not in upstream and b"Connection: close" in upstream


async def test_the_system_resolver_refuses_names_of_local_addresses() -> None:
    with pytest.raises(Refused, match="local or private address"):
        await system_resolve("localhost", 80)
