"""Prompt-cache share over a scripted 20-round tool session against the fake Anthropic server.

The real runtime drives the real Claude adapter (real `anthropic` SDK, real HTTP) against
`wyckoff_cli.testing.fake_server`: 19 rounds that each call one tool, then a final answer.
From the recorded request bodies it computes, for every round, the share of the input
that falls in a prefix the cache already holds, following Anthropic's rules:

- the cacheable prefix is tools, then system, then messages, block by block;
- a request *writes* the prefix ending at each block carrying `cache_control`;
- a request *reads* the longest cached prefix that ends at one of its breakpoints or at
  one of the 20 block boundaries before a breakpoint (the API's lookback).

Tokens are estimated as characters / 4 (the ratio is what matters; JSON keys and
structure are counted like text). The 5-minute cache lifetime is not modelled (the
session takes about a second). For comparison the same session is scored with only
the system-prompt breakpoint (no sliding message breakpoint). Target: >= 90% from round 3.

    python bench/cache_share.py [--rounds 20] [--system-chars N] [--json]

The tool definitions are the built-in registry's (names, descriptions, schemas) when it
has tools, else 10 generated ones, and the system prompt is Wyckoff's own for an empty
workspace without AGENTS.md (`--system-chars N` uses a stand-in of N characters
instead). Tools return deterministic text whose size cycles through typical results
(file reads, searches, listings, edits).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.messages import ToolSpec
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.runtime.loop import AgentRuntime, RuntimeSettings
from wyckoff_cli.testing.fake_server import FakeServer
from wyckoff_cli.tools.base import Tool, ToolContext
from wyckoff_cli.tools.registry import ToolRegistry

LOOKBACK = 20
CHARS_PER_TOKEN = 4
TARGET = 0.90
# Sizes of successive tool results in characters: read_file, grep, list_dir, read_file, edit.
RESULT_SIZES = (4_000, 1_200, 600, 2_800, 300)


@dataclass(frozen=True)
class RoundShare:
    round: int
    input_chars: int
    cached_chars: int
    reads_previous_request: bool  # the cached prefix is the whole previous request

    @property
    def share(self) -> float:
        return self.cached_chars / self.input_chars if self.input_chars else 0.0


def _blocks(body: dict[str, Any]) -> tuple[list[tuple[str, bool]], int]:
    """The request as cacheable blocks: (canonical text, carries a breakpoint). Also
    returns how many blocks are tools + system."""
    out: list[tuple[str, bool]] = []

    def add(prefix: str, block: Any) -> None:
        marked = isinstance(block, dict) and "cache_control" in block
        clean = {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block
        out.append((prefix + json.dumps(clean, sort_keys=True, ensure_ascii=False), marked))

    for tool in body.get("tools") or ():
        add("tool:", tool)
    system = body.get("system") or ()
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system:
        add("system:", block)
    static = len(out)
    for message in body["messages"]:
        content = message["content"]
        for n, block in enumerate(
            [{"type": "text", "text": content}] if isinstance(content, str) else content
        ):
            add(f"{message['role']}:" if n == 0 else "", block)
    return out, static


def cache_shares(bodies: list[dict[str, Any]], *, sliding: bool = True) -> list[RoundShare]:
    cached: set[str] = set()
    previous_total = 0
    rounds = []
    for number, body in enumerate(bodies, start=1):
        blocks, static = _blocks(body)
        digests, lengths = [], []
        running, total = hashlib.sha256(), 0
        for text, _ in blocks:
            running.update(text.encode())
            running.update(b"\x00")
            digests.append(running.hexdigest())
            total += len(text)
            lengths.append(total)
        breakpoints = [i for i, (_, marked) in enumerate(blocks) if marked and (sliding or i < static)]
        best = 0
        for point in breakpoints:
            for position in range(point, max(-1, point - LOOKBACK), -1):
                if digests[position] in cached:
                    best = max(best, lengths[position])
                    break
        cached.update(digests[i] for i in breakpoints)
        rounds.append(RoundShare(number, total, best, best == previous_total and number > 1))
        previous_total = total
    return rounds


def _tool_specs() -> list[ToolSpec]:
    try:
        from wyckoff_cli.tools.builtin import default_registry

        specs = list(default_registry().specs())
    except Exception:  # the registry is optional here: fall back to generated tools
        specs = []
    if specs:
        return specs
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "A workspace path."}},
    }
    return [
        ToolSpec(f"tool_{n}", f"Generated tool {n}. " + "It does one thing well. " * 20, schema)
        for n in range(10)
    ]


def _system_prompt(chars: int | None, tool_names: list[str], workspace: Path) -> str:
    """Wyckoff's own system prompt for this workspace (no AGENTS.md), or a stand-in of
    `chars` characters."""
    if chars is None:
        try:
            from wyckoff_cli.context.instructions import load_project_instructions
            from wyckoff_cli.context.prompt import Environment, SystemPromptBuilder

            instructions = load_project_instructions(workspace, workspace, None)
            return SystemPromptBuilder(Environment.detect(workspace), tuple(tool_names), instructions).build()
        except Exception:  # the prompt builder is optional here: use a stand-in
            chars = 10_000
    line = "You are Wyckoff, a coding assistant working in the user's repository. Follow the rules below.\n"
    return (line * (chars // len(line) + 1))[:chars]


# A typical order of calls in a coding session (names from the built-in registry).
SESSION_TOOLS = ("read_file", "grep", "read_file", "list_dir", "edit_file", "run_shell", "glob")


def _arguments(schema: dict[str, Any], n: int) -> dict[str, Any]:
    """Valid arguments for a tool's schema: each required property gets a plain value."""
    values: dict[str, Any] = {}
    properties = schema.get("properties") or {}
    for name in schema.get("required") or ():
        prop = properties.get(name) or {}
        kind = prop.get("type")
        if "enum" in prop:
            values[name] = prop["enum"][0]
        elif kind == "integer" or kind == "number":
            values[name] = prop.get("minimum", 1)
        elif kind == "boolean":
            values[name] = False
        elif kind == "array":
            values[name] = []
        elif kind == "object":
            values[name] = {}
        else:
            values[name] = f"src/module_{n}.py"
    return values


async def run_session(rounds: int, system_chars: int | None) -> tuple[list[dict[str, Any]], int]:
    specs = _tool_specs()
    calls = {"n": 0}

    async def result(args: dict[str, Any], ctx: ToolContext) -> str:
        size = RESULT_SIZES[calls["n"] % len(RESULT_SIZES)]
        calls["n"] += 1
        line = f"{calls['n']:04d}: def function_{calls['n']}(value): return value * 2  # example\n"
        return (line * (size // len(line) + 1))[:size]

    tools = [Tool(s.name, s.description, s.parameters, result, concurrency_safe=True) for s in specs]
    by_name = {s.name: s for s in specs}
    order = [by_name[name] for name in SESSION_TOOLS if name in by_name] or specs
    script: list[dict[str, Any]] = []
    for n in range(rounds - 1):
        spec = order[n % len(order)]
        call = {"name": spec.name, "args": _arguments(spec.parameters, n), "id": f"toolu_{n:03d}"}
        script.append(
            {
                "text": f"Step {n + 1}: I will use {spec.name} to look at the next part of the code.",
                "tool_calls": [call],
            }
        )
    script.append({"text": "Here is the summary of what I found and changed."})
    with FakeServer() as server, tempfile.TemporaryDirectory() as folder:
        server.script(*script)
        spec = ModelSpec("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key="bench-key")
        provider = build_provider(spec)
        workspace = Path(folder)
        runtime = AgentRuntime(
            provider,
            ToolRegistry(tools),
            workspace=workspace,
            settings=RuntimeSettings(max_tool_rounds=rounds + 5),
            results_dir=workspace / "results",
        )
        history = Conversation()
        prompt = "Please read through src/, find why parsing fails on empty input, and fix it."
        system = _system_prompt(system_chars, [s.name for s in specs], workspace)
        async for _event in runtime.run_stream(history, prompt, system_prompt=system):
            pass
        return [request.body for request in server.requests], len(system)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--system-chars", type=int, default=None, help="use a stand-in system prompt of this size"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    bodies, system_chars = asyncio.run(run_session(args.rounds, args.system_chars))
    sliding = cache_shares(bodies)
    static_only = cache_shares(bodies, sliding=False)
    later = [r.share for r in sliding[2:]]
    summary = {
        "rounds": len(bodies),
        "system_prompt_chars": system_chars,
        "tools_chars": sum(len(json.dumps(t)) for t in bodies[0].get("tools") or ()),
        "min_share_from_round_3": min(later) if later else None,
        "mean_share_from_round_3": statistics.fmean(later) if later else None,
        "system_only_mean_from_round_3": statistics.fmean(r.share for r in static_only[2:])
        if later
        else None,
        "every_round_reads_the_whole_previous_request": all(r.reads_previous_request for r in sliding[1:]),
        "max_breakpoints": max(sum(marked for _, marked in _blocks(b)[0]) for b in bodies),
    }
    if args.json:
        rows = [
            {"round": r.round, "input_tokens": r.input_chars // CHARS_PER_TOKEN, "share": r.share}
            for r in sliding
        ]
        print(json.dumps({"summary": summary, "rounds": rows}, indent=2))
        return 0
    print(f"system prompt {system_chars:,} characters, tools {summary['tools_chars']:,} characters")
    print("round  input tokens (est.)  cached share  system-only share")
    for row, plain in zip(sliding, static_only, strict=True):
        tokens = row.input_chars // CHARS_PER_TOKEN
        print(f"{row.round:5d}  {tokens:19,d}  {row.share:12.1%}  {plain.share:17.1%}")
    low = summary["min_share_from_round_3"]
    print(
        f"\nfrom round 3: min {low:.1%}, mean {summary['mean_share_from_round_3']:.1%} "
        f"(system prompt only: mean {summary['system_only_mean_from_round_3']:.1%}); "
        f"target >= {TARGET:.0%}: {'met' if low is not None and low >= TARGET else 'NOT met'}"
    )
    print(
        f"every round reads the whole previous request from cache: "
        f"{summary['every_round_reads_the_whole_previous_request']}; "
        f"breakpoints per request: at most {summary['max_breakpoints']}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
