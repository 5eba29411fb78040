"""`[shell] allowed_domains`: the host names sandboxed commands may reach through the
sandbox's proxy (tools/net_proxy.py), and the one place that decides a request.

- An entry is a host name (`pypi.org`), optionally with a port (`example.com:8443`),
  or `*.` and a name (`*.github.com`): any subdomain at any depth, not the name
  itself. Without a port an entry allows ports 80 and 443.
- Names compare without case and without a trailing dot (`PyPI.org.` is `pypi.org`),
  after IDNA encoding of non-ASCII names. Anything else is exact: no prefix, suffix or
  substring matching.
- IP addresses are never allowed (by the list nor as a request's target, in any
  spelling: dotted, IPv6, bracketed, mapped, decimal or hex), so the list is by name.
- A name with userinfo (`allowed.com@evil`), a port that is not a number, an empty
  label or a character outside letters, digits, `-` and `.` is no host name: refused.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from wyckoff_cli.core.errors import ConfigError

DEFAULT_PORTS = (80, 443)
_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")
_NUMERIC = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")


def normal_host(text: str) -> str | None:
    """`text` as a host name compared by the allow-list (lower case, no trailing dot,
    IDNA), or None when it is no host name (an IP address in any spelling included)."""
    name = text.strip()
    if name.endswith("."):
        name = name[:-1]
    if not name or len(name) > 253:
        return None
    try:
        name = name.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None
    labels = name.split(".")
    if not all(_LABEL.match(label) for label in labels):
        return None
    if _is_ip(name) or all(_NUMERIC.match(label) for label in labels):
        return None  # 127.1, 0x7f.0.0.1, 2130706433: what inet_aton would read as an address
    return name


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return False
    return True


def split_authority(authority: str) -> tuple[str, int | None] | None:
    """(host, port or None) of `host[:port]` / `[v6]:port`; None for userinfo, a bad port
    or an empty host."""
    if "@" in authority or not authority or any(c in authority for c in "/\\?# \t"):
        return None
    host, port_text = authority, ""
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return None
        host, rest = authority[: end + 1], authority[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:]
        if rest and not port_text:
            return None
    elif ":" in authority:
        host, port_text = authority.rsplit(":", 1)
        if not port_text or ":" in host:
            return None
    if not host:
        return None
    if not port_text:
        return host, None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return host, int(port_text)


@dataclass(frozen=True)
class AllowedDomain:
    name: str  # normal form; for a wildcard the parent name (`github.com` for `*.github.com`)
    wildcard: bool
    ports: tuple[int, ...]

    def matches(self, host: str, port: int) -> bool:
        if port not in self.ports:
            return False
        if self.wildcard:
            return host.endswith("." + self.name)
        return host == self.name

    def __str__(self) -> str:
        shown = f"*.{self.name}" if self.wildcard else self.name
        return shown if self.ports == DEFAULT_PORTS else f"{shown}:{self.ports[0]}"


@dataclass(frozen=True)
class DomainAllowList:
    """The parsed `[shell] allowed_domains`."""

    domains: tuple[AllowedDomain, ...]

    def refusal(self, host: str, port: int) -> str | None:
        """Why a request for `host:port` is refused, or None when it is allowed."""
        name = normal_host(host)
        if name is None:
            if _is_ip(host):
                return f"{host} is an IP address; the sandbox's network allows host names only"
            return f"{host!r} is not a host name"
        if any(d.matches(name, port) for d in self.domains):
            return None
        listed = ", ".join(str(d) for d in self.domains) or "none"
        if any(d.matches(name, p) for d in self.domains for p in (*DEFAULT_PORTS, *d.ports)):
            return f"port {port} of {name} is not allowed by [shell] allowed_domains ({listed})"
        return f"{name} is not in [shell] allowed_domains ({listed})"

    def __str__(self) -> str:
        return ", ".join(str(d) for d in self.domains)


def parse_allowed_domains(entries: Iterable[str]) -> DomainAllowList:
    """The allow-list from `[shell] allowed_domains`; a bad entry is a `ConfigError`."""
    found: list[AllowedDomain] = []
    for entry in entries:
        if not isinstance(entry, str):
            raise ConfigError(f"[shell] allowed_domains: {entry!r} is not a string")
        text = entry.strip()
        wildcard = text.startswith("*.")
        parts = split_authority(text[2:] if wildcard else text)
        name = normal_host(parts[0]) if parts is not None else None
        if parts is None or name is None or "*" in text[2 if wildcard else 0 :]:
            why = (
                "an IP address (the list is by host name)"
                if parts and _is_ip(parts[0])
                else "not a host name"
            )
            raise ConfigError(
                f"[shell] allowed_domains: {entry!r} is {why}; write `example.com`, `example.com:8443` "
                "or `*.example.com`"
            )
        ports = (parts[1],) if parts[1] is not None else DEFAULT_PORTS
        found.append(AllowedDomain(name, wildcard, ports))
    return DomainAllowList(tuple(found))
