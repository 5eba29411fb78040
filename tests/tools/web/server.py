"""A real HTTP server on 127.0.0.1 (port 0) for the web tool tests.

Routes map a path to a handler `(request) -> Reply`; every request is recorded (path,
headers, body) so tests can check what the client sent. Each request runs in its own
thread, so a slow route does not hold up the others.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Reply:
    status: int = 200
    body: bytes | Iterator[bytes] = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before the status line
    length: bool = True  # send Content-Length (otherwise the body ends with the connection)


Route = Callable[[Request], Reply]


class LocalServer:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[Request] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return None

            def _serve(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                request = Request(
                    self.command,
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(size) if size else b"",
                )
                server.requests.append(request)
                route = server.routes.get(self.path.split("?", 1)[0])
                reply = (
                    route(request)
                    if route
                    else Reply(404, b"<h1>Not Found</h1>", {"Content-Type": "text/html"})
                )
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    if isinstance(reply.body, bytes):
                        if reply.length:
                            self.send_header("Content-Length", str(len(reply.body)))
                        self.send_header("Connection", "close")
                        self.end_headers()
                        self.wfile.write(reply.body)
                    else:
                        self.send_header("Transfer-Encoding", "chunked")
                        self.send_header("Connection", "close")
                        self.end_headers()
                        for chunk in reply.body:
                            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.write(b"0\r\n\r\n")
                    self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            do_GET = _serve
            do_POST = _serve

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def route(self, path: str, reply: Reply | Route) -> None:
        self.routes[path] = reply if callable(reply) else (lambda _request, r=reply: r)

    def hits(self, path: str) -> int:
        return sum(1 for r in self.requests if r.path.split("?", 1)[0] == path)

    def __enter__(self) -> LocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
