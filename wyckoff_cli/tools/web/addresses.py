"""Which addresses web_fetch may connect to, checked where the connection is made.

The check sits in the HTTP client's network backend: every TCP connection (the first
request and every redirect) resolves the host, refuses it when any of its addresses is
loopback, private, link-local (cloud metadata services live there), unspecified,
multicast, reserved or otherwise not public, and then connects to the address it
checked, so a DNS answer that changes between the check and the connection cannot
slip through. IPv6 forms that carry an IPv4 address (`::ffff:127.0.0.1`, NAT64, 6to4,
Teredo) are judged by the address they carry.

`allow_private` turns the check off; `allow_hosts` names hosts (`127.0.0.1`,
`intranet.example`, `*.corp.example`) that may be private. A guard given `settings`
reads both from it at every check, so a changed `[web]` applies without a restart.

`known_refusal(host)` answers before anything is sent, without DNS, for the hosts whose
answer is known from the name alone (an IP literal, `localhost`, `*.localhost`): a call
that would be refused is refused before any approval dialog.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from wyckoff_cli.tools.web.urls import host_matches

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressSettings(Protocol):
    """The two `[web]` settings the guard reads (storage.web_config.WebConfig has them)."""

    @property
    def allow_private(self) -> bool: ...
    @property
    def allow_hosts(self) -> list[str]: ...


Resolver = Callable[[str, int], Awaitable[list[str]]]

_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


class BlockedAddress(Exception):
    """A connection web_fetch refused to make: why, and the setting that allows it."""

    def __init__(self, host: str, address: str, reason: str) -> None:
        self.host, self.address, self.reason = host, address, reason
        shown = host if host == address else f"{host} ({address})"
        named = host.strip("[]").rstrip(".").lower()
        super().__init__(
            f"{shown} is a {reason} address: web_fetch only reads public web sites. "
            f'A person can allow it in the config: allow_hosts = ["{named}"] (or allow_private = '
            "true) under [web]; the change applies to the next fetch, no restart needed."
        )


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64 or (int(ip) >> 32 == 0 and int(ip) > 1):  # NAT64, IPv4-compatible ::a.b.c.d
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def refusal_reason(address: str | IPAddress) -> str | None:
    """Why `address` is not a public one ("loopback", "private", …), None when it is."""
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            return refusal_reason(inner)
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link-local"
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_multicast:
        return "multicast"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED:
        return "shared (carrier-grade NAT)"
    if ip.is_private:
        return "private"
    if ip.is_reserved:
        return "reserved"
    if not ip.is_global:
        return "non-public"
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses, as the operating system resolves them."""
    import anyio

    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class AddressGuard:
    """Decides, per host, whether a connection may be made and to which addresses."""

    def __init__(
        self,
        *,
        allow_private: bool = False,
        allow_hosts: Iterable[str] = (),
        resolver: Resolver = system_resolver,
        settings: Callable[[], AddressSettings] | None = None,
    ) -> None:
        self._allow_private = allow_private
        self._allow_hosts = tuple(allow_hosts)
        self.resolver = resolver
        self.settings = settings  # the current `[web]`, read at every check when given

    @property
    def allow_private(self) -> bool:
        return self.settings().allow_private if self.settings is not None else self._allow_private

    @property
    def allow_hosts(self) -> tuple[str, ...]:
        return tuple(self.settings().allow_hosts) if self.settings is not None else self._allow_hosts

    def trusted(self, host: str) -> bool:
        """Whether `host` may be private (allow_private, or named in allow_hosts)."""
        host = host.strip("[]").rstrip(".").lower()
        return self.allow_private or any(host_matches(pattern, host) for pattern in self.allow_hosts)

    def known_refusal(self, host: str) -> BlockedAddress | None:
        """The refusal of a connection to `host` when the name alone decides it (an IP
        literal, `localhost`, `*.localhost`: RFC 6761 loopback names), without DNS; None
        when it is allowed or only a lookup can tell."""
        bare = host.strip("[]").rstrip(".").lower()
        if self.trusted(bare):
            return None
        try:
            literal: IPAddress | None = ipaddress.ip_address(bare.split("%", 1)[0])
        except ValueError:
            literal = None
        if literal is not None:
            reason = refusal_reason(literal)
            return BlockedAddress(bare, str(literal), reason) if reason is not None else None
        if bare == "localhost" or bare.endswith(".localhost"):
            return BlockedAddress(bare, bare, "loopback")
        return None

    async def addresses(self, host: str, port: int) -> list[str]:
        """The checked addresses to connect to; raises `BlockedAddress`."""
        host = host.strip("[]")
        try:
            literal: IPAddress | None = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        if literal is not None:
            found = [str(literal)]
        else:
            try:
                found = await self.resolver(host, port)
            except OSError as exc:
                raise OSError(f"cannot resolve {host}: {exc.strerror or exc}") from None
        if not found:
            raise OSError(f"cannot resolve {host}: no addresses")
        if self.trusted(host):
            return found
        for address in found:
            reason = refusal_reason(address.split("%", 1)[0])
            if reason is not None:
                raise BlockedAddress(host, address, reason)
        return found


def guarded_backend(guard: AddressGuard) -> Any:
    """An httpcore network backend that connects only to addresses `guard` allows."""
    import httpcore2

    class GuardedBackend(httpcore2.AsyncNetworkBackend):
        def __init__(self) -> None:
            self._inner = httpcore2.AnyIOBackend()

        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore2.AsyncNetworkStream:
            error: Exception | None = None
            for address in await guard.addresses(host, port):
                try:
                    return await self._inner.connect_tcp(
                        address,
                        port,
                        timeout=timeout,
                        local_address=local_address,
                        socket_options=socket_options,
                    )
                except httpcore2.ConnectError as exc:  # try the host's next address
                    error = exc
            assert error is not None
            raise error

        async def connect_unix_socket(
            self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
        ) -> httpcore2.AsyncNetworkStream:
            raise BlockedAddress(path, path, "Unix socket")

        async def sleep(self, seconds: float) -> None:
            await self._inner.sleep(seconds)

    return GuardedBackend()
