"""The sandbox's network allow-list (`[shell] allowed_domains`): an HTTP proxy on a Unix
socket, outside the sandbox, that a sandboxed command reaches through the forwarder
inside (sandbox_forwarder.py); the sandbox's own network namespace has nothing else.

- `CONNECT host:port` (HTTPS, or any TCP by name) and absolute-URI `http://host/…`
  requests only, each checked by `DomainAllowList.refusal` (permissions/domains.py):
  no userinfo, no IP address, a `Host:` header that names the same host, and one
  request per connection (`Connection: close` upstream), so every byte a command
  sends goes to the one host that was checked.
- Names are resolved here, by `resolve` (the system's resolver by default, which
  refuses a name resolving to a loopback, private or link-local address: a listed name
  pointing at this machine or its network is no way in). Tests pass their own.
- Every refusal is answered `403` with the reason in the body and kept in
  `refusals`, which `run_process` adds to the command's output.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from wyckoff_cli.tools.permissions.domains import DomainAllowList, normal_host, split_authority
from wyckoff_cli.tools.permissions.sandbox import SandboxRun

Resolver = Callable[[str, int], Awaitable[tuple[str, int]]]
PROXY_PORT = 3128  # inside the sandbox's own network namespace
PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
_HEAD_LIMIT = 64 * 1024
_HEAD_TIMEOUT = 30.0
_DROPPED_HEADERS = {"proxy-connection", "proxy-authorization", "connection", "keep-alive"}
FORWARDER = Path(__file__).with_name("sandbox_forwarder.py")


class Refused(Exception):
    """A request the proxy does not forward; the message says why."""


async def system_resolve(host: str, port: int) -> tuple[str, int]:
    """The first public address of `host`; Refused when it has only local or private ones."""
    loop = asyncio.get_running_loop()
    try:
        found = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise Refused(f"{host} cannot be resolved ({exc})") from None
    for *_, address in found:
        ip = ipaddress.ip_address(address[0])
        if ip.is_global:
            return str(ip), port
    shown = ", ".join(sorted({str(a[4][0]) for a in found}))
    raise Refused(f"{host} resolves to {shown}, a local or private address")


@dataclass
class NetworkProxy:
    allow: DomainAllowList
    resolve: Resolver = system_resolve
    refusals: list[str] = field(default_factory=list)
    _server: asyncio.AbstractServer | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self, path: Path) -> None:
        self._server = await asyncio.start_unix_server(self._accept, path=str(path), limit=_HEAD_LIMIT)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def note(self) -> str:
        """The refusals, one line for the command's output ("" when none)."""
        if not self.refusals:
            return ""
        shown = list(dict.fromkeys(self.refusals))
        more = f" (and {len(shown) - 5} more)" if len(shown) > 5 else ""
        return (
            f"[sandbox network: refused {'; '.join(shown[:5])}{more}. Sandboxed commands reach only "
            f"[shell] allowed_domains ({self.allow or 'none'}), through the sandbox's proxy]"
        )

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT)
        except (asyncio.LimitOverrunError, asyncio.IncompleteReadError, TimeoutError, ValueError):
            return
        try:
            method, host, port, upstream_head = parse_request(head)
            refusal = self.allow.refusal(host, port)
            if refusal is not None:
                raise Refused(refusal)
            name = normal_host(host)
            assert name is not None  # refusal() refuses what is no host name
            address = await self.resolve(name, port)
        except Refused as exc:
            self.refusals.append(str(exc))
            await _answer(writer, "403 Forbidden", f"wyckoff sandbox: refused: {exc}\n")
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*address)
        except OSError as exc:
            await _answer(
                writer, "502 Bad Gateway", f"wyckoff sandbox: {host}:{port} cannot be reached: {exc}\n"
            )
            return
        try:
            if method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                up_writer.write(upstream_head)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()


def parse_request(head: bytes) -> tuple[str, str, int, bytes]:
    """(method, host, port, the head to send upstream) of a request the proxy may
    forward, or Refused saying why not."""
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise Refused("a request the proxy cannot read")
    method, target, version = parts
    headers = [line for line in lines[1:] if line]
    if method == "CONNECT":
        found = split_authority(target)
        if found is None or found[1] is None:
            raise Refused(f"CONNECT {target!r}: expected host:port")
        return method, found[0], found[1], b""
    if not target.lower().startswith("http://"):
        kind = "an https:// URI without CONNECT" if target.lower().startswith("https://") else repr(target)
        raise Refused(f"{method} {kind}: the proxy forwards CONNECT host:port and http:// URIs only")
    rest = target[7:]
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, path = rest[:cut], rest[cut:]
    found = split_authority(authority)
    if found is None:
        raise Refused(f"{target!r} does not name one host (userinfo, or a bad port)")
    host, port = found[0], found[1] or 80
    sent = [h for h in headers if h.split(":", 1)[0].strip().lower() == "host"]
    if len(sent) > 1:
        raise Refused(f"{target!r}: more than one Host header")
    if sent:
        claimed = split_authority(sent[0].split(":", 1)[1].strip())
        if claimed is None or normal_host(claimed[0]) != normal_host(host) or (claimed[1] or 80) != port:
            raise Refused(
                f"the Host header {sent[0].split(':', 1)[1].strip()!r} does not match {authority!r}"
            )
    kept = [h for h in headers if h.split(":", 1)[0].strip().lower() not in _DROPPED_HEADERS]
    if not path.startswith("/"):
        path = "/" + path
    upstream = "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close", "", ""])
    return method, host, port, upstream.encode("latin-1")


async def _answer(writer: asyncio.StreamWriter, status: str, body: str) -> None:
    data = body.encode("utf-8")
    writer.write(
        f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {len(data)}\r\n"
        f"X-Wyckoff-Sandbox: refused\r\nConnection: close\r\n\r\n".encode("ascii")
        + data
    )
    await writer.drain()


async def _pipe(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            target.write(data)
            await target.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if target.can_write_eof():
                target.write_eof()


@dataclass
class ProxiedRun:
    """One command's sandbox with the proxy: the run (the socket's folder bound in),
    the command line wrapped by the forwarder, and its environment."""

    run: SandboxRun
    proxy: NetworkProxy
    socket: Path

    def argv(self, argv: Sequence[str]) -> list[str]:
        return [sys.executable, "-I", "-S", str(FORWARDER), str(self.socket), str(PROXY_PORT), "--", *argv]

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        kept = {
            k: v
            for k, v in env.items()
            if k.lower() not in ("no_proxy", *(v.lower() for v in PROXY_VARIABLES))
        }
        return kept | dict.fromkeys(PROXY_VARIABLES, f"http://127.0.0.1:{PROXY_PORT}")


@contextlib.asynccontextmanager
async def proxied(run: SandboxRun) -> AsyncIterator[ProxiedRun | None]:
    """The proxy for one sandboxed command when it has an allow-list and not the whole
    network (None otherwise), stopped and its socket removed when the command ends."""
    if run.network or run.allowed_domains is None:
        yield None
        return
    folder = Path(os.path.realpath(tempfile.mkdtemp(prefix="wyckoff-net-")))
    path = folder / "proxy.sock"
    proxy = NetworkProxy(run.allowed_domains, run.resolve or system_resolve)
    try:
        await proxy.start(path)
        yield ProxiedRun(replace(run, proxy_folder=folder), proxy, path)
    finally:
        await proxy.close()
        shutil.rmtree(folder, ignore_errors=True)
