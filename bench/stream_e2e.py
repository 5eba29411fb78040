"""Streaming end to end, where users see it: `wyckoff chat` in a real pseudo-terminal.

The fake server (`python -m wyckoff_cli.testing.fake_server --markdown FILE`) runs in
its own process and streams the 80 KB reference answer in 4-character deltas. The app
runs in another, on a pty 120x40 (TERM=xterm-256color); this process is the terminal:
it reads everything the app writes, answers the synchronized-output query as modern
terminals do (so Textual brackets each frame with ESC[?2026h ... ESC[?2026l and frames
can be counted), and replays the bytes through `pyte` (a VT100 emulator) to find the
first frame with the answer's last line on screen. It reports:

1. request -> last line on screen: from the Enter key that sends the prompt to the
   first frame whose screen shows the answer's last line (full speed; median of runs);
2. CPU % of a core of the app while it streams at full speed, and at 50 deltas/s
   (paced by the server, over `--seconds`);
3. bytes written to the terminal: in all, per frame, and frames;
4. peak RSS of the app (VmHWM) after the full-speed answer;
5. idle CPU of the app over 10 s, before the prompt and after the answer;
6. headless: `wyckoff run --output-format stream-json`, request to the last delta, and
   its CPU % at 50 deltas/s.

    python bench/stream_e2e.py [PATH] [--repeat 3] [--rate 50] [--seconds 10] [--idle 10]
                               [--width 120] [--height 40] [--model openai:gpt-bench]
    python bench/stream_e2e.py --baseline DIR [--baseline DIR2] [--repeat 5]   # A/B in alternation

Without PATH it uses ../shared/reference/bench/answer_80k.md (not copied into the
repository: it carries no licence), or, when that is missing, a generated answer of the
same size and shape (bench/stream_render.py's). Linux only (/proc). The machine is
shared: the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pyte
from stream_render import generated_answer

REFERENCE = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / "bench" / "answer_80k.md"
FALLBACK_REFERENCE = Path("/work/shared/reference/bench/answer_80k.md")
SYNC_QUERY = b"\x1b[?2026$p"
SYNC_REPLY = b"\x1b[?2026;2$y"  # "recognised, currently reset": Textual then syncs each frame
SYNC_START = b"\x1b[?2026h"
TARGET_SECONDS = 1.0
TARGET_CPU_APP = 0.05
TARGET_CPU_HEADLESS = 0.02
TARGET_RSS_MB = 120.0
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (and its reaped children) from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / CLK_TCK


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def last_line_marker(text: str) -> str:
    """The answer's last non-empty line as the screen shows it: Markdown markers and
    inline markup dropped (a quote's "> ", a heading's "#", emphasis, code ticks)."""
    line = next(line for line in reversed(text.splitlines()) if line.strip())
    line = re.sub(r"^\s*(?:>\s*|#+\s*|[-*+]\s+|\d+\.\s+)", "", line)
    line = re.sub(r"[*_`]", "", line).strip()
    return line[:60]


# --------------------------------------------------------------------------- the server


class Server:
    def __init__(self, answer: Path, chunk: int, rate: float | None) -> None:
        command = [sys.executable, "-m", "wyckoff_cli.testing.fake_server", "--markdown", str(answer)]
        command += ["--chunk-size", str(chunk)]
        if rate is not None:
            command += ["--rate", str(rate)]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.urls = dict(self.process.stdout.readline().strip().split("=", 1) for _ in range(3))
        self.process.stdout.readline()  # "Serving; ..."

        port = int(re.search(r":(\d+)", self.urls["OPENAI_BASE_URL"].split("//", 1)[1]).group(1))  # type: ignore[union-attr]
        self.proxy = RequestClock(port)

    def env(self, home: str) -> dict[str, str]:
        """The app's environment: the base URLs through the request clock."""
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        via = {key: re.sub(r":\d+", f":{self.proxy.port}", url, count=1) for key, url in self.urls.items()}
        env.update(
            WYCKOFF_HOME=home,
            ANTHROPIC_BASE_URL=via["ANTHROPIC_BASE_URL"],
            OPENAI_BASE_URL=via["OPENAI_BASE_URL"],
            GOOGLE_GEMINI_BASE_URL=via["GOOGLE_GEMINI_BASE_URL"],
            ANTHROPIC_API_KEY="bench-key",
            OPENAI_API_KEY="bench-key",
            GEMINI_API_KEY="bench-key",
        )
        return env

    def close(self) -> None:
        self.proxy.close()
        self.process.terminate()
        self.process.wait()


class RequestClock:
    """A loopback TCP relay in front of the fake server that notes when each request's
    first byte arrives: the clock starts at the request, as the issue measures, not at
    the key press (the first turn also builds the session and imports the SDK). It also
    notes when each answer's first text delta (Anthropic's `text_delta` event) passes on
    its way back: the server's own latency ends there."""

    TEXT_DELTA = b'"text_delta"'

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.requests: list[float] = []
        self.first_deltas: list[float] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            for sock in (client, server):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, requests: bool) -> None:
        answered = False  # this connection's answer has shown its first text delta
        try:
            while data := source.recv(1 << 16):
                if requests and data[:5] == b"POST ":
                    self.requests.append(time.perf_counter())
                elif not requests and not answered and self.TEXT_DELTA in data:
                    answered = True
                    self.first_deltas.append(time.perf_counter())
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()


# --------------------------------------------------------------------------- the terminal


@dataclass
class Terminal:
    """`wyckoff chat` on a pty; a thread reads what it writes, with arrival times."""

    command: list[str]
    env: dict[str, str]
    cwd: str
    width: int
    height: int
    chunks: list[tuple[float, bytes]] = field(default_factory=list)

    def start(self) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", self.height, self.width, 0, 0))
        env = dict(self.env, TERM="xterm-256color", COLORTERM="truecolor", COLUMNS="", LINES="")
        env.pop("COLUMNS")
        env.pop("LINES")
        self.process = subprocess.Popen(
            self.command,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=self.cwd,
            start_new_session=True,
        )
        os.close(slave)
        self.master = master
        self._lock = threading.Lock()
        self._closed = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        pending = b""
        while not self._closed:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if not ready:
                continue
            try:
                data = os.read(self.master, 1 << 16)
            except OSError:
                return
            if not data:
                return
            now = time.perf_counter()
            with self._lock:
                self.chunks.append((now, data))
            pending = (pending + data)[-len(SYNC_QUERY) :]
            if SYNC_QUERY in pending or SYNC_QUERY in data:
                os.write(self.master, SYNC_REPLY)
                pending = b""

    def type(self, text: str) -> float:
        os.write(self.master, text.encode())
        return time.perf_counter()

    def mark(self) -> int:
        with self._lock:
            return len(self.chunks)

    def bytes_since(self, mark: int) -> bytes:
        with self._lock:
            return b"".join(data for _, data in self.chunks[mark:])

    def quiet_for(self, seconds: float, timeout: float) -> float:
        """Wait until nothing has been written for `seconds`; when the writing stopped."""
        deadline = time.perf_counter() + timeout
        while True:
            with self._lock:
                last = self.chunks[-1][0] if self.chunks else 0.0
            now = time.perf_counter()
            if now - last >= seconds or now > deadline:
                return last
            time.sleep(0.05)

    def wait_for(self, needle: bytes, since: int = 0, timeout: float = 60.0) -> float:
        """Wait until `needle` has been written (a cheap test, before the exact one)."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if needle in self.bytes_since(since).replace(b"\x1b[0m", b""):
                return time.perf_counter()
            time.sleep(0.01)
        raise RuntimeError(f"{needle!r} never written; the screen:\n{self.screen_text()}")

    def screen_text(self) -> str:
        screen = pyte.Screen(self.width, self.height)
        pyte.ByteStream(screen).feed(self.bytes_since(0))
        return "\n".join(screen.display)

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self._closed = True
        self._reader.join(1)
        os.close(self.master)


def first_frame_showing(term: Terminal, start: int, marker: str) -> tuple[float, int, int, bool]:
    """Replay the bytes through pyte: when the first frame (chunk) after `start` whose
    screen shows `marker` arrived, with the bytes and frames written up to then, and
    whether the last screen still shows it."""
    screen = pyte.Screen(term.width, term.height)
    stream = pyte.ByteStream(screen)
    with term._lock:
        chunks = list(term.chunks)
    for _, data in chunks[:start]:
        stream.feed(data)
    written = frames = 0
    found_at: float | None = None
    for arrived, data in chunks[start:]:
        stream.feed(data)
        if found_at is None:
            written += len(data)
            frames += data.count(SYNC_START)
            if any(marker in line for line in screen.display):
                found_at = arrived
    if found_at is None:
        raise RuntimeError("the last line never reached the screen:\n" + "\n".join(screen.display))
    still = any(marker in line for line in screen.display)
    return found_at, written, frames, still


# --------------------------------------------------------------------------- runs


@dataclass
class AppRun:
    seconds: float = 0.0  # request -> last line on screen
    from_key: float = 0.0  # Enter -> last line on screen
    cpu: float = 0.0
    cpu_seconds: float = 0.0
    written: int = 0
    frames: int = 0
    rss_mb: float = 0.0
    idle_before: float = 0.0
    idle_after: float = 0.0
    idle_bytes: int = 0  # written to the terminal during the idle window after the answer
    settled: float = 0.0  # seconds from the last line on screen to the last frame written
    still_on_screen: bool = False


PROFILED = """\
import cProfile, os, signal, sys
from wyckoff_cli.cli.main import main
profile = cProfile.Profile()
def stop(*_):
    profile.disable()
    profile.dump_stats(sys.argv[1])
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
if os.environ.get("WYCKOFF_BENCH_PROFILE_ON_SIGNAL"):
    signal.signal(signal.SIGUSR1, lambda *_: profile.enable())  # the paced window starts
else:
    profile.enable()
sys.exit(main(sys.argv[2:]))
"""


def chat_command(args: argparse.Namespace, cwd: str, profile: str | None = None) -> list[str]:
    """`wyckoff chat`; with `profile`, under cProfile (the stats are saved on SIGTERM)."""
    chat = ["chat", cwd, "--model", args.model]
    if profile:
        return [sys.executable, "-c", PROFILED, profile, *chat]
    return [sys.executable, "-m", "wyckoff_cli", *chat]


PEER = "claude"
"""The peer measured beside Wyckoff when it is on PATH (issue 36): Claude Code."""
PEER_READY = b"for shortcuts"  # Claude Code's prompt line ("? for shortcuts")


@dataclass
class Peer:
    """How to launch the peer on the same fake server: its app, its headless run."""

    executable: str
    model: str = "claude-sonnet-4-5"

    def env(self, home: str, cwd: str, base: dict[str, str]) -> dict[str, str]:
        """Its own config folder, onboarding done and the folder trusted, no updater or
        other traffic: only the request to the fake server (through the clock)."""
        config = Path(home) / "claude"
        config.mkdir(parents=True, exist_ok=True)
        key = base.get("ANTHROPIC_API_KEY", "")
        state = {
            "hasCompletedOnboarding": True,
            "projects": {cwd: {"hasTrustDialogAccepted": True}},
            # The key was accepted once, as a user does at the first start (Claude Code
            # keeps the last 20 characters of the keys it was told to use).
            "customApiKeyResponses": {"approved": [key[-20:]], "rejected": []},
        }
        (config / ".claude.json").write_text(json.dumps(state), encoding="utf-8")
        return dict(
            base,
            CLAUDE_CONFIG_DIR=str(config),
            DISABLE_AUTOUPDATER="1",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_TELEMETRY="1",
        )

    def app_command(self) -> list[str]:
        return [self.executable, "--model", self.model]

    def headless_command(self) -> list[str]:
        return [self.executable, "-p", "go", "--model", self.model, "--output-format", "stream-json"]

    def headless_extra(self) -> list[str]:
        return ["--verbose", "--include-partial-messages"]


def app_env(env: dict[str, str], source: str | None) -> dict[str, str]:
    """The app's environment; with `source` (another version of the repository, e.g.
    `git archive main | tar -x -C DIR`), that version's `wyckoff_cli` is run."""
    return env if source is None else dict(env, PYTHONPATH=source)


def compare(args: argparse.Namespace, path: Path, marker: str) -> int:
    """`--baseline DIR`: the same runs of the baseline's app and this checkout's, in
    alternation (A, B, A, B, ...), so both see the same load; medians of each."""
    sources: dict[str, str | None] = {str(Path(d).resolve()): str(Path(d).resolve()) for d in args.baseline}
    sources["this checkout"] = None
    width = max(len(name) for name in sources)
    full: dict[str, list[AppRun]] = {name: [] for name in sources}
    paced: dict[str, list[float]] = {name: [] for name in sources}
    loads = [load()]
    for _ in range(args.repeat):
        for name, source in sources.items():
            full[name].append(app_full_speed(args, path, marker, 0, source=source))
        if not args.skip_paced:
            for name, source in sources.items():
                paced[name].append(app_paced(args, path, source=source)[0])
        loads.append(load())
    print(f"load average over the runs: {', '.join(loads)}")
    for name in sources:
        runs = full[name]
        print(
            f"{name:>{width}}: request -> last line {statistics.median(r.seconds for r in runs):.2f} s"
            f" (runs {', '.join(f'{r.seconds:.2f}' for r in runs)}),"
            f" {statistics.median(r.cpu_seconds for r in runs):.2f} CPU s,"
            f" {statistics.median(r.frames for r in runs):.0f} frames,"
            f" last line on screen at the end: {all(r.still_on_screen for r in runs)}"
        )
        if paced[name]:
            print(
                f"{'':>{width}}  CPU at {args.rate:g} deltas/s {statistics.median(paced[name]):.1%}"
                f" (runs {', '.join(f'{p:.1%}' for p in paced[name])})"
            )
    return 0


def find_peer(choice: str) -> Peer | None:
    if choice == "none":
        return None
    found = shutil.which(PEER if choice == "auto" else choice)
    return Peer(found) if found else None


def app_full_speed(
    args: argparse.Namespace,
    answer: Path,
    marker: str,
    idle: float,
    profile: str | None = None,
    peer: Peer | None = None,
    source: str | None = None,
) -> AppRun:
    server = Server(answer, args.delta, None)
    run = AppRun()
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cwd:
        if peer is None:
            env = app_env(server.env(home), source)
            term = Terminal(chat_command(args, cwd, profile), env, cwd, args.width, args.height)
        else:
            env = peer.env(home, cwd, server.env(home))
            term = Terminal(peer.app_command(), env, cwd, args.width, args.height)
        term.start()
        try:
            term.wait_for(b"/help for keys" if peer is None else PEER_READY)
            time.sleep(1.0)  # start-up finished (the SDK preload, the first paints)
            if idle:
                cpu = cpu_seconds(term.process.pid)
                time.sleep(idle)
                run.idle_before = (cpu_seconds(term.process.pid) - cpu) / idle
            mark = term.mark()
            cpu = cpu_seconds(term.process.pid)
            sent = term.type("go\r")
            term.wait_for(marker.encode(), since=mark, timeout=120)
            time.sleep(0.5)  # let a late frame arrive, then find the first one showing it
            found_at, run.written, run.frames, _ = first_frame_showing(term, mark, marker)
            requested = next(t for t in server.proxy.requests if t >= sent)
            run.seconds, run.from_key = found_at - requested, found_at - sent
            run.cpu_seconds = cpu_seconds(term.process.pid) - cpu
            run.cpu = run.cpu_seconds / (time.perf_counter() - sent)
            run.rss_mb = peak_rss_mb(term.process.pid)
            time.sleep(1.0)
            if idle:
                # The answer's blocks above the screen are rendered in the background once
                # it is finished (~2 s for this one): idle starts when the screen is quiet.
                run.settled = term.quiet_for(1.0, timeout=30.0) - found_at
                cpu = cpu_seconds(term.process.pid)
                idle_mark = term.mark()
                time.sleep(idle)
                run.idle_after = (cpu_seconds(term.process.pid) - cpu) / idle
                run.idle_bytes = len(term.bytes_since(idle_mark))
            run.still_on_screen = first_frame_showing(term, mark, marker)[3]
        finally:
            term.close()
            server.close()
    return run


def app_paced(
    args: argparse.Namespace,
    answer: Path,
    profile: str | None = None,
    peer: Peer | None = None,
    source: str | None = None,
) -> tuple[float, int, int, float]:
    """CPU share, bytes and frames over `args.seconds` of a stream at `args.rate` deltas/s."""
    server = Server(answer, args.delta, args.rate * args.delta)
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cwd:
        if peer is None:
            env = app_env(server.env(home), source)
            if profile:
                env["WYCKOFF_BENCH_PROFILE_ON_SIGNAL"] = "1"
            term = Terminal(chat_command(args, cwd, profile), env, cwd, args.width, args.height)
        else:
            env = peer.env(home, cwd, server.env(home))
            term = Terminal(peer.app_command(), env, cwd, args.width, args.height)
        term.start()
        try:
            term.wait_for(b"/help for keys" if peer is None else PEER_READY)
            time.sleep(1.0)
            term.type("go\r")
            deadline = time.perf_counter() + 30
            while not server.proxy.requests and time.perf_counter() < deadline:
                time.sleep(0.01)
            time.sleep(1.0)  # past the start of the stream
            mark = term.mark()
            if profile:
                os.kill(term.process.pid, signal.SIGUSR1)  # profile the window measured only
            cpu, wall = cpu_seconds(term.process.pid), time.perf_counter()
            time.sleep(args.seconds)
            share = (cpu_seconds(term.process.pid) - cpu) / (time.perf_counter() - wall)
            data = term.bytes_since(mark)
            return share, len(data), data.count(SYNC_START), time.perf_counter() - wall
        finally:
            term.close()
            server.close()


def headless(
    args: argparse.Namespace, answer: Path, rate: float | None, peer: Peer | None = None
) -> tuple[float, float]:
    """`wyckoff run` (or the peer's `-p`): seconds from the request to the last text
    delta line read from its stdout (unpaced), or its CPU share over `args.seconds` of
    a paced stream."""
    server = Server(answer, args.delta, rate)
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cwd:
        if peer is None:
            command = [sys.executable, "-m", "wyckoff_cli", "run", "--no-session", "--cwd", cwd]
            command += ["--output-format", "stream-json", "--model", args.model, "go"]
            env = server.env(home)
        else:
            command = [*peer.headless_command(), *peer.headless_extra()]
            env = peer.env(home, cwd, server.env(home))
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        assert child.stdout is not None
        try:
            started = last = 0.0
            cpu = 0.0
            for line in child.stdout:
                if line.startswith(b'{"type": "model_start"') or (peer is not None and not started):
                    started = time.perf_counter()
                elif b'"text_delta"' in line:
                    last = time.perf_counter()
                    if rate is not None:
                        if not cpu:
                            time.sleep(1.0)
                            cpu, wall = cpu_seconds(child.pid), time.perf_counter()
                        elif time.perf_counter() - wall >= args.seconds:
                            return 0.0, (cpu_seconds(child.pid) - cpu) / (time.perf_counter() - wall)
            child.wait()
            assert started, "no model_start line"
            return last - server.proxy.requests[0], 0.0
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            server.close()


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f} (1 min), {five:.2f} (5 min)"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", nargs="?", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--delta", type=int, default=4, help="characters per delta")
    parser.add_argument("--rate", type=float, default=50.0, help="deltas per second for the paced runs")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the paced runs")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle CPU measured (0: skip)")
    parser.add_argument("--width", type=int, default=120)
    parser.add_argument("--height", type=int, default=40)
    parser.add_argument("--model", default="openai:gpt-bench")
    parser.add_argument("--skip-paced", action="store_true")
    parser.add_argument(
        "--peer",
        default="auto",
        help="the peer run beside Wyckoff: auto (`claude` when on PATH), none, or a path to it",
    )
    parser.add_argument(
        "--profile", metavar="FILE", help="run the app under cProfile once, save the stats there"
    )
    parser.add_argument("--profile-paced", action="store_true", help="with --profile: profile a paced run")
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        action="append",
        help="A/B: alternate runs of the wyckoff_cli package in DIR with this checkout's (repeatable)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        path = args.path or next((p for p in (REFERENCE, FALLBACK_REFERENCE) if p.exists()), None)
        if path is None:
            path = Path(scratch) / "answer.md"
            path.write_text(generated_answer(80_280), encoding="utf-8")
            origin = "generated (the reference answer is not here)"
        else:
            origin = str(path.resolve())
        text = path.read_text(encoding="utf-8")
        marker = last_line_marker(text)
        print(
            f"answer: {origin}, {len(text):,} chars, {-(-len(text) // args.delta):,} deltas of {args.delta}"
        )
        print(f"terminal: {args.width}x{args.height} pty, model {args.model}; last line: {marker!r}")
        print(f"load average at start: {load()}")
        if args.baseline:
            return compare(args, path, marker)
        if args.profile and args.profile_paced:
            share, *_ = app_paced(args, path, str(Path(args.profile).resolve()))
            print(f"profiled paced run: {share:.1%} of a core; stats in {args.profile}")
            return 0
        if args.profile:
            profiled = app_full_speed(args, path, marker, 0, str(Path(args.profile).resolve()))
            print(
                f"profiled run: {profiled.seconds:.2f} s, {profiled.cpu_seconds:.2f} CPU s; stats in {args.profile}"
            )
            return 0

        peer = find_peer(args.peer)
        print(
            f"peer: {peer.executable} (runs alternate with Wyckoff's)"
            if peer
            else f"peer: `{PEER}` is not on PATH: Wyckoff alone (issue 36's peer figures are the reference)"
        )
        runs: list[AppRun] = []
        peer_runs: list[AppRun] = []
        for i in range(args.repeat):
            runs.append(app_full_speed(args, path, marker, args.idle if i == 0 else 0))
            if peer is not None:
                peer_runs.append(app_full_speed(args, path, marker, 0, peer=peer))
        seconds = statistics.median(r.seconds for r in runs)
        cpu = statistics.median(r.cpu for r in runs)
        written = statistics.median(r.written for r in runs)
        frames = statistics.median(r.frames for r in runs)
        rss = max(r.rss_mb for r in runs)
        quiet = 2 / CLK_TCK / max(args.idle, 1)  # "0%": at most two ticks of /proc accounting
        head: list[float] = []
        peer_head: list[float] = []
        for _ in range(args.repeat):
            head.append(headless(args, path, None)[0])
            if peer is not None:
                peer_head.append(headless(args, path, None, peer)[0])
        rows = [
            (
                "request -> last line on screen",
                f"{seconds:.2f} s",
                f"< {TARGET_SECONDS:g} s",
                seconds < TARGET_SECONDS,
            ),
            (
                "  from the Enter key (first turn)",
                f"{statistics.median(r.from_key for r in runs):.2f} s",
                "",
                None,
            ),
            ("CPU, Enter -> last line (+0.5 s)", f"{cpu:.0%} of a core", "", None),
            (
                "  CPU time of the app for the answer",
                f"{statistics.median(r.cpu_seconds for r in runs):.2f} s",
                "",
                None,
            ),
            ("bytes written to the terminal", f"{written / 1024:,.0f} KiB", "", None),
            ("frames / bytes per frame", f"{frames:.0f} / {written / max(frames, 1):,.0f} B", "", None),
            ("peak RSS of the app", f"{rss:.0f} MB", f"< {TARGET_RSS_MB:g} MB", rss < TARGET_RSS_MB),
            (
                "idle CPU before the prompt (10 s)",
                f"{runs[0].idle_before:.2%}",
                "0%",
                runs[0].idle_before <= quiet,
            ),
            (
                "idle CPU after the answer (10 s)",
                f"{runs[0].idle_after:.2%}",
                "0%",
                runs[0].idle_after <= quiet,
            ),
            ("  bytes written while idle", str(runs[0].idle_bytes), "0", runs[0].idle_bytes == 0),
            (
                "  last frame after the last line (background render)",
                f"{runs[0].settled:.2f} s",
                "",
                None,
            ),
            ("last line still on screen at the end", str(all(r.still_on_screen for r in runs)), "True", None),
            ("headless (wyckoff run): request -> last delta", f"{statistics.median(head):.2f} s", "", None),
        ]
        if peer is not None:
            theirs = statistics.median(r.seconds for r in peer_runs)
            their_head = statistics.median(peer_head)
            rows += [
                (f"{PEER}: request -> last line on screen", f"{theirs:.2f} s", "", None),
                ("  Wyckoff / peer", f"{seconds / theirs:.2f}x", "<= 1x", seconds <= theirs),
                (f"{PEER} -p: request -> last delta", f"{their_head:.2f} s", "", None),
                (
                    "  Wyckoff / peer, headless",
                    f"{statistics.median(head) / their_head:.2f}x",
                    "<= 1x",
                    statistics.median(head) <= their_head,
                ),
            ]
        detail = [
            f"app runs: {', '.join(f'{r.seconds:.2f}' for r in runs)} s; CPU {', '.join(f'{r.cpu:.0%}' for r in runs)}",
            f"headless runs: {', '.join(f'{s:.2f}' for s in head)} s",
        ]
        if not args.skip_paced:
            paced = [app_paced(args, path) for _ in range(args.repeat)]
            share = statistics.median(p[0] for p in paced)
            pbytes = statistics.median(p[1] / p[3] for p in paced)
            pframes = statistics.median(p[2] / p[3] for p in paced)
            rows.append(
                (
                    f"app CPU at {args.rate:g} deltas/s",
                    f"{share:.1%} of a core",
                    f"< {TARGET_CPU_APP:.0%}",
                    share < TARGET_CPU_APP,
                )
            )
            rows.append(
                (
                    f"  frames/s, bytes/s at {args.rate:g}/s",
                    f"{pframes:.1f}, {pbytes / 1024:.1f} KiB",
                    "",
                    None,
                )
            )
            hshare = statistics.median(
                headless(args, path, args.rate * args.delta)[1] for _ in range(args.repeat)
            )
            rows.append(
                (
                    f"headless CPU at {args.rate:g} deltas/s",
                    f"{hshare:.1%} of a core",
                    f"< {TARGET_CPU_HEADLESS:.0%}",
                    hshare < TARGET_CPU_HEADLESS,
                )
            )
            detail.append(f"paced app runs: {', '.join(f'{p[0]:.1%}' for p in paced)}")
            if peer is not None:
                theirs_paced = statistics.median(
                    app_paced(args, path, peer=peer)[0] for _ in range(args.repeat)
                )
                rows.append(
                    (
                        f"  {PEER} CPU at {args.rate:g} deltas/s",
                        f"{theirs_paced:.1%} of a core",
                        f"> {share:.1%}",
                        share <= theirs_paced,
                    )
                )
    print(f"load average at end: {load()}")
    for line in detail:
        print(line)
    print()
    print(f"{'figure':<40} {'measured':>20} {'target':>9}  result")
    for name, value, target, ok in rows:
        print(f"{name:<40} {value:>20} {target:>9}  {'' if ok is None else ('met' if ok else 'MISSED')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
