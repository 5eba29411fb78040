"""OAuth for streamable-HTTP servers: authorization code with PKCE, through the SDK.

The `mcp` SDK's `OAuthClientProvider` does the protocol: on a 401 it reads the
protected-resource metadata the server names, discovers the authorization server,
registers a client dynamically, builds the PKCE authorization URL, exchanges the code
and refreshes tokens. What is ours:

- `CredentialsTokenStorage`: tokens and the registered client live in the credentials
  file (mode 0600) under `[mcp_oauth.NAME]`, never in config or logs; the absolute expiry
  is kept so a token is refreshed a minute before it expires, also after a restart;
- `RedirectListener`: the redirect target, `http://127.0.0.1:PORT/callback`, a one-shot
  HTTP listener on the loopback interface that hands the code and state to the flow;
- `open_url`: the browser (a test or `--no-browser` replaces it).

Headless sessions do not start a browser flow: a server that needs one fails with
"run `wyckoff mcp login NAME`".
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from wyckoff_cli.storage.credentials import load_credential_table, save_credential_table

SECTION = "mcp_oauth"
_REFRESH_MARGIN = 60.0
OpenUrl = Callable[[str], Awaitable[None]]


class LoginRequired(Exception):
    """The server wants a browser sign-in and this session cannot start one."""


async def open_in_browser(url: str) -> None:
    import webbrowser

    await asyncio.to_thread(webbrowser.open, url)


class CredentialsTokenStorage:
    """The SDK's `TokenStorage` over the credentials file."""

    def __init__(self, server: str) -> None:
        self.server = server

    def _record(self) -> dict[str, Any]:
        return dict(load_credential_table(SECTION).get(self.server) or {})

    def _update(self, **changes: Any) -> None:
        record = self._record()
        record.update({k: v for k, v in changes.items() if v is not None})
        for key in [k for k, v in changes.items() if v is None]:
            record.pop(key, None)
        save_credential_table(SECTION, self.server, record)

    def expires_at(self) -> float | None:
        value = self._record().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def redirect_port(self) -> int | None:
        value = self._record().get("redirect_port")
        return value if isinstance(value, int) else None

    def set_redirect_port(self, port: int) -> None:
        self._update(redirect_port=port)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        raw = self._record().get("tokens")
        if not raw:
            return None
        try:
            return OAuthToken.model_validate_json(raw)
        except ValueError:
            return None

    async def set_tokens(self, tokens: Any) -> None:
        expires = time.time() + tokens.expires_in if tokens.expires_in else None
        self._update(tokens=tokens.model_dump_json(exclude_none=True), expires_at=expires)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        raw = self._record().get("client_info")
        if not raw:
            return None
        try:
            return OAuthClientInformationFull.model_validate_json(raw)
        except ValueError:
            return None

    async def set_client_info(self, client_info: Any) -> None:
        self._update(client_info=client_info.model_dump_json(exclude_none=True))

    def clear(self) -> None:
        save_credential_table(SECTION, self.server, None)

    def has_tokens(self) -> bool:
        return bool(self._record().get("tokens"))


class RedirectListener:
    """`http://127.0.0.1:PORT/callback`: waits for one redirect carrying `code` and
    `state` (or `error`), answers the browser with a short page, and stops."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[dict[str, str]] | None = None

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    async def start(self) -> None:
        if self._server is not None:
            return
        self._result = asyncio.get_running_loop().create_future()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await asyncio.wait_for(reader.readline(), 10)).decode("latin-1")
            while (await asyncio.wait_for(reader.readline(), 10)).strip():
                pass
            parts = line.split(" ")
            target = urlsplit(parts[1]) if len(parts) > 1 else urlsplit("/")
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            if target.path != "/callback" or not ({"code", "error"} & set(query)):
                body, status = "Not found", "404 Not Found"
            else:
                ok = "code" in query
                body = "Signed in. You can close this tab." if ok else f"Sign-in failed: {query['error']}"
                status = "200 OK"
                if self._result is not None and not self._result.done():
                    self._result.set_result(query)
            payload = f"<html><body><p>{body}</p></body></html>".encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
                + payload
            )
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def wait(self, timeout: float) -> dict[str, str]:
        assert self._result is not None, "start() first"
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), timeout)
        finally:
            await self.close()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def build_auth(
    server: str,
    url: str,
    *,
    interactive: bool,
    open_url: OpenUrl = open_in_browser,
    login_timeout: float = 300.0,
    on_wait: Callable[[str], None] | None = None,
) -> Any:
    """The httpx2 `Auth` for one server: an `OAuthClientProvider` with our storage, the
    loopback redirect and the browser. Not interactive: a needed sign-in raises
    `LoginRequired` instead of opening anything. `on_wait(url)` is called when a
    person is about to be sent to the browser."""
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    storage = CredentialsTokenStorage(server)
    port = storage.redirect_port()
    if port is None:
        port = free_port()
        storage.set_redirect_port(port)
    listener = RedirectListener(port)

    async def redirect(authorization_url: str) -> None:
        if not interactive:
            raise LoginRequired(f"{server} needs you to sign in: run `wyckoff mcp login {server}`")
        await listener.start()
        if on_wait is not None:  # the host extends the start-up time and tells the user
            on_wait(authorization_url)
        await open_url(authorization_url)

    async def callback() -> Any:
        query = await listener.wait(login_timeout)
        if "error" in query:
            raise LoginRequired(
                f"{server}: sign-in failed: {query.get('error_description') or query['error']}"
            )
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    class _Provider(OAuthClientProvider):
        async def _initialize(self) -> None:
            await super()._initialize()
            expires = storage.expires_at()
            if expires is not None and self.context.current_tokens is not None:
                # refresh a little before the stored expiry, also across restarts
                self.context.token_expiry_time = expires - _REFRESH_MARGIN

    metadata = OAuthClientMetadata(
        client_name="Wyckoff",
        redirect_uris=[listener.redirect_uri],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return _Provider(
        server_url=url,
        client_metadata=metadata,
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback,
    )


def describe_tokens(server: str) -> str:
    storage = CredentialsTokenStorage(server)
    if not storage.has_tokens():
        return "not signed in"
    expires = storage.expires_at()
    if expires is None:
        return "signed in"
    left = expires - time.time()
    return f"signed in (token {'expired' if left <= 0 else f'valid for {int(left // 60)} min'})"
