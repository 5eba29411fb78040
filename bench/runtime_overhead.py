"""The agent loop's own cost per tool round.

A scripted provider requests one trivial tool call per round for N rounds (no
network, no sleeps), so the time measured is the loop itself: event construction,
fragment assembly, guards, batching, history bookkeeping. Target: < 2 ms per round.

    python bench/runtime_overhead.py [--rounds 1000] [--repeat 3]

`--real` runs the same kind of session through the composition `wyckoff run` uses --
`main(["run", ...])` itself, in this process: config, the context manager (token
estimates, memory recall), the session recorder and scratchpad, the built-in
`read_file` tool on small files, the run summary, text output (to /dev/null) -- with
a context window of 100M tokens so nothing is compacted. The scripted provider's
`chat_stream` is wrapped to stamp each call: a round's cost is the time between two
calls. What a real provider would spend serialising the whole history into its
request (the OpenAI adapter's `convert_messages` + `json.dumps`) is measured at each
sample point and reported separately, not counted in the round. RSS is sampled every
100 rounds. Targets: the round cost at the last round within 2x of round 100; RSS
within 10% from the end of warm-up (round 1,000, or a tenth of the run) to the end.

    python bench/runtime_overhead.py --real --rounds 10000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.loop import AgentRuntime, RuntimeSettings
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.registry import ToolRegistry


async def trivial(args: dict[str, Any], ctx: ToolContext) -> str:
    return "ok"


async def one_run(rounds: int, workspace: Path) -> tuple[float, int]:
    script: list[Any] = [
        {"text": "step", "tool_calls": [{"name": "noop", "args": {"n": n}}], "usage": {"input_tokens": 10}}
        for n in range(rounds)
    ]
    script.append({"text": "done"})
    provider = ScriptedProvider(script)
    tool = Tool(
        "noop",
        "Does nothing.",
        {"type": "object", "properties": {"n": {"type": "integer"}}},
        trivial,
        concurrency_safe=True,
    )
    runtime = AgentRuntime(
        provider,
        ToolRegistry([tool]),
        workspace=workspace,
        settings=RuntimeSettings(max_tool_rounds=rounds + 1, doom_loop_repeats=rounds + 1),
    )
    started = time.perf_counter()
    events = 0
    async for _ in runtime.run_stream(Conversation(), "go"):
        events += 1
    return time.perf_counter() - started, events


# --------------------------------------------------------------------------- --real


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def real_run(rounds: int, sample_every: int = 100, serialise: bool = True) -> dict[str, Any]:
    """One `wyckoff run` of `rounds` tool rounds; per-round costs, serialisation, RSS."""
    from wyckoff_cli.cli.main import main as wyckoff_main
    from wyckoff_cli.providers.openai_compat import convert_messages
    from wyckoff_cli.providers.scripted import ScriptedProvider

    stamps: list[float] = []
    excluded: list[float] = []  # time spent measuring inside the wrapper, per call
    serialise_ms: dict[int, float] = {}
    rss: dict[int, float] = {}
    original = ScriptedProvider.chat_stream

    def stamped(self: ScriptedProvider, messages: Any, tools: Any, system_prompt: str) -> Any:
        now = time.perf_counter()
        stamps.append(now)
        call = len(stamps)
        if call % sample_every == 0 or call in (1, rounds):
            if serialise:
                converted = convert_messages(messages, system_prompt, send_reasoning=False)
                json.dumps({"messages": converted})
            serialise_ms[call] = (time.perf_counter() - now) * 1000
            rss[call] = rss_mb()
        excluded.append(time.perf_counter() - now)
        return original(self, messages, tools, system_prompt)

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        home, workspace = root / "home", root / "project"
        (workspace / ".git").mkdir(parents=True)
        for n in range(10):
            (workspace / f"f{n}.txt").write_text(f"file {n}\n")
        script = root / "bench.json"
        rounds_script: list[Any] = [
            {
                "text": "step",
                "tool_calls": [{"name": "read_file", "args": {"path": f"f{n % 10}.txt"}}],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
            for n in range(rounds)
        ]
        rounds_script.append({"text": "done"})
        script.write_text(json.dumps({"rounds": rounds_script}))
        (home / "config").mkdir(parents=True)
        (home / "config" / "config.toml").write_text(
            '[model_overrides."scripted:bench.json"]\ncontext_window = 100000000\n'
        )
        previous_home = os.environ.get("WYCKOFF_HOME")
        os.environ["WYCKOFF_HOME"] = str(home)
        ScriptedProvider.chat_stream = stamped  # type: ignore[method-assign]
        saved_stdout, saved_stderr = sys.stdout, sys.stderr
        started = time.perf_counter()
        try:
            with open(os.devnull, "w") as sink:
                sys.stdout = sys.stderr = sink
                code = wyckoff_main(
                    [
                        "run",
                        "-m",
                        f"scripted:{script}",
                        "--cwd",
                        str(workspace),
                        "--max-tool-rounds",
                        str(rounds + 1),
                        "go",
                    ]
                )
        finally:
            sys.stdout, sys.stderr = saved_stdout, saved_stderr
            ScriptedProvider.chat_stream = original  # type: ignore[method-assign]
            if previous_home is None:
                os.environ.pop("WYCKOFF_HOME", None)
            else:
                os.environ["WYCKOFF_HOME"] = previous_home
        total = time.perf_counter() - started
    if code != 0:
        raise SystemExit(f"wyckoff run exited {code}")
    # Round k (1-based) costs stamps[k] - stamps[k-1] minus what the wrapper measured.
    costs = [(stamps[k] - stamps[k - 1] - excluded[k - 1]) * 1000 for k in range(1, len(stamps))]
    return {"rounds": rounds, "seconds": total, "costs": costs, "serialise_ms": serialise_ms, "rss": rss}


def at(costs: list[float], round_no: int, window: int = 50) -> float:
    """Median cost of the rounds around `round_no` (1-based)."""
    low = max(0, round_no - window)
    return statistics.median(costs[low : max(low + 1, min(len(costs), round_no + window))])


def report_real(result: dict[str, Any]) -> None:
    rounds, costs = result["rounds"], result["costs"]
    points = sorted({p for p in (100, 500, 1000, 2000, 4000, 5000, 8000, rounds) if p <= rounds})
    print(f"wyckoff run, {rounds:,} tool rounds: {result['seconds']:.1f} s in all")
    print("round    per round (median of ±50)    provider serialisation    RSS")
    serialise, rss = result["serialise_ms"], result["rss"]
    for point in points:
        near = min(serialise, key=lambda k: abs(k - point))
        print(
            f"{point:>6,}   {at(costs, point):8.3f} ms{'':17}{serialise[near]:8.2f} ms{'':12}{rss[near]:7.1f} MB"
        )
    first, last = at(costs, 100), at(costs, rounds)
    print(
        f"round {rounds:,} / round 100: {last / first:.2f}x (target <= 2x: {'met' if last <= 2 * first else 'MISSED'})"
    )
    warm = min(rss, key=lambda k: abs(k - min(1000, max(100, rounds // 10))))
    end = max(rss)
    growth = (rss[end] - rss[warm]) / rss[warm] * 100
    print(
        f"RSS from round {warm:,} to {end:,}: {rss[warm]:.1f} -> {rss[end]:.1f} MB ({growth:+.1f}%; "
        f"target within 10%: {'met' if abs(growth) <= 10 else 'MISSED'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--real", action="store_true", help="through wyckoff run's own composition")
    parser.add_argument(
        "--no-serialise",
        action="store_true",
        help="with --real: skip measuring the provider's serialisation (its temporary memory raises RSS)",
    )
    args = parser.parse_args()
    if args.real:
        report_real(real_run(args.rounds, serialise=not args.no_serialise))
        return
    with tempfile.TemporaryDirectory() as folder:
        results = [asyncio.run(one_run(args.rounds, Path(folder))) for _ in range(args.repeat)]
    per_round = [seconds / args.rounds * 1000 for seconds, _ in results]
    median = statistics.median(per_round)
    print(f"rounds per run: {args.rounds}, events per run: {results[0][1]}")
    print(f"per tool round: median {median:.3f} ms (runs: {', '.join(f'{v:.3f}' for v in per_round)} ms)")
    print(f"target < 2 ms per round: {'met' if median < 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
