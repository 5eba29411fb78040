"""A long session run live in the app: 2,000 tool calls in one app session, then typing.

`bench/long_session.py` measures a session of 2,000 tool calls *resumed*; this one runs
them *live*: the app (headless, 100x40, `WyckoffApp` over the `SessionBuilder` and
`ChatController` as `wyckoff chat` builds them) sends one message to a scripted model
that asks for one `read_file` call per round (of 200 small files in turn, so the runaway
guard never trips) for N rounds, then answers. Each figure comes from a fresh process:

1. keys in a fresh session: a letter typed into the prompt (posted as the driver posts
   it), timed until it is in the prompt and the screen refreshed after it; then a
   backspace, the same way; `--keys` of them, one every `--key-interval` s;
2. the N rounds in the app: Enter -> the turn's end, with keys typed the same way
   *while the rounds run*; then the same keys typed again after the turn, in the
   transcript the rounds left behind (what a user feels after a few hundred calls);
3. peak RSS of the app process;
4. the same N rounds headless: `wyckoff run --model scripted:FILE` in a subprocess,
   minus the same command with a one-round script (start-up), median of `--runs`.

Wall-clock times follow the machine's load; the CPU seconds of the rounds (the app
process's, the headless runs' from `getrusage`) and the app's layout passes (Textual's
`Screen._refresh_layout`, counted) are printed beside them, for comparing versions on a
shared machine.

Targets (issue 36): keys after the live rounds within 30 ms at the 95th percentile and at
most 1.5x a fresh session; peak RSS under 300 MB; the rounds in the app at most 5x their
time headless.

    python bench/live_session.py [--rounds 2000] [--keys 60] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from long_session import _refreshed, _until, peak_rss_mb, rss_mb

TARGET_KEY_P95 = 0.030
TARGET_KEY_RATIO = 1.5
TARGET_RSS_MB = 300.0
TARGET_APP_RATIO = 5.0
FILES = 200


def make_project(tmp: Path, rounds: int) -> tuple[Path, Path, Path, dict[str, str]]:
    """A project of FILES small files, the N-round script, a one-round script, the env."""
    project = tmp / "project"
    (project / ".wyckoff").mkdir(parents=True)
    (project / ".wyckoff" / "config.toml").write_text(f"max_tool_rounds = {rounds + 1}\n", encoding="utf-8")
    for index in range(FILES):
        body = "".join(f"def f{index}_{line}(x):\n    return x + {line}\n" for line in range(12))
        (project / f"mod_{index:03}.py").write_text(body, encoding="utf-8")
    calls = [
        {
            "text": f"Round {n}: reading the next module.",
            "tool_calls": [{"name": "read_file", "args": {"path": f"mod_{n % FILES:03}.py"}}],
        }
        for n in range(rounds)
    ]
    script = tmp / "rounds.json"
    script.write_text(json.dumps([*calls, {"text": "Done: every module read."}]), encoding="utf-8")
    one = tmp / "one.json"
    one.write_text(json.dumps([{"text": "Done: every module read."}]), encoding="utf-8")
    env = {
        **os.environ,
        "WYCKOFF_HOME": str(tmp / "home"),
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])
        ),
        "PYTHONPYCACHEPREFIX": str(tmp / "pycache"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return project, script, one, env


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def child(
    project: Path, script: Path, keys: int, interval: float, size: tuple[int, int]
) -> dict[str, Any]:
    import wyckoff_cli.tui  # noqa: F401  (first: the Textual settings the app runs with)

    # isort: split
    from textual import events
    from textual.screen import Screen
    from textual.worker import WorkerState

    from wyckoff_cli.session.builder import SessionBuilder, open_workspace
    from wyckoff_cli.session.controller import ChatController
    from wyckoff_cli.tui.app import WyckoffApp
    from wyckoff_cli.tui.widgets.prompt_input import PromptInput

    out: dict[str, Any] = {"rss_start": rss_mb()}
    passes = [0]
    layout = Screen._refresh_layout

    def counted(screen: Any, *args: Any, **kwargs: Any) -> Any:
        passes[0] += 1
        return layout(screen, *args, **kwargs)

    Screen._refresh_layout = counted  # type: ignore[method-assign]
    builder = SessionBuilder(open_workspace(project), cwd=project)
    app = WyckoffApp(ChatController(builder, model=f"scripted:{script}"))

    def busy() -> bool:
        return any(
            w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers if w.group != "warm"
        )

    async with app.run_test(size=size):
        await _until(lambda: isinstance(app.focused, PromptInput))
        prompt = app.focused
        assert isinstance(prompt, PromptInput)
        await asyncio.sleep(1.0)  # the post-paint warm-up (imports in a thread) is done

        async def one_key(key: str, character: str | None) -> float:
            before = prompt.text
            began = time.perf_counter()
            app.post_message(events.Key(key, character))
            await _until(lambda: prompt.text != before, timeout=120)
            await _refreshed(app)
            return time.perf_counter() - began

        async def type_keys(count: int, until_done: bool = False) -> list[float]:
            times: list[float] = []
            while len(times) < count or (until_done and busy()):
                times.append(await one_key("z", "z"))
                times.append(await one_key("backspace", None))
                await asyncio.sleep(interval)
                if until_done and not busy():
                    break
            return times

        out["fresh_keys"] = await type_keys(keys)
        prompt.load_text("read every module")
        began, cpu_began, passes_began = time.perf_counter(), time.process_time(), passes[0]
        app.post_message(events.Key("enter", "\r"))
        await _until(busy, timeout=30)
        await asyncio.sleep(0.5)
        assert not prompt.text, "the message was not sent"
        out["during_keys"] = await type_keys(0, until_done=True)
        await _until(lambda: not busy(), timeout=1800, step=0.05)
        out["rounds_seconds"] = time.perf_counter() - began
        out["rounds_cpu"] = time.process_time() - cpu_began
        out["layout_passes"] = passes[0] - passes_began
        await _refreshed(app)
        assert app.chat is not None
        out["entries"] = len(app.chat.transcript.children)
        shown = app.chat.transcript.export_text()
        out["answer_shown"] = "Done: every module read." in shown
        out["rss_after"] = rss_mb()
        out["after_keys"] = await type_keys(keys)
    out["rss_peak"] = peak_rss_mb()
    return out


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def headless_seconds(project: Path, script: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one `wyckoff run`."""
    command = [sys.executable, "-m", "wyckoff_cli", "run", "--model", f"scripted:{script}"]
    command += ["--output-format", "stream-json", "read every module"]
    began, cpu_began = time.perf_counter(), _children_cpu()
    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=1800)
    seconds, cpu = time.perf_counter() - began, _children_cpu() - cpu_began
    if done.returncode != 0:
        raise RuntimeError(f"wyckoff run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    if "every module read" not in done.stdout:
        raise RuntimeError("wyckoff run did not give the final answer")
    return seconds, cpu


def _ms(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {p95(values) * 1000:.1f} ms, max {max(values) * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--keys", type=int, default=60, help="letter + backspace pairs before and after")
    parser.add_argument("--key-interval", type=float, default=0.05)
    parser.add_argument("--runs", type=int, default=3, help="headless runs (median)")
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--height", type=int, default=40)
    parser.add_argument("--child", nargs=2, metavar=("PROJECT", "SCRIPT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    size = (args.width, args.height)
    if args.child:
        project, script = map(Path, args.child)
        result = asyncio.run(child(project, script, args.keys, args.key_interval, size))
        print(json.dumps(result))
        return

    with tempfile.TemporaryDirectory(prefix="wyckoff-bench-") as tmp:
        project, script, one, env = make_project(Path(tmp), args.rounds)
        print(f"{args.rounds:,} rounds of one read_file call each, app headless {args.width}x{args.height}")
        print(f"load average at start: {os.getloadavg()[0]:.2f}")
        headless_seconds(project, one, env)  # warm-up: bytecode, disk cache
        start_runs = [headless_seconds(project, one, env) for _ in range(args.runs)]
        full_runs = [headless_seconds(project, script, env) for _ in range(args.runs)]
        starts, fulls = [wall for wall, _ in start_runs], [wall for wall, _ in full_runs]
        headless = statistics.median(fulls) - statistics.median(starts)
        headless_cpu = statistics.median(cpu for _, cpu in full_runs) - statistics.median(
            cpu for _, cpu in start_runs
        )
        print(
            f"headless: {statistics.median(fulls):.2f} s for the run, {statistics.median(starts):.2f} s for a"
            f" one-round run -> the rounds {headless:.2f} s ({headless / args.rounds * 1000:.2f} ms a round),"
            f" {headless_cpu:.2f} s CPU"
        )
        command = [sys.executable, __file__, "--child", str(project), str(script)]
        command += ["--keys", str(args.keys), "--key-interval", str(args.key_interval)]
        command += ["--width", str(args.width), "--height", str(args.height)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise SystemExit(f"app run failed ({done.returncode}):\n{done.stderr[-3000:]}")
        app = json.loads(done.stdout.strip().splitlines()[-1])
        ratio = app["rounds_seconds"] / headless if headless > 0 else float("inf")
        print(
            f"app: the rounds took {app['rounds_seconds']:.2f} s ({ratio:.1f}x headless, target <= {TARGET_APP_RATIO:g}x"
            f" -- {'met' if ratio <= TARGET_APP_RATIO else 'MISSED'}); {app['entries']} entries in the transcript;"
            f" final answer shown: {app['answer_shown']}"
        )
        cpu_ratio = app["rounds_cpu"] / headless_cpu if headless_cpu > 0 else float("inf")
        print(
            f"app CPU for the rounds: {app['rounds_cpu']:.2f} s ({cpu_ratio:.1f}x headless CPU);"
            f" {app['layout_passes']} layout passes ({app['layout_passes'] / args.rounds:.2f} a round);"
            f" load average now {os.getloadavg()[0]:.2f}"
        )
        fresh, during, after = app["fresh_keys"], app["during_keys"], app["after_keys"]
        print(f"keys, fresh session:        {_ms(fresh)} ({len(fresh)} keys)")
        print(f"keys, while the rounds run: {_ms(during)} ({len(during)} keys)")
        print(f"keys, after the rounds:     {_ms(after)} ({len(after)} keys)")
        key_ratio = p95(after) / p95(fresh)
        met = p95(after) <= TARGET_KEY_P95 and key_ratio <= TARGET_KEY_RATIO
        print(
            f"keys after the rounds at p95: {p95(after) * 1000:.1f} ms, {key_ratio:.2f}x a fresh session"
            f" (target <= {TARGET_KEY_P95 * 1000:.0f} ms and <= {TARGET_KEY_RATIO:g}x) -- {'met' if met else 'MISSED'}"
        )
        print(
            f"RSS: {app['rss_start']:.0f} MB after imports, {app['rss_after']:.0f} MB after the rounds,"
            f" peak {app['rss_peak']:.0f} MB (target < {TARGET_RSS_MB:g} MB --"
            f" {'met' if app['rss_peak'] < TARGET_RSS_MB else 'MISSED'})"
        )


if __name__ == "__main__":
    main()
