"""What OpenTelemetry export adds to a tool round (issue 33). Target: under 10%.

A chat controller (the composition every host uses: recorder, status, the event
stream) runs one turn of N rounds, each a model call asking for `glob` on a small
project, then an answer; once with export off and once with export on to an OTLP/HTTP
collector on 127.0.0.1 (another process, as a real collector is, that accepts and
counts what arrives), alternately, `--repeat` times. The model is the real Anthropic SDK against
the bundled fake server on 127.0.0.1 (a real round: request, stream, parse), or with
`--scripted` the scripted provider (no SDK, no HTTP: the loop alone, the harshest
denominator). A round's cost is the turn's wall time over N; the overhead is the
median on-round over the median off-round, and the time spent in the exporter's own
`observe` (what export adds on the session's thread, without the machine's noise) is
reported beside it. The closing export (at most
`CLOSE_WAIT_SECONDS`) is timed separately, also with the collector down (a closed port).

    python bench/telemetry_overhead.py [--rounds 100] [--repeat 5] [--scripted] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TARGET_PERCENT = 10.0


class _Sink(BaseHTTPRequestHandler):
    received = 0

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).received += 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def one_turn(rounds: int, endpoint: str | None, root: Path, server: Any) -> tuple[float, float, float]:
    """(seconds per round, seconds to close, seconds per round in the exporter's own
    `observe`) of one turn of `rounds` tool rounds; `server`: the fake server the SDK
    talks to (None: the scripted provider)."""
    from wyckoff_cli.providers.base import LLMProvider
    from wyckoff_cli.providers.factory import build_provider
    from wyckoff_cli.providers.scripted import ScriptedProvider
    from wyckoff_cli.providers.spec import ModelSpec
    from wyckoff_cli.session import requests as rq
    from wyckoff_cli.session.builder import SessionBuilder, open_workspace
    from wyckoff_cli.session.controller import ChatController
    from wyckoff_cli.storage.redact import Redactor
    from wyckoff_cli.storage.sessions import SessionStore
    from wyckoff_cli.storage.telemetry_config import TelemetryConfig

    script: list[Any] = [
        {"tool_calls": [{"name": "glob", "args": {"pattern": f"*{n % 3}.py"}}], "usage": {"input_tokens": 10}}
        for n in range(rounds)
    ]
    script.append({"text": "done"})
    provider: LLMProvider
    if server is None:
        provider, model = ScriptedProvider(script), "scripted:none"
    else:
        server.script(*script)
        spec = ModelSpec("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key="fake-key")
        provider, model = build_provider(spec), "anthropic:claude-sonnet-4-5"
    builder = SessionBuilder(
        open_workspace(root),
        provider_factory=lambda _m: provider,
        manage_context=False,
        fixed_prompt="SYSTEM",
        store=SessionStore(root.parent / f"sessions-{time.monotonic_ns()}", redactor=Redactor()),
    )
    builder.config.telemetry = TelemetryConfig(otlp_endpoint=endpoint, export_interval=5.0)
    builder.config.max_tool_rounds = rounds + 5
    controller = ChatController(builder, model=model, mode="yolo")
    assert controller.telemetry.enabled == (endpoint is not None)
    observing = [0.0]
    plain_observe = controller.telemetry.observe

    def timed_observe(event: Any, session_id: str | None) -> None:
        began = time.perf_counter()
        plain_observe(event, session_id)
        observing[0] += time.perf_counter() - began

    controller.telemetry.observe = timed_observe  # type: ignore[method-assign]
    started = time.perf_counter()
    async for _event in controller.handle(rq.Turn("go")):
        pass
    elapsed = time.perf_counter() - started
    started = time.perf_counter()
    await controller.aclose()
    return elapsed / rounds, time.perf_counter() - started, observing[0] / rounds


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def run_sink() -> int:
    """The collector: prints its port, counts exports until stdin closes, prints the count."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()
    server.shutdown()
    print(_Sink.received, flush=True)
    return 0


def main() -> int:
    if sys.argv[1:] == ["--sink"]:
        return run_sink()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--scripted", action="store_true", help="the scripted provider: the loop alone")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import os

    os.environ["WYCKOFF_HOME"] = tempfile.mkdtemp(prefix="wyckoff-bench-home-")
    root = Path(tempfile.mkdtemp(prefix="wyckoff-bench-")) / "project"
    (root / ".wyckoff").mkdir(parents=True)
    for n in range(12):
        (root / f"m{n}.py").write_text("x = 1\n", encoding="utf-8")
    sink = subprocess.Popen(
        [sys.executable, __file__, "--sink"], stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True
    )
    assert sink.stdout is not None and sink.stdin is not None
    endpoint = f"http://127.0.0.1:{sink.stdout.readline().strip()}"
    from wyckoff_cli.testing.fake_server import FakeServer

    fake = None if args.scripted else FakeServer().start()
    asyncio.run(one_turn(20, None, root, fake))  # warm-up: imports, the SDKs' too
    asyncio.run(one_turn(20, endpoint, root, fake))
    off: list[float] = []
    on: list[float] = []
    closes: list[float] = []
    observing: list[float] = []
    for _ in range(args.repeat):
        off.append(asyncio.run(one_turn(args.rounds, None, root, fake))[0])
        round_on, closing, observed = asyncio.run(one_turn(args.rounds, endpoint, root, fake))
        on.append(round_on)
        closes.append(closing)
        observing.append(observed)
    down = f"http://127.0.0.1:{_closed_port()}"
    down_round, down_close, _ = asyncio.run(one_turn(args.rounds, down, root, fake))
    sink.stdin.close()  # the sink prints how many exports it received, and ends
    received = int(sink.stdout.readline().strip() or 0)
    sink.wait()
    if fake is not None:
        fake.stop()
    off_ms, on_ms = statistics.median(off) * 1000, statistics.median(on) * 1000
    overhead = (on_ms - off_ms) / off_ms * 100
    observe_ms = statistics.median(observing) * 1000
    result = {
        "provider": "scripted" if args.scripted else "anthropic SDK, fake server",
        "rounds": args.rounds,
        "repeat": args.repeat,
        "round_ms_off": round(off_ms, 3),
        "round_ms_on": round(on_ms, 3),
        "overhead_percent": round(overhead, 1),
        "observe_ms_per_round": round(observe_ms, 3),
        "observe_percent_of_round": round(observe_ms / off_ms * 100, 1),
        "close_ms_on": round(statistics.median(closes) * 1000, 1),
        "round_ms_collector_down": round(down_round * 1000, 3),
        "close_ms_collector_down": round(down_close * 1000, 1),
        "exports_received": received,
        "target_percent": TARGET_PERCENT,
        "met": overhead < TARGET_PERCENT,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{result['provider']}, {args.rounds} rounds x {args.repeat}: {off_ms:.3f} ms/round off, {on_ms:.3f} ms/round on "
            f"({overhead:+.1f}%, target < {TARGET_PERCENT:.0f}%: {'met' if result['met'] else 'NOT met'}; "
            f"the exporter's own observe {observe_ms:.3f} ms/round, {result['observe_percent_of_round']}%); "
            f"close {result['close_ms_on']} ms; collector down: {result['round_ms_collector_down']} ms/round, "
            f"close {result['close_ms_collector_down']} ms; {received} exports received"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
