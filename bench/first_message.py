"""The first message of a fresh app, where users felt a freeze: `wyckoff chat` in a real
pseudo-terminal against the fake server.

The app starts on a pty (this process is the terminal, replaying what it writes through
`pyte`); as soon as the prompt is on screen a message is typed and, once the prompt shows
it, sent with Enter, and then one key every `--interval` seconds for `--keys` keys, as a
person keeps typing while the model starts to answer. For each key it measures the time until the prompt on screen
shows it (the echo). It reports, per run: launch → the first paint, Enter → the message echoed in the transcript,
the worst and the median key echo during the first turn, Enter → the request at the
server, the server's own latency (the request → its first text delta, as the relay in
front of it sees them pass), that delta → on screen, and Enter → the answer's first
token on screen (issue 36: under 0.3 s plus the server's own latency). The message is
sent at once when the prompt appears (the worst case: the imports started after the
first paint are still running) and, in alternate runs, `--later` seconds after it (a
person who reads the screen first). Times on screen are those of the terminal read that
brought the change (not of this process's next look).

    python bench/first_message.py [--runs 3] [--keys 15] [--interval 0.1] [--later 1.5]
                                  [--width 100] [--height 32] [--baseline DIR ...]

`--baseline DIR` (repeatable; DIR holds another version's `wyckoff_cli`, e.g. `git
archive main | tar -x -C DIR`): every run is made with each version in turn (A, B, A,
B, ...), so both see the same load; the figures are given per version.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyte
from stream_e2e import Server, Terminal, app_env, cpu_seconds

MESSAGE = "hello there"
ANSWER = "A short answer, streamed slowly so the first turn lasts a while. "
FIRST_WORDS = ANSWER[:4]  # the first delta (4 characters)
KEYS = "qwertyuiopasdfghjklzxcvbnm"
PROMPT = "│ "  # the prompt box's left edge: what the prompt shows follows it
TARGET_OURS = 0.3  # Enter -> first token on screen, less the server's own latency
FIGURES = (
    ("paint", "launch -> first paint", "(the prompt on screen)"),
    ("echo_message", "Enter -> message echoed", ""),
    ("worst_key", "worst key echo, first turn", ""),
    ("median_key", "median key echo", ""),
    ("to_request", "Enter -> request at server", ""),
    ("server", "request -> first delta sent", "(the server's own latency)"),
    ("delta_to_screen", "first delta -> on screen", ""),
    ("first_token", "Enter -> first token shown", ""),
    ("ours", "  less the server's latency", f"(target < {TARGET_OURS * 1000:.0f} ms)"),
    ("cpu_to_token", "app CPU, Enter -> first token", "(user + system, from /proc)"),
)


class Screen:
    """An incremental VT100 screen over what the app wrote. `wait` answers with the
    arrival time of the terminal read after which the screen first met the condition."""

    def __init__(self, terminal: Terminal) -> None:
        self.terminal = terminal
        self.screen = pyte.Screen(terminal.width, terminal.height)
        self.stream = pyte.ByteStream(self.screen)
        self.fed = 0
        self.first_token: float | None = None  # when the answer's first words were on screen
        self.token_cpu = 0.0  # the app's CPU seconds when this process saw them
        self.shown = ""
        self.arrived = 0.0  # when the last read fed to the screen arrived

    def _feed(self, until: Callable[[str], bool] | None) -> bool:
        """Feed the reads that arrived, one at a time; True as soon as `until` holds."""
        with self.terminal._lock:
            chunks = self.terminal.chunks[self.fed :]
        for arrived, data in chunks:
            self.stream.feed(data)
            self.fed += 1
            self.arrived = arrived
            self.shown = "\n".join(self.screen.display)
            if self.first_token is None and FIRST_WORDS in self.shown:
                self.first_token = arrived
                self.token_cpu = cpu_seconds(self.terminal.process.pid)
            if until is not None and until(self.shown):
                return True
        return False

    def text(self) -> str:
        self._feed(None)
        return self.shown

    def wait(self, predicate: Callable[[str], bool], timeout: float = 30.0) -> float:
        if predicate(self.shown):
            return self.arrived
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self._feed(predicate):
                return self.arrived
            time.sleep(0.002)
        raise RuntimeError("timed out; the screen:\n" + self.text())


def one_run(server: Server, delay: float, args: argparse.Namespace, source: str | None) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="wyckoff-bench-") as folder:
        return _run_in(server, delay, args, f"{folder}/home", f"{folder}/project", source)


def _run_in(
    server: Server, delay: float, args: argparse.Namespace, home: str, project: str, source: str | None
) -> dict[str, float]:
    os.makedirs(project)
    env = app_env(server.env(home), source)
    command = [sys.executable, "-m", "wyckoff_cli", "chat", "--model", "anthropic:claude-sonnet-4-5", project]
    terminal = Terminal(command, env, project, args.width, args.height)
    launched = time.perf_counter()
    terminal.start()
    screen = Screen(terminal)
    try:
        painted = screen.wait(lambda text: "/help for keys" in text, timeout=60)
        time.sleep(delay)
        terminal.type(MESSAGE)  # typed, then sent once the prompt shows it: the clock starts at Enter
        screen.wait(lambda text: f"{PROMPT}{MESSAGE}" in text)
        cpu = cpu_seconds(terminal.process.pid)
        sent = terminal.type("\r")
        echoed = screen.wait(lambda text: f"█ {MESSAGE}" in text)  # the user's line in the transcript
        latencies = []
        typed = ""
        for key in KEYS[: args.keys]:
            typed += key
            pressed = terminal.type(key)
            shown = screen.wait(lambda text, t=typed: f"{PROMPT}{t}" in text)  # in the prompt, not anywhere
            latencies.append(shown - pressed)
            time.sleep(max(0.0, args.interval - (time.perf_counter() - pressed)))
        first = screen.first_token or screen.wait(lambda text: FIRST_WORDS in text)
        # read only now: a message sent at once may reach the server after the keys
        # (it waits for the SDK's import); the first token came through the relay after it
        request = _after(server.proxy.requests, sent, "request")
        delta = _after(server.proxy.first_deltas, request, "text delta")
        return {
            "paint": painted - launched,
            "first_token": first - sent,
            "echo_message": echoed - sent,
            "worst_key": max(latencies),
            "median_key": statistics.median(latencies),
            "to_request": request - sent,
            "server": delta - request,
            "delta_to_screen": first - delta,
            "ours": first - sent - (delta - request),
            "cpu_to_token": screen.token_cpu - cpu,
        }
    finally:
        terminal.close()


def _after(times: list[float], start: float, what: str) -> float:
    """The first time in `times` (the relay's, appended by its threads) after `start`;
    NaN, said on stderr, when the relay saw none (the app reached the server some other
    way, e.g. a proxy variable, or never made the request)."""
    found = next((t for t in list(times) if t >= start), None)
    if found is None:
        print(f"  (the relay saw no {what} after Enter: that figure is NaN)", file=sys.stderr)
        return math.nan
    return found


def report(label: str, runs: list[dict[str, float]]) -> None:
    print(f"{label}:")
    for name, title, note in FIGURES:
        values = [r[name] * 1000 for r in runs]
        each = ", ".join(f"{v:.0f}" for v in values)
        print(f"  {title:<28} {statistics.median(values):7.0f} ms  {note}  [runs {each}]".rstrip())
    worst = max(r["worst_key"] for r in runs) * 1000
    print(f"  {'worst key echo of all runs':<28} {worst:7.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keys", type=int, default=15)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--later", type=float, default=1.5)
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--height", type=int, default=32)
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        action="append",
        default=[],
        help="A/B: alternate runs of the wyckoff_cli package in DIR with this checkout's (repeatable)",
    )
    args = parser.parse_args()
    folder = tempfile.TemporaryDirectory(prefix="wyckoff-bench-answer-")
    answer = Path(folder.name) / "answer.md"
    answer.write_text(ANSWER * 20)
    server = Server(answer, chunk=4, rate=50)
    sources: dict[str, str | None] = {str(Path(d).resolve()): str(Path(d).resolve()) for d in args.baseline}
    sources["this checkout"] = None
    bytecode = (
        "not written (PYTHONDONTWRITEBYTECODE: every start compiles Wyckoff's modules)"
        if os.environ.get("PYTHONDONTWRITEBYTECODE")
        else "written and reused"
    )
    print(
        f"load average {os.getloadavg()[0]:.2f}; {args.keys} keys every {args.interval:g} s after Enter;"
        f" bytecode {bytecode}"
    )
    delays = (0.0, args.later)
    rows: dict[tuple[str, float], list[dict[str, float]]] = {
        (name, delay): [] for name in sources for delay in delays
    }
    loads = []
    try:
        for _ in range(args.runs):
            for delay in delays:
                for name, source in sources.items():
                    rows[name, delay].append(one_run(server, delay, args, source))
            loads.append(f"{os.getloadavg()[0]:.2f}")
    finally:
        server.close()
        folder.cleanup()
    print(f"load average after each round: {', '.join(loads)}")
    for name in sources:
        for delay in delays:
            label = "sent at the first paint" if not delay else f"sent {delay:g} s after the first paint"
            report(f"{name}, {label}" if len(sources) > 1 else label, rows[name, delay])


if __name__ == "__main__":
    main()
