"""A soak run: 1,000 turns of a mixed session in one process, RSS and time per turn.

The session is composed as `wyckoff run` composes it (`session/builder.py`'s
`SessionBuilder`: workspace and config, policy, the session store and recorder, the
context manager with memory and compaction, the runtime with the built-in tools, the
conversation), with a deterministic scripted model
(`SoakModel` below) instead of a vendor: turns cycle through a plain Markdown answer,
thinking then an answer, a `read_file` call, and parallel `grep` + `list_dir` calls,
each answer ~1,500 characters. The context window is set (through
`[model_overrides]`) so that the history reaches the compaction threshold about every
50 turns; the model answers the memory-flush and summary calls compaction makes. The
recorder writes chat.jsonl and scratchpad.jsonl to a temporary WYCKOFF_HOME.

Every 100 turns it prints the turn, RSS, the mean time per turn over those 100, the
compactions so far and the history length. Targets: time per turn and RSS flat after
warm-up (the first 100 turns), within 10%.

    python bench/soak.py [--turns 1000] [--window 30000] [--every 100]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.base import (
    Chunk,
    StreamingProvider,
    TextChunk,
    ThinkingChunk,
    ToolCallChunk,
    UsageChunk,
)

MODEL = "scripted:soak"
WORDS = [
    "the",
    "loader",
    "reads",
    "each",
    "file",
    "once",
    "and",
    "caches",
    "the",
    "parsed",
    "result",
    "until",
    "its",
    "mtime",
    "changes",
    "so",
    "the",
    "request",
    "handler",
    "never",
    "blocks",
    "on",
    "disk",
    "while",
    "the",
    "store",
    "keeps",
    "at",
    "most",
    "128",
    "entries",
    "and",
    "logs",
    "a",
    "warning",
    "for",
    "unknown",
    "keys",
    "before",
    "the",
    "retry",
    "loop",
    "gives",
    "up",
]


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


class SoakModel(StreamingProvider):
    """Deterministic answers by turn kind; answers compaction's side calls too."""

    def __init__(self, seed: int = 7) -> None:
        self.random = random.Random(seed)
        self.turn = 0
        self.side_calls = 0

    @property
    def name(self) -> str:
        return MODEL

    def _prose(self, chars: int) -> str:
        words: list[str] = []
        while sum(len(w) + 1 for w in words) < chars:
            words.append(self.random.choice(WORDS))
        text = " ".join(words)
        return f"## Turn {self.turn}\n\n{text[: chars // 2]}\n\n- {text[chars // 2 :]}\n\n```python\nx = {self.turn}\n```\n"

    async def _stream(self, chunks: list[Chunk]) -> AsyncIterator[Chunk]:
        for chunk in chunks:
            yield chunk

    def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        usage = UsageChunk(Usage(input_tokens=1000, output_tokens=300))
        if not tools:  # compaction's side calls: memory flush, then the summary
            self.side_calls += 1
            if "durable memories" in system_prompt:
                text = (
                    '[{"text": "The project keeps a 128-entry cache.", "kind": "fact", "scope": "project"}]'
                )
            else:
                text = "## Goals\n\nKeep the loader fast.\n\n## Progress\n\n" + self._prose(1200)
            return self._stream([TextChunk(text), usage])
        last = messages[-1]
        kind = self.turn % 4
        if last.role == "tool" or kind in (0, 1):
            chunks: list[Chunk] = []
            if kind == 1 and last.role == "user":
                chunks.append(ThinkingChunk("Let me think about the cache. " * 8))
                chunks.append(ThinkingChunk(signature="sig"))
            chunks += [TextChunk(piece) for piece in _pieces(self._prose(1500), 40)]
            return self._stream([*chunks, usage])
        if kind == 2:
            calls = [ToolCallChunk(0, f"c{self.turn}a", "read_file", '{"path": "src/store.py"}')]
        else:
            calls = [
                ToolCallChunk(0, f"c{self.turn}a", "grep", '{"pattern": "cache"}'),
                ToolCallChunk(1, f"c{self.turn}b", "list_dir", '{"path": "src"}'),
            ]
        return self._stream([TextChunk("Looking."), *calls, usage])


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


async def soak(turns: int, window: int, every: int, folder: Path) -> list[dict[str, Any]]:
    from wyckoff_cli.core import events as ev
    from wyckoff_cli.runtime.approval import answer_approvals, deny_without_approver
    from wyckoff_cli.session.builder import SessionBuilder, open_workspace

    workspace_root = folder / "project"
    (workspace_root / ".git").mkdir(parents=True)
    (workspace_root / "src").mkdir()
    (workspace_root / "src" / "store.py").write_text(
        "".join(f"def get_{n}(key):\n    return cache.get(key, {n})\n\n" for n in range(60))
    )
    model = SoakModel()
    builder = SessionBuilder(
        open_workspace(workspace_root), cwd=workspace_root, provider_factory=lambda _: model
    )
    recorder = builder.open_recorder(model.name)
    session = builder.build(model=model.name, mode="default", recorder=recorder, provider=model)
    runtime = session.runtime
    rows: list[dict[str, Any]] = []
    compactions = 0
    durations: list[float] = []
    for turn in range(1, turns + 1):
        model.turn = turn
        started = time.perf_counter()
        stream = runtime.run_stream(
            session.conversation,
            f"Turn {turn}: look at the cache again.",
            system_prompt=session.system_prompt,
        )
        async for event in answer_approvals(stream, deny_without_approver):
            recorder.record(event)
            if isinstance(event, ev.Compacted):
                compactions += 1
            if isinstance(event, ev.TurnFailed):
                raise SystemExit(f"turn {turn} failed: {event.kind}: {event.message}")
        durations.append(time.perf_counter() - started)
        if turn % every == 0:
            rows.append(
                {
                    "turn": turn,
                    "rss": rss_mb(),
                    "ms_per_turn": statistics.fmean(durations[-every:]) * 1000,
                    "compactions": compactions,
                    "history": len(session.conversation),
                }
            )
            row = rows[-1]
            print(
                f"{row['turn']:>6,}   {row['rss']:7.1f} MB   {row['ms_per_turn']:8.2f} ms/turn   "
                f"{row['compactions']:>4} compactions   {row['history']:>5} messages",
                flush=True,
            )
    await session.aclose()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--window", type=int, default=30_000, help="context window in tokens")
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        home = folder / "home"
        (home / "config").mkdir(parents=True)
        (home / "config" / "config.toml").write_text(
            f'[context]\nreserve_tokens = 4000\n\n[model_overrides."{MODEL}"]\ncontext_window = {args.window}\n'
        )
        os.environ["WYCKOFF_HOME"] = str(home)
        print(f"soak: {args.turns:,} turns, context window {args.window:,} tokens")
        print("  turn        RSS        time per turn    compactions     history")
        rows = asyncio.run(soak(args.turns, args.window, args.every, folder))
    if len(rows) < 3:
        return
    warm, rest = rows[0], rows[1:]
    rss_growth = (rows[-1]["rss"] - warm["rss"]) / warm["rss"] * 100
    times = [r["ms_per_turn"] for r in rest]
    spread = (max(times) - min(times)) / statistics.median(times) * 100
    turns_per_compaction = args.turns / max(1, rows[-1]["compactions"])
    print(f"a compaction every {turns_per_compaction:.0f} turns")
    print(
        f"RSS after warm-up: {warm['rss']:.1f} -> {rows[-1]['rss']:.1f} MB ({rss_growth:+.1f}%; "
        f"target within 10%: {'met' if abs(rss_growth) <= 10 else 'MISSED'})"
    )
    print(
        f"time per turn after warm-up: {min(times):.2f}-{max(times):.2f} ms (spread {spread:.0f}% of the median)"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
