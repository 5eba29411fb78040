"""Streaming Markdown render: the real transcript widget, headless, fed 4-char deltas.

Streams a Markdown answer (default: the 80 KB reference answer used by the peer
comparison) into a `MarkdownStreamView` inside a `Transcript`, in a headless Textual
app, and reports:

1. time from the first delta to the whole answer on screen, deltas pushed as fast
   as possible (one event-loop turn per delta), until the final paint of the last
   line -- target < 2 s;
2. the same for the text doubled -- target: at most 2.3x the time;
3. peak RSS of the process after the 1x runs -- target < 150 MB;
4. CPU share of one core while deltas arrive at 50 per second for ~10 s
   (process CPU time / wall time) -- target < 10%.

    python bench/stream_render.py [PATH] [--repeat 3] [--width 100] [--height 40]
                                  [--rate 50] [--seconds 10] [--cpu-runs 3] [--delta 4]
                                  [--skip-cpu]

Without PATH it uses ../shared/reference/bench/answer_80k.md, or, when that file is
missing, a generated answer of the same size and shape.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import time
from pathlib import Path

from textual.app import App, ComposeResult
from textual.strip import Strip

from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
from wyckoff_cli.tui.widgets.transcript import Transcript

REFERENCE = Path("/work/shared/reference/bench/answer_80k.md")
TARGET_SECONDS = 2.0
TARGET_GROWTH = 2.3
TARGET_RSS_MB = 150.0
TARGET_CPU = 0.10


def generated_answer(size: int = 80_000) -> str:
    """A deterministic answer shaped like a coding assistant's: headings, prose with
    inline markup, nested lists, Python code blocks, tables and quotes."""
    parts: list[str] = []
    step = 0
    while sum(map(len, parts)) < size:
        step += 1
        parts.append(
            f"## Step {step}: update `module_{step}.py`\n\n"
            f"Here is what changes in step {step}. The function **parse_{step}** now accepts an "
            "optional `limit` argument, and the caller in [`cli.py`](https://example.com/cli.py) "
            f"passes it through. This keeps the *public API* stable while fixing issue #{100 + step}.\n\n"
            f"- read the config file once at start-up\n- cache the parsed result in `_cache_{step}`\n"
            "  - invalidate it when the file's mtime changes\n  - keep at most 128 entries\n"
            "- log a warning for unknown keys\n\n1. run the unit tests\n2. run the linter\n3. commit the change\n\n"
            f"```python\ndef parse_{step}(text: str, limit: int | None = None) -> list[str]:\n"
            '    """Split text into tokens, keeping at most `limit`."""\n'
            "    tokens = [t for t in text.split() if t]\n    if limit is not None:\n"
            f"        tokens = tokens[:limit]\n    return tokens  # step {step}\n```\n\n"
        )
        if step % 3 == 0:
            parts.append(f"> Note: step {step} needs no migration.\n\n")
        if step % 4 == 0:
            parts.append(
                "| file | lines | status |\n|---|---:|---|\n"
                f"| module_{step}.py | {step * 10} | changed |\n| test_{step}.py | {step * 3} | added |\n\n"
            )
    return "".join(parts)[:size]


class _View(MarkdownStreamView):
    """The real widget, recording when its last line was last painted."""

    bottom_painted_at = 0.0

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if y == self.line_count - 1:
            self.bottom_painted_at = time.perf_counter()
            self.first_bottom_paint.setdefault(self._width, self.bottom_painted_at)
        return strip

    @property
    def first_bottom_paint(self) -> dict[int, float]:
        """When the last line was first painted, per width."""
        if not hasattr(self, "_first_bottom_paint"):
            self._first_bottom_paint: dict[int, float] = {}
        return self._first_bottom_paint


class _BenchApp(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript()


def _deltas(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def full_speed(text: str, size: tuple[int, int], delta: int) -> float:
    """Seconds from the first delta to the final paint of the finished answer."""
    deltas = _deltas(text, delta)
    app = _BenchApp()
    async with app.run_test(size=size) as pilot:
        view = _View()
        await app.query_one(Transcript).mount(view)
        await pilot.pause()
        started = time.perf_counter()
        for piece in deltas:
            view.append(piece)
            await asyncio.sleep(0)  # one event-loop turn per delta, as a network stream gives
        view.finish()
        settled_at = time.perf_counter()
        deadline = started + 60
        while not (view.is_settled and view.bottom_painted_at > settled_at):
            if time.perf_counter() > deadline:
                raise RuntimeError(
                    f"the answer never settled on screen: settled={view.is_settled} "
                    f"lines={view.line_count} size={view.size} painted_after={view.bottom_painted_at > settled_at}"
                )
            if not view.is_settled:
                settled_at = time.perf_counter()
            await asyncio.sleep(0.001)
        return view.bottom_painted_at - started


async def resize(text: str, size: tuple[int, int], new_width: int) -> tuple[float, float]:
    """After the finished answer is on screen, narrow the terminal: seconds until the
    bottom line is first painted at the new width, and until every block is re-wrapped."""
    app = _BenchApp()
    async with app.run_test(size=size) as pilot:
        view = _View(text)
        view.finish()
        await app.query_one(Transcript).mount(view)
        while not view.is_settled:
            await pilot.pause()
        await pilot.pause()
        started = time.perf_counter()
        await pilot.resize_terminal(new_width, size[1])
        while not view.is_settled or view.size.width != view._width:
            await asyncio.sleep(0.001)
        width = view._width
        while width not in view.first_bottom_paint:
            await asyncio.sleep(0.001)
        return view.first_bottom_paint[width] - started, time.perf_counter() - started


async def paced(
    text: str, size: tuple[int, int], delta: int, rate: float, seconds: float
) -> tuple[float, int]:
    """CPU share of one core while deltas arrive at `rate` per second."""
    deltas = _deltas(text, delta)[: int(rate * seconds)]
    app = _BenchApp()
    async with app.run_test(size=size) as pilot:
        view = _View()
        await app.query_one(Transcript).mount(view)
        await pilot.pause()
        cpu, wall = time.process_time(), time.perf_counter()
        for index, piece in enumerate(deltas):
            view.append(piece)
            await asyncio.sleep(max(0.0, wall + (index + 1) / rate - time.perf_counter()))
        share = (time.process_time() - cpu) / (time.perf_counter() - wall)
        return share, view.flushes


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", nargs="?", type=Path, default=REFERENCE)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--height", type=int, default=40)
    parser.add_argument("--delta", type=int, default=4, help="characters per delta")
    parser.add_argument("--rate", type=float, default=50.0, help="deltas per second for the CPU run")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the CPU run")
    parser.add_argument("--cpu-runs", type=int, default=3, help="CPU runs; the median is reported")
    parser.add_argument("--skip-cpu", action="store_true")
    args = parser.parse_args()

    if args.path.exists():
        text, origin = args.path.read_text(encoding="utf-8"), str(args.path)
    else:
        text, origin = generated_answer(), f"generated ({args.path} not found)"
    size = (args.width, args.height)
    print(f"answer: {origin}, {len(text):,} chars, {len(_deltas(text, args.delta)):,} deltas of {args.delta}")
    print(
        f"terminal: {args.width}x{args.height}, headless; 1x runs: {args.repeat * 2}, 2x runs: {args.repeat}"
    )

    single = [asyncio.run(full_speed(text, size, args.delta)) for _ in range(args.repeat)]
    rss = peak_rss_mb()
    # 1x and 2x runs alternate, so a change in machine load hits both alike.
    double_text = text + "\n\n" + text
    double: list[float] = []
    for _ in range(args.repeat):
        double.append(asyncio.run(full_speed(double_text, size, args.delta)))
        single.append(asyncio.run(full_speed(text, size, args.delta)))
    one, two = statistics.median(single), statistics.median(double)
    growth = two / one

    cpu_note = ""
    rows = [
        ("whole answer on screen (1x)", f"{one:.2f} s", f"< {TARGET_SECONDS:g} s", one < TARGET_SECONDS),
        ("whole answer on screen (2x)", f"{two:.2f} s", "", None),
        ("growth for 2x the text", f"{growth:.2f}x", f"<= {TARGET_GROWTH:g}x", growth <= TARGET_GROWTH),
        ("peak RSS (after the 1x runs)", f"{rss:.0f} MB", f"< {TARGET_RSS_MB:g} MB", rss < TARGET_RSS_MB),
    ]
    first_paint, rewrapped = asyncio.run(resize(text, size, args.width * 3 // 4))
    rows.append(
        (f"resize to {args.width * 3 // 4} cols: bottom repainted", f"{first_paint * 1000:.0f} ms", "", None)
    )
    rows.append(("resize: every block re-wrapped", f"{rewrapped:.2f} s", "", None))
    if not args.skip_cpu:
        cpu_runs = [
            asyncio.run(paced(text, size, args.delta, args.rate, args.seconds)) for _ in range(args.cpu_runs)
        ]
        share = statistics.median(run[0] for run in cpu_runs)
        flushes = round(statistics.median(run[1] for run in cpu_runs))
        cpu_note = f"; CPU runs: {', '.join(f'{run[0]:.1%}' for run in cpu_runs)}"
        rows.append(
            (
                f"CPU at {args.rate:g} deltas/s ({flushes} flushes)",
                f"{share:.1%} of a core",
                f"< {TARGET_CPU:.0%}",
                share < TARGET_CPU,
            )
        )
    print(
        f"runs 1x: {', '.join(f'{v:.2f}' for v in single)} s; 2x: {', '.join(f'{v:.2f}' for v in double)} s{cpu_note}"
    )
    print()
    print(f"{'figure':<38} {'measured':>18} {'target':>10}  result")
    for name, value, target, ok in rows:
        print(f"{name:<38} {value:>18} {target:>10}  {'' if ok is None else _verdict(ok)}")


if __name__ == "__main__":
    main()
