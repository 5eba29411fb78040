"""One GET for web_fetch: httpx (httpx2, the one the provider SDKs bring) behind the
address guard, redirects followed by hand so each hop is checked, a deadline for the
whole fetch, and a cap on the (decompressed) body.

- Redirects: at most `max_redirects`; each new URL is parsed and canonicalised like the
  first, and every connection is checked by the address guard again. Only redirects on
  the same host are followed (scheme and port may change): the tool never connects to
  a host the permission rules did not see. A redirect to another host (`www.` added or
  dropped included) is returned instead, so the model fetches it with its own call and
  the person approves that domain.
- Compression: gzip and deflate always, brotli through the `brotli` package (httpx's
  `brotli` extra), zstd where the Python has it.
- Proxies: environment proxy settings are not used, so the address guard sees the real
  destination.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from wyckoff_cli import __version__
from wyckoff_cli.tools.web.addresses import AddressGuard, BlockedAddress, guarded_backend
from wyckoff_cli.tools.web.urls import BadURL, WebURL, canonical_url

USER_AGENT = f"Wyckoff/{__version__} (terminal coding assistant; web_fetch)"
ACCEPT = (
    "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,"
    "application/json;q=0.9,application/pdf;q=0.8,*/*;q=0.5"
)
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class FetchFailed(Exception):
    """A fetch that did not produce a page; the message is for the model."""


@dataclass(frozen=True, slots=True)
class FetchLimits:
    max_bytes: int = 5_000_000
    timeout: float = 30.0  # seconds for the whole fetch, redirects included
    connect_timeout: float = 10.0
    max_redirects: int = 5


@dataclass(frozen=True, slots=True)
class RawPage:
    url: str  # the final URL
    status: int
    reason: str
    content_type: str  # the media type, lower case, without parameters ("" when absent)
    charset: str | None  # from the Content-Type header
    body: bytes
    redirects: tuple[str, ...] = ()  # the URLs before the final one, in order
    elsewhere: str | None = None  # a redirect to another host that was not followed
    headers: dict[str, str] = field(default_factory=dict)


def _media_type(value: str) -> tuple[str, str | None]:
    main, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, val = param.strip().partition("=")
        if name.strip().lower() == "charset" and val.strip():
            charset = val.strip().strip("\"'").lower()
    return main.strip().lower(), charset


def _size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 1_000_000 else f"{n / 1000:.0f} KB"


class WebClient:
    """Fetches pages for web_fetch: a client per fetch (nothing is shared between
    loops or sessions), one SSL context for all of them."""

    def __init__(self, guard: AddressGuard, limits: FetchLimits | None = None) -> None:
        self.guard = guard
        self.limits = limits or FetchLimits()
        self._ssl: Any = None

    def _client(self) -> Any:
        import httpcore2
        import httpx2

        if self._ssl is None:  # loading the trust store takes ~15-30 ms: once per session
            self._ssl = httpx2.create_ssl_context()
        transport = httpx2.AsyncHTTPTransport(verify=self._ssl, trust_env=False, retries=0)
        # httpx has no public way to give its connection pool a network backend; the
        # pool is replaced by one with the guarded backend and the same SSL context.
        transport._pool = httpcore2.AsyncConnectionPool(
            ssl_context=self._ssl,
            max_connections=4,
            max_keepalive_connections=2,
            network_backend=guarded_backend(self.guard),
        )
        timeout = httpx2.Timeout(self.limits.timeout, connect=self.limits.connect_timeout)
        headers = {"User-Agent": USER_AGENT, "Accept": ACCEPT}
        return httpx2.AsyncClient(
            transport=transport, timeout=timeout, headers=headers, follow_redirects=False, trust_env=False
        )

    async def get(self, url: WebURL) -> RawPage:
        try:
            async with asyncio.timeout(self.limits.timeout):
                return await self._get(url)
        except TimeoutError:
            raise FetchFailed(
                f"fetching {url.url} took longer than {self.limits.timeout:g} seconds and was stopped"
            ) from None

    async def _get(self, url: WebURL) -> RawPage:
        import httpx2

        chain: list[str] = []
        current = url
        async with self._client() as client:
            while True:
                try:
                    async with client.stream("GET", current.url) as response:
                        status = response.status_code
                        location = response.headers.get("location")
                        if status in _REDIRECTS and location:
                            target = self._redirect_target(current, location, chain)
                            if target.host != current.host:
                                return RawPage(
                                    current.url, status, response.reason_phrase, "", None, b"",
                                    tuple(chain), elsewhere=target.url,
                                )  # fmt: skip
                            chain.append(current.url)
                            current = target
                            continue
                        body = await self._read(response, current)
                        media, charset = _media_type(response.headers.get("content-type", ""))
                        return RawPage(
                            current.url, status, response.reason_phrase, media, charset, body,
                            tuple(chain), headers=dict(response.headers),
                        )  # fmt: skip
                except BlockedAddress as exc:
                    where = f" (redirected from {chain[0]})" if chain else ""
                    raise FetchFailed(f"refused {current.url}{where}: {exc}") from None
                except httpx2.TimeoutException:
                    raise FetchFailed(
                        f"{current.url} did not answer within {self.limits.timeout:g} seconds"
                    ) from None
                except (httpx2.HTTPError, OSError) as exc:
                    raise FetchFailed(f"fetching {current.url} failed: {_describe(exc)}") from None

    def _redirect_target(self, current: WebURL, location: str, chain: list[str]) -> WebURL:
        if len(chain) >= self.limits.max_redirects:
            hops = " → ".join([*chain, current.url])
            raise FetchFailed(f"more than {self.limits.max_redirects} redirects: {hops} → {location}")
        try:
            return canonical_url(urljoin(current.url, location))
        except BadURL as exc:
            raise FetchFailed(f"{current.url} redirects to a URL that is not fetched: {exc}") from None

    async def _read(self, response: Any, url: WebURL) -> bytes:
        cap = self.limits.max_bytes
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            raise FetchFailed(
                f"{url.url} is {_size(int(declared))}, over the {_size(cap)} limit ([web] max_bytes); "
                "fetch a more specific page"
            )
        chunks: list[bytes] = []
        total = 0
        async for chunk in response.aiter_bytes():
            total += len(chunk)
            if total > cap:
                raise FetchFailed(
                    f"{url.url} is larger than the {_size(cap)} limit ([web] max_bytes); "
                    "fetch a more specific page"
                )
            chunks.append(chunk)
        return b"".join(chunks)


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    cause = exc.__cause__ or exc.__context__
    while not text and cause is not None:
        text = str(cause).strip()
        cause = cause.__cause__ or cause.__context__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
