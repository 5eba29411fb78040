"""URLs as web_fetch and the permission rules see them: one parser, one canonical form.

A URL is accepted only when every parser would read it the same way: http or https,
a host, no user name or password, no backslashes, spaces or control characters. The
host is lower-cased, IDNA-encoded and stripped of a trailing dot, so a rule written for
`docs.python.org` also covers `HTTPS://DOCS.Python.org./`. The tool fetches exactly the
canonical URL that the rules were matched against.

Rule patterns for web_fetch (`web_fetch(PATTERN)`):

- `domain:HOST` — any URL on exactly that host (any scheme, port and path);
- `domain:*.HOST` — HOST itself and every sub-domain of it;
- `*` — every URL;
- anything else — a glob over the canonical URL (`https://docs.python.org/3/*`).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

_FORBIDDEN = re.compile(r"[\\\s\x00-\x1f\x7f]")
_HOST_CHARS = re.compile(r"[a-z0-9.\-_]+")
_NUMERIC_HOST = re.compile(r"[0-9a-fx.]+")
_NUMERIC_LABEL = re.compile(r"0x[0-9a-f]*|[0-9]+")


class BadURL(ValueError):
    """A URL web_fetch will not fetch; the message says why."""


@dataclass(frozen=True, slots=True)
class WebURL:
    url: str  # canonical, what is fetched
    scheme: str
    host: str  # lower-case ASCII (IDNA), no trailing dot; IPv6 without brackets
    port: int


def canonical_url(raw: str) -> WebURL:
    """Parse and normalise `raw`, or raise `BadURL` saying what is wrong."""
    text = raw.strip()
    if not text:
        raise BadURL("the URL is empty")
    if _FORBIDDEN.search(text):
        raise BadURL(f"{text!r} contains a backslash, a space or a control character; percent-encode them")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise BadURL(f"{text!r} is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        shown = f"{scheme}:" if scheme else "no scheme"
        raise BadURL(f"only http and https URLs can be fetched, not {shown} ({text!r})")
    if "@" in parts.netloc:
        raise BadURL(f"{text!r} has a user name or password in it; those are not sent")
    host = _canonical_host(parts.hostname or "", text)
    default = 443 if scheme == "https" else 80
    port = default if port is None else port
    netloc = f"[{host}]" if ":" in host else host
    if port != default:
        netloc += f":{port}"
    path = parts.path or "/"
    return WebURL(urlunsplit((scheme, netloc, path, parts.query, "")), scheme, host, port)


def _canonical_host(host: str, text: str) -> str:
    host = host.rstrip(".").lower()
    if not host:
        raise BadURL(f"{text!r} has no host")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    if _NUMERIC_HOST.fullmatch(host) and _NUMERIC_LABEL.fullmatch(host.rsplit(".", 1)[-1]):
        # Legacy IPv4 spellings (127.1, 0x7f000001, 2130706433, 0177.0.0.1) become dotted.
        try:
            return socket.inet_ntoa(socket.inet_aton(host))
        except OSError:
            raise BadURL(f"{text!r}: {host!r} is not a valid IPv4 address") from None
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError:
        raise BadURL(f"{text!r}: the host name {host!r} is not a valid domain name") from None
    if not _HOST_CHARS.fullmatch(ascii_host) or ".." in ascii_host:
        raise BadURL(f"{text!r}: the host name {host!r} is not a valid domain name")
    return ascii_host


def host_of(raw: str) -> str | None:
    """The canonical host of `raw`, or None when it is not a URL web_fetch accepts."""
    try:
        return canonical_url(raw).host
    except BadURL:
        return None


def host_matches(pattern: str, host: str) -> bool:
    """`docs.python.org` matches only that host; `*.python.org` also matches
    `python.org` and every sub-domain."""
    pattern = pattern.strip().rstrip(".").lower()
    if pattern.startswith("*."):
        base = _normal_pattern_host(pattern[2:])
        return host == base or host.endswith("." + base)
    return host == _normal_pattern_host(pattern)


def _normal_pattern_host(text: str) -> str:
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        pass
    try:
        return text.encode("idna").decode("ascii")
    except UnicodeError:
        return text


def suggest_url_rule(tool: str, raw: str) -> str:
    """What "always" saves for a fetch: the URL's domain (`web_fetch(domain:HOST)`)."""
    host = host_of(raw)
    return f"{tool}(domain:{host})" if host else tool


def url_for_rules(raw: str) -> str:
    """What rules match a web_fetch call against: the canonical URL (the raw text when
    it is not a URL web_fetch accepts; the tool refuses those anyway)."""
    try:
        return canonical_url(raw).url
    except BadURL:
        return raw.strip()


def check_domain_pattern(pattern: str) -> str | None:
    """What is wrong with a `domain:` pattern (None when it is fine or not one)."""
    if not pattern.startswith("domain:"):
        return None
    host = pattern.removeprefix("domain:").strip()
    bare = host.removeprefix("*.")
    if not bare or any(c in bare for c in "*/\\@?# "):
        return f"domain: takes a host name such as docs.python.org or *.python.org, not {host!r}"
    return None
