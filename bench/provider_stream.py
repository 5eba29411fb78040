"""Provider stream decoding: real adapters, real SDK clients, real HTTP, beside the floor.

One 80 KB answer streamed as 20,000 4-character deltas by the loopback fake server.
The fake server runs in its own process (as a vendor's server would), so it does not
compete with the client for the GIL. For each adapter (Anthropic, OpenAI Chat
Completions, OpenAI Responses, Gemini) it reports the time from sending the request to
the last delta and the time per delta, beside the floor measured in the same run: the
same request to the same server, its SSE bytes read from the loopback socket with plain
asyncio streams, split into events and `json.loads`-ed in a bare loop. Target: each adapter at most 3x the floor. With `--run` it also times the
whole answer through `wyckoff run` (a subprocess,
`--output-format stream-json`): from the `model_start` event (sent right before the
request) to the last `text_delta`, as read from its stdout (target under 1.0 s).

    python bench/provider_stream.py [PATH] [--repeat 5] [--delta 4] [--run] [--watchdog]

Without PATH it uses ../shared/reference/bench/answer_80k.md, or a generated answer of
the same size. The machine is shared: run it several times and read the medians.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from stream_e2e import RequestClock  # the loopback relay that clocks the request

from wyckoff_cli.core.messages import Message
from wyckoff_cli.providers.base import TextChunk
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec

REFERENCE = Path("/work/shared/reference/bench/answer_80k.md")
VENDORS = ("anthropic", "openai", "openai-responses", "gemini")
MODELS = {
    "anthropic": "claude-bench",
    "openai": "gpt-bench",
    "openai-responses": "gpt-5-bench",
    "gemini": "gemini-bench",
}
TARGET_RATIO = 3.0
TARGET_RUN_SECONDS = 1.0


def answer_text(path: Path | None) -> str:
    if path is not None:
        return path.read_text(encoding="utf-8")
    if REFERENCE.exists():
        return REFERENCE.read_text(encoding="utf-8")
    line = "The parser now accepts an optional `limit`; callers pass it through. " * 2
    return (line * (80_000 // len(line) + 1))[:80_000]


# --------------------------------------------------------------------------- server


class ServerProcess:
    """`python -m wyckoff_cli.testing.fake_server` answering `text` to every request."""

    def __init__(self, text: str, delta: int) -> None:
        self._dir = tempfile.TemporaryDirectory()
        scenario = Path(self._dir.name) / "answer.json"
        scenario.write_text(json.dumps([{"text": text, "chunk_size": delta}]))
        command = [sys.executable, "-m", "wyckoff_cli.testing.fake_server", "--scenario", str(scenario)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        urls = dict(self.process.stdout.readline().strip().split("=", 1) for _ in range(3))
        self.process.stdout.readline()  # "Serving; ..."
        self.url = urls["ANTHROPIC_BASE_URL"]
        self.openai_url = urls["OPENAI_BASE_URL"]

    def url_for(self, vendor: str) -> str:
        return self.openai_url if vendor.startswith("openai") else self.url

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=5)
        self._dir.cleanup()


PATHS = {
    "anthropic": "/v1/messages",
    "openai": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "gemini": "/v1beta/models/gemini-bench:streamGenerateContent?alt=sse",
}


# --------------------------------------------------------------------------- floor


async def floor_once(server: ServerProcess, vendor: str) -> tuple[float, int]:
    """The same request to the same server; read, split and decode in a bare loop."""
    host, port = server.url.removeprefix("http://").split(":")
    body = b'{"model": "m", "stream": true}'
    request = (
        f"POST {PATHS[vendor]} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    await writer.drain()
    buffer = b""
    deltas = 0
    last = started
    while True:
        piece = await reader.read(65536)
        if not piece:
            break
        buffer += piece
        *blocks, buffer = buffer.split(b"\n\n")
        for block in blocks:
            for line in block.split(b"\n"):
                if line.startswith(b"data: ") and line != b"data: [DONE]":
                    json.loads(line[6:])
                    deltas += 1
        last = time.perf_counter()
    writer.close()
    return last - started, deltas


# --------------------------------------------------------------------------- adapter


async def adapter_once(
    vendor: str, server: ServerProcess, text: str, delta: int, watchdog: bool
) -> tuple[float, int]:
    spec = ModelSpec(vendor, MODELS[vendor], base_url=server.url_for(vendor), api_key="bench-key")
    provider = build_provider(spec, watchdog=watchdog)
    stream = provider.chat_stream([Message.user("go")], [], "")
    received = 0
    started = time.perf_counter()
    last = started
    async for chunk in stream:
        if isinstance(chunk, TextChunk):
            received += len(chunk.text)
            last = time.perf_counter()
    assert received == len(text), (vendor, received, len(text))
    close = getattr(provider, "aclose", None) or getattr(getattr(provider, "inner", None), "aclose", None)
    if close is not None:
        await close()
    return last - started, -(-len(text) // delta)


# --------------------------------------------------------------------------- wyckoff run


@dataclass
class RunTimes:
    request: float  # the request's first byte at the server (the relay) -> the last delta read
    model_start: float  # the `model_start` line -> the last delta read
    process: float  # the process started -> it exited
    cpu: float  # the process's own CPU seconds (user + system), from wait4


def run_once(vendor: str, server: ServerProcess, clock: RequestClock, code: str | None = None) -> RunTimes:
    """`wyckoff run --output-format stream-json` in a subprocess, the fake server in
    another, behind a loopback relay that notes when the request arrives (the clock of
    issue 36's peer figures). `code`: a checkout whose `wyckoff_cli` runs instead of this
    one (`PYTHONPATH`), for an A/B comparison in the same run."""
    relay = f"http://127.0.0.1:{clock.port}"
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ)
        env.update(
            WYCKOFF_HOME=home,
            ANTHROPIC_BASE_URL=relay,
            ANTHROPIC_API_KEY="bench-key",
            OPENAI_BASE_URL=relay + "/v1",
            OPENAI_API_KEY="bench-key",
            GOOGLE_GEMINI_BASE_URL=relay,
            GEMINI_API_KEY="bench-key",
        )
        if code is not None:
            env["PYTHONPATH"] = code
        command = [sys.executable, "-m", "wyckoff_cli", "run", "--no-session", "--cwd", home]
        command += ["--output-format", "stream-json", "--model", f"{vendor}:{MODELS[vendor]}", "go"]
        before = len(clock.requests)
        launched = time.perf_counter()
        child = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=home
        )
        assert child.stdout is not None
        started = last = 0.0
        for line in child.stdout:
            if line.startswith(b'{"type": "model_start"'):
                started = time.perf_counter()
            elif line.startswith(b'{"type": "text_delta"'):
                last = time.perf_counter()
        _, status, usage = os.wait4(child.pid, 0)
        exited = time.perf_counter()
        child.returncode = os.waitstatus_to_exitcode(status)
        assert child.returncode == 0 and started, (vendor, child.returncode)
        assert len(clock.requests) == before + 1, "one request through the relay"
        return RunTimes(
            last - clock.requests[-1], last - started, exited - launched, usage.ru_utime + usage.ru_stime
        )


def report_runs(label: str, runs: list[RunTimes]) -> float:
    took = statistics.median(r.request for r in runs)
    print(
        f"wyckoff run {label:28} request→last delta {took:5.3f} s (min {min(r.request for r in runs):.3f})  "
        f"model_start→last {statistics.median(r.model_start for r in runs):5.3f} s  "
        f"process {statistics.median(r.process for r in runs):5.3f} s  "
        f"CPU {statistics.median(r.cpu for r in runs):5.3f} s"
    )
    return took


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


# --------------------------------------------------------------------------- report


async def main_async(args: argparse.Namespace) -> int:
    text = answer_text(args.path)
    delta = args.delta
    print(f"answer: {len(text):,} characters in {-(-len(text) // delta):,} deltas of {delta}")
    failed = False
    server = ServerProcess(text, delta)
    try:
        for vendor in args.vendors:
            floors, runs = [], []
            for _ in range(args.repeat):  # interleaved, so both see the same load
                floors.append(await floor_once(server, vendor))
                runs.append(await adapter_once(vendor, server, text, delta, args.watchdog))
            floor = statistics.median(t for t, _ in floors)
            took = statistics.median(t for t, _ in runs)
            count = runs[0][1]
            ratio = took / floor if floor else float("inf")
            ok = ratio <= TARGET_RATIO
            failed |= not ok
            print(
                f"{vendor:17} {took * 1000:7.1f} ms  {took / count * 1e6:5.2f} µs/delta   "
                f"floor {floor * 1000:6.1f} ms  {floor / count * 1e6:5.2f} µs/delta   "
                f"{ratio:4.2f}x floor  {'ok' if ok else 'OVER TARGET'} (≤ {TARGET_RATIO:g}x)"
            )
        if args.run:
            clock = RequestClock(int(server.url.rsplit(":", 1)[1]))
            print(f"load average {load()} (medians of {args.repeat}; CPU: the wyckoff process's own)")
            try:
                for vendor in args.run_vendors:
                    runs: list[RunTimes] = []
                    other: list[RunTimes] = []
                    for _ in range(args.repeat):  # A/B in alternation: both see the same load
                        if args.compare is not None:
                            other.append(run_once(vendor, server, clock, str(args.compare)))
                        runs.append(run_once(vendor, server, clock))
                    if args.compare is not None:
                        report_runs(f"{vendor} ({args.compare})", other)
                    took = report_runs(f"{vendor} (this checkout)", runs)
                    ok = took < TARGET_RUN_SECONDS
                    failed |= not ok
                    print(f"{'':12}{'ok' if ok else 'OVER TARGET'} (< {TARGET_RUN_SECONDS:g} s)")
            finally:
                clock.close()
            print(f"load average {load()}")
    finally:
        server.close()
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--delta", type=int, default=4)
    parser.add_argument("--watchdog", action="store_true", help="measure the adapters inside the watchdog")
    parser.add_argument("--run", action="store_true", help="also time `wyckoff run` end to end")
    parser.add_argument("--vendors", nargs="+", default=list(VENDORS), metavar="VENDOR")
    parser.add_argument(
        "--compare", type=Path, metavar="CHECKOUT", help="with --run: alternate with another checkout's code"
    )
    parser.add_argument("--run-vendors", nargs="+", default=["openai", "anthropic"], metavar="VENDOR")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
