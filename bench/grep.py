"""The grep tool against a direct `rg` run, on a generated tree of 20,000 files.

    python bench/grep.py [--files 20000] [--runs 9] [--keep DIR] [--fallback]

The tree (200 folders of 100 Python-like files, ~1.4 KB each, plus an ignored
`build/` folder and a `.gitignore`) is generated in a temporary folder. Each query
runs once to warm the page cache, then `--runs` times alternating with the direct
run (so load from other processes falls on both alike); the medians are compared.

"Direct rg" is `rg -n PATTERN .` (or `-l`/`-c`) run with `subprocess.run`, its
output captured, which is the least any caller pays. "grep tool" is the tool's
`run()` awaited in one event loop: rg with the tool's flags, output parsed,
grouped, sorted and capped. The target is a ratio within 1.5x.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.search import find_rg, make_grep_tool

QUERIES: list[tuple[str, dict[str, Any], list[str]]] = [
    # name, tool arguments, the direct rg flags that give the same information
    ("content, 50 files", {"pattern": r"needle_\d+"}, ["-n"]),
    ("count, every file", {"pattern": "TODO", "output": "count"}, ["-c"]),
    ("files, every file", {"pattern": "class Model", "output": "files"}, ["-l"]),
    ("content, 120,000 lines", {"pattern": r"def handler_\d+\("}, ["-n"]),
    ("content, no match", {"pattern": "zzz_absent_zzz"}, ["-n"]),
]


def generate(root: Path, count: int) -> None:
    folders = max(1, count // 100)
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    for f in range(folders):
        folder = root / f"pkg_{f:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(count // folders):
            n = f * 1000 + i
            lines = [f'"""Module {n}: generated for the grep benchmark."""', "", "import os", ""]
            lines.append(f"class Model{n}:")
            lines.append(f"    name = 'model_{n}'")
            for h in range(6):
                lines.append(f"    def handler_{h}(self, value):")
                lines.append(
                    f"        # TODO review handler {h}" if (n + h) % 3 == 0 else "        value += 1"
                )
                lines.append("        return value")
            if n % 400 == 0:
                lines.append(f"NEEDLE = 'needle_{n}'")
            (folder / f"mod_{i:03d}.py").write_text("\n".join(lines) + "\n")
    build = root / "build"
    build.mkdir()
    for i in range(200):
        (build / f"gen_{i}.py").write_text("needle_0 = 1\nTODO\n" * 20)


def paired_medians(first: Any, second: Any, runs: int) -> tuple[float, float]:
    """Median times of `first` and `second`, run alternately (after one warm-up each)
    so that load from other processes falls on both alike."""
    first()
    second()
    a: list[float] = []
    b: list[float] = []
    for _ in range(runs):
        for fn, samples in ((first, a), (second, b)):
            started = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - started)
    return statistics.median(a), statistics.median(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--keep", type=Path, help="generate the tree here and keep it")
    parser.add_argument(
        "--fallback", action="store_true", help="also time the pure-Python search (one run per query)"
    )
    args = parser.parse_args()
    rg = find_rg()
    if rg is None:
        raise SystemExit("no rg binary found (install the ripgrep wheel)")
    version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    temp = None if args.keep else tempfile.mkdtemp(prefix="wyckoff-grep-bench-")
    root = (args.keep or Path(temp or ".")).resolve()
    root.mkdir(parents=True, exist_ok=True)
    try:
        if not any(root.iterdir()):
            generate(root, args.files)
        tool = make_grep_tool(lambda: rg)
        python = make_grep_tool(lambda: None)
        ctx = ToolContext(workspace=root)
        loop = asyncio.new_event_loop()
        print(f"{version}; tree: {args.files:,} files in {root}; median of {args.runs} runs")
        print(f"{'query':<26} {'rg (ms)':>9} {'tool (ms)':>10} {'ratio':>7}")
        ratios = []
        for name, tool_args, flags in QUERIES:
            command = [rg, *flags, "--", tool_args["pattern"], "."]

            def direct(command: list[str] = command) -> None:
                subprocess.run(
                    command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False
                )

            def through_tool(tool_args: dict[str, Any] = tool_args) -> None:
                loop.run_until_complete(tool.run(dict(tool_args), ctx))

            base, ours = paired_medians(direct, through_tool, args.runs)
            ratios.append(ours / base)
            line = f"{name:<26} {base * 1000:>9.1f} {ours * 1000:>10.1f} {ours / base:>6.2f}x"
            if args.fallback:
                started = time.perf_counter()
                loop.run_until_complete(python.run(dict(tool_args), ctx))
                line += f"   python fallback {(time.perf_counter() - started) * 1000:,.0f} ms"
            print(line)
        loop.close()
        print(f"worst ratio {max(ratios):.2f}x (target: within 1.5x)")
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    main()
