"""A loopback HTTP server that speaks the three vendors' streaming wire formats.

It answers `POST /v1/messages` (Anthropic), `POST {base}/chat/completions` (OpenAI
compatible), `POST {base}/responses` (OpenAI Responses API) and
`POST /{version}/models/{model}:streamGenerateContent` (Gemini) with
scripted Server-Sent Event streams, one scripted answer per request, and records
every request (path, headers, JSON body). The real SDKs talk to it over real HTTP,
so tests and offline demos exercise the same code as a session against the vendor.

In tests::

    with FakeServer() as server:
        server.script({"text": "Hello"}, {"status": 429})
        ... point a provider at server.url (server.openai_url for OpenAI) ...
        server.requests[0].body

By hand (see docs/PROVIDERS.md)::

    python -m wyckoff_cli.testing.fake_server --scenario answers.json --port 8765

prints the base URLs to export, e.g. `ANTHROPIC_BASE_URL=http://127.0.0.1:8765`.
A scenario file is a JSON list of answers (see `wyckoff_cli.testing.wire`), or
`{"responses": [...], "cycle": true}`; `--markdown FILE` streams a Markdown file.
Standard library only; nothing happens at import time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from wyckoff_cli.testing.wire import Rendered, render, vendor_for_path

_DISCONNECTS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


@dataclass(frozen=True)
class RecordedRequest:
    vendor: str | None
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body (or the raw text when it is not JSON)


@dataclass
class _State:
    queue: deque[dict[str, Any]] = field(default_factory=deque)
    played: list[dict[str, Any]] = field(default_factory=list)
    cycle: bool = False
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    base_dir: Path | None = None
    completed: int = 0  # streams written to the end
    disconnects: int = 0  # streams the client closed early


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, _DISCONNECTS):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._json(404, {"error": {"message": "the fake server only answers model calls"}})

    def do_POST(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        vendor = vendor_for_path(self.path)
        with state.lock:
            state.requests.append(
                RecordedRequest(
                    vendor, "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
            )
            scenario = self._next_scenario(state, raw.decode("utf-8", "replace"))
        if vendor is None:
            self._json(404, {"error": {"message": f"no such endpoint: {self.path}"}})
            return
        if scenario is None:
            scenario = {"status": 500, "error_message": "fake server: no scripted answer left"}
        try:
            rendered = render(vendor, scenario, state.base_dir)
        except (OSError, KeyError, ValueError, TypeError) as exc:
            self._json(500, {"error": {"message": f"fake server: bad scenario: {exc}"}})
            return
        try:
            self._answer(rendered, state)
        except _DISCONNECTS:
            with state.lock:
                state.disconnects += 1
            self.close_connection = True

    @staticmethod
    def _next_scenario(state: _State, body: str = "") -> dict[str, Any] | None:
        """The next answer; an answer with `when` (a string, or a list of strings) is only
        taken by a request whose body contains it (each of them), so parallel agents each
        get their own answers."""
        for scenario in state.queue:
            when = scenario.get("when")
            wanted = [when] if isinstance(when, str) else list(when or [])
            if all(str(text) in body for text in wanted):
                state.queue.remove(scenario)
                state.played.append(scenario)
                return scenario
        if state.cycle and state.played and not state.queue:
            state.queue.extend(state.played)
            state.played.clear()
            return _Handler._next_scenario(state, body)
        return None

    def _json(self, status: int, data: Any) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.close_connection = True

    def _answer(self, rendered: Rendered, state: _State) -> None:
        if rendered.stall_before and state.stopping.wait(rendered.stall_before):
            return  # a dead endpoint: the connection is open, nothing is sent
        if rendered.status != 200:
            self.send_response(rendered.status)
            self.send_header("Content-Type", "application/json")
            for name, value in rendered.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(rendered.body)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(rendered.body)
            self.close_connection = True
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        self._write_paced(rendered)
        if rendered.stall and state.stopping.wait(rendered.stall):
            return
        if rendered.drop:
            self._drop()
            return
        for event in rendered.tail:
            self._chunk(event)
        self.wfile.write(b"0\r\n\r\n")
        with state.lock:
            state.completed += 1

    def _write_paced(self, rendered: Rendered) -> None:
        interval = rendered.event_interval
        started = time.monotonic()
        for n, event in enumerate(rendered.events):
            self._chunk(event)
            if interval:
                ahead = started + (n + 1) * interval - time.monotonic()
                if ahead > 0.005:
                    time.sleep(ahead)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%X\r\n%s\r\n" % (len(data), data))

    def _drop(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class FakeServer:
    """Start with `start()` (or as a context manager); `url` is the base URL."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, base_dir: Path | None = None) -> None:
        self._address = (host, port)
        self._state = _State(base_dir=base_dir)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> FakeServer:
        server = _Server(self._address, _Handler)
        server.state = self._state
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- addresses

    @property
    def url(self) -> str:
        """Base URL for Anthropic and Gemini (`ANTHROPIC_BASE_URL`, `GOOGLE_GEMINI_BASE_URL`)."""
        if self._server is None:
            raise RuntimeError("the fake server is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI-compatible clients (`OPENAI_BASE_URL`)."""
        return self.url + "/v1"

    def url_for(self, vendor: str) -> str:
        return self.openai_url if vendor.startswith("openai") else self.url

    # -- scripting and records

    def script(self, *scenarios: dict[str, Any]) -> FakeServer:
        """Queue answers; each request takes the next one."""
        with self._state.lock:
            self._state.queue.extend(scenarios)
        return self

    def set_cycle(self, cycle: bool = True) -> None:
        """When the queue runs out, start again from the first answer played."""
        self._state.cycle = cycle

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    @property
    def pending(self) -> int:
        with self._state.lock:
            return len(self._state.queue)

    @property
    def completed(self) -> int:
        with self._state.lock:
            return self._state.completed

    @property
    def disconnects(self) -> int:
        with self._state.lock:
            return self._state.disconnects

    def reset(self) -> None:
        with self._state.lock:
            self._state.queue.clear()
            self._state.played.clear()
            self._state.requests.clear()


def load_scenarios(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """Read a scenario file: a list of answers, or {"responses": [...], "cycle": bool}."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        return [dict(item) for item in data], True
    if isinstance(data, dict) and isinstance(data.get("responses"), list):
        return [dict(item) for item in data["responses"]], bool(data.get("cycle", True))
    if isinstance(data, dict):
        return [data], True
    raise ValueError(f"{path}: expected a list of answers or an object with 'responses'")


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m wyckoff_cli.testing.fake_server",
        description="Serve scripted model answers in the Anthropic, OpenAI and Gemini wire formats.",
    )
    parser.add_argument("--scenario", type=Path, help="JSON file with the answers to play, in order")
    parser.add_argument("--markdown", type=Path, help="stream this Markdown file as the answer")
    parser.add_argument("--chunk-size", type=int, default=4, help="characters per delta for --markdown")
    parser.add_argument("--rate", type=float, default=None, help="characters per second (default: unpaced)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--log", action="store_true", help="print each request's path and body size")
    args = parser.parse_args(list(argv) if argv is not None else None)
    scenarios: list[dict[str, Any]] = []
    cycle = True
    base_dir = Path.cwd()
    if args.scenario is not None:
        try:
            scenarios, cycle = load_scenarios(args.scenario)
        except (OSError, ValueError) as exc:
            print(f"fake_server: cannot read {args.scenario}: {exc}", file=sys.stderr)
            return 2
        base_dir = args.scenario.resolve().parent
    if args.markdown is not None:
        scenarios.append(
            {
                "markdown_file": str(args.markdown.resolve()),
                "chunk_size": args.chunk_size,
                "chars_per_second": args.rate,
            }
        )
    if not scenarios:
        scenarios = [{"text": "Hello from the fake server.", "chunk_size": 4}]
    server = FakeServer(args.host, args.port, base_dir=base_dir).start()
    server.script(*scenarios)
    server.set_cycle(cycle)
    print(f"ANTHROPIC_BASE_URL={server.url}")
    print(f"OPENAI_BASE_URL={server.openai_url}")
    print(f"GOOGLE_GEMINI_BASE_URL={server.url}")
    print("Serving; Ctrl-C stops.", flush=True)
    seen = 0
    try:
        while True:
            time.sleep(0.2)
            if args.log:
                requests = server.requests
                for request in requests[seen:]:
                    size = len(json.dumps(request.body)) if request.body is not None else 0
                    print(f"{request.method} {request.path} ({size} bytes)", flush=True)
                seen = len(requests)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
