"""Language servers: edit → diagnostics in the result, and the tokens a look-up costs.

1. On a 1,000-line Python file, `--edits` edits through the wrapped `edit_file` (what
   the runtime runs), alternately breaking and fixing a type, each timed from the call
   to its result carrying (or clearing) the diagnostic: p50 and p95. basedpyright is
   the one next to this interpreter (the `test` extra), already started and warm (the
   session starts it when it first meets a Python file).
2. "Where is `compute_total` defined and who calls it" on a generated tree of
   `--modules` modules: the text the model would read with lsp_symbols +
   lsp_references, versus grep + read_file of each file grep names. Tokens are
   estimated as characters / 4 (the same for both sides, so the ratio holds).

    python bench/lsp.py [--edits 30] [--modules 12]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from wyckoff_cli.storage.lsp_config import LspConfig, LspServerConfig
from wyckoff_cli.tools.base import ToolContext, ToolOutcome
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.lsp.family import LspTools
from wyckoff_cli.tools.lsp.manager import LspManager
from wyckoff_cli.tools.lsp.servers import resolve_servers


def _server() -> str:
    found = Path(sys.executable).parent / "basedpyright-langserver"
    if not found.is_file():
        raise SystemExit("basedpyright is not installed next to this interpreter: pip install basedpyright")
    return str(found)


def _tools(root: Path) -> LspTools:
    servers = {"basedpyright": LspServerConfig(command=_server())}
    config = LspConfig(servers=servers, diagnostics_wait_ms=10_000, startup_wait_ms=60_000)
    return LspTools(LspManager(root, config, resolve_servers(root, servers, path_env="")))


def _big_file(lines: int) -> str:
    out = ["from __future__ import annotations", ""]
    n = 0
    while len(out) < lines - 3:
        out += [f"def f{n}(x: int) -> int:", f"    y = x + {n}", "    return y * 2", "", ""]
        n += 1
    out += ["def target() -> int:", "    return 1"]
    return "\n".join(out[: lines - 1]) + "\n"


async def _text(result: object) -> str:
    return result.text if isinstance(result, ToolOutcome) else str(result)


async def edit_latency(edits: int) -> list[float]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(os.path.realpath(folder))
        (root / "big.py").write_text(_big_file(1000))
        tools = _tools(root)
        registry = tools.wrap(default_registry())
        ctx = ToolContext(workspace=root)
        read, edit = registry.get("read_file"), registry.get("edit_file")
        assert read is not None and edit is not None
        await read.run({"path": "big.py"}, ctx)
        assert await tools.manager.client_for(root / "big.py") is not None
        await tools.manager.before_edit(root / "big.py")  # warm: the first analysis is done
        times: list[float] = []
        good, bad = "    return 1\n", '    return "one"\n'
        for i in range(edits):
            old, new = (good, bad) if i % 2 == 0 else (bad, good)
            start = time.perf_counter()
            text = await _text(await edit.run({"path": "big.py", "old": old, "new": new}, ctx))
            times.append(time.perf_counter() - start)
            assert ("error" in text) == (i % 2 == 0), text
        await tools.manager.close()
        return times


def _tree(root: Path, modules: int) -> None:
    filler = "".join(f"def helper_{i}(v: int) -> int:\n    return v + {i}\n\n\n" for i in range(40))
    (root / "core.py").write_text(
        filler + "def compute_total(items: list[int]) -> int:\n    return sum(items)\n"
    )
    for m in range(modules):
        calls = (
            f"from core import compute_total\n\n\ndef use_{m}() -> int:\n    return compute_total([{m}, 1])\n"
            if m % 3 == 0
            else f"def unrelated_{m}() -> int:\n    return {m}  # mentions compute_total in a comment\n"
        )
        (root / f"mod_{m}.py").write_text(calls + "\n\n" + filler)


async def lookup_tokens(modules: int) -> tuple[int, int, int]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(os.path.realpath(folder))
        _tree(root, modules)
        tools = _tools(root)
        registry = tools.wrap(default_registry())
        ctx = ToolContext(workspace=root)
        read, grep = registry.get("read_file"), registry.get("grep")
        assert read is not None and grep is not None
        # grep + read: find the name, then read each file it names (definition and callers)
        found = await _text(await grep.run({"pattern": "compute_total", "output": "files"}, ctx))
        grep_chars = len(found)
        files = [line.strip() for line in found.splitlines() if line.strip().endswith(".py")]
        for name in files:
            grep_chars += len(await _text(await read.run({"path": name}, ctx)))
        # grep lines + read the definition's file: a thriftier model
        lines = await _text(await grep.run({"pattern": "compute_total"}, ctx))
        thrifty_chars = len(lines) + len(await _text(await read.run({"path": "core.py"}, ctx)))
        # LSP: meet the file that mentions it, the workspace symbol, then its references
        await read.run({"path": "core.py", "limit": 1}, ctx)
        assert await tools.manager.client_for(root / "core.py") is not None
        by_name = {t.name: t for t in tools.tools}
        deadline = time.monotonic() + 60  # the server answers workspace queries once it indexed
        while "No symbols match" in (
            symbols := await _text(await by_name["lsp_symbols"].run({"query": "compute_total"}, ctx))
        ):
            if time.monotonic() > deadline:
                raise SystemExit("basedpyright never listed compute_total")
            await asyncio.sleep(0.2)
        line = int(symbols.splitlines()[0].split(" — ")[1].split(":")[1])
        references = await _text(
            await by_name["lsp_references"].run(
                {"path": "core.py", "line": line, "symbol": "compute_total"}, ctx
            )
        )
        await tools.manager.close()
        return grep_chars // 4, thrifty_chars // 4, (len(symbols) + len(references)) // 4


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--edits", type=int, default=30)
    parser.add_argument("--modules", type=int, default=12)
    args = parser.parse_args()
    times = asyncio.run(edit_latency(args.edits))
    ms = sorted(t * 1000 for t in times)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    print(
        f"edit → diagnostics on a 1,000-line file ({len(ms)} edits): p50 {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms, max {ms[-1]:.0f} ms"
    )
    grep_tokens, thrifty_tokens, lsp_tokens = asyncio.run(lookup_tokens(args.modules))
    print(
        f"'where is compute_total defined and who calls it' ({args.modules} modules): "
        f"lsp_symbols + lsp_references ~{lsp_tokens:,} tokens; grep + read_file of every file named "
        f"~{grep_tokens:,} ({grep_tokens / max(lsp_tokens, 1):.1f}x); grep lines + read_file of the "
        f"definition's file ~{thrifty_tokens:,} ({thrifty_tokens / max(lsp_tokens, 1):.1f}x)"
    )


if __name__ == "__main__":
    main()
