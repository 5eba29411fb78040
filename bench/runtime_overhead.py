"""The agent loop's own cost per tool round.

A scripted provider requests one trivial tool call per round for N rounds (no
network, no sleeps), so the time measured is the loop itself: event construction,
fragment assembly, guards, batching, history bookkeeping. Target: < 2 ms per round.

    python bench/runtime_overhead.py [--rounds 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        results = [asyncio.run(one_run(args.rounds, Path(folder))) for _ in range(args.repeat)]
    per_round = [seconds / args.rounds * 1000 for seconds, _ in results]
    median = statistics.median(per_round)
    print(f"rounds per run: {args.rounds}, events per run: {results[0][1]}")
    print(f"per tool round: median {median:.3f} ms (runs: {', '.join(f'{v:.3f}' for v in per_round)} ms)")
    print(f"target < 2 ms per round: {'met' if median < 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
