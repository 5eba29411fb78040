"""Checkpoint snapshots on a big tree: the git binary, and dulwich for comparison.

Builds a work tree of N files (default 20,000: 400 folders of 50 small source-like
files, plus a .gitignore'd build folder of 2,000 files), then times, through the real
`CheckpointEngine`:

- the first snapshot (every file read and hashed into the shadow repository);
- a snapshot with nothing changed (the incremental path: stat only);
- a snapshot after 20 files changed, 5 created and 5 deleted;
- a restore plan (preview) and the restore of those 30 changes.

`--backend git|dulwich|both` picks the shadow repository backend (the git binary, or
the dulwich fallback used when git is missing); `--porcelain` adds dulwich's own
`porcelain.add` + `commit` on the same tree for reference.

    python bench/checkpoints.py [--files 20000] [--repeat 3] [--backend both] [--porcelain]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from wyckoff_cli.runtime.checkpoints.engine import CheckpointEngine
from wyckoff_cli.storage.config import CheckpointsConfig


def build_tree(root: Path, files: int) -> list[Path]:
    per_folder = 50
    made: list[Path] = []
    for index in range(files):
        folder = root / f"pkg{index // per_folder:03d}"
        if index % per_folder == 0:
            folder.mkdir(parents=True)
        path = folder / f"module_{index:05d}.py"
        path.write_text(f"# module {index}\n" + "def f(x):\n    return x + 1\n" * (index % 20 + 1))
        made.append(path)
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    for index in range(2000):
        (root / "build" / f"out{index}.o").write_text("ignored\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return made


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def change(made: list[Path], round_: int) -> None:
    for path in made[round_ * 20 : round_ * 20 + 20]:
        path.write_text(path.read_text() + f"# changed {round_}\n")
    for index in range(5):
        (made[0].parent / f"new_{round_}_{index}.py").write_text("new\n")
    for path in made[-5 * (round_ + 1) : len(made) - 5 * round_]:
        if path.exists():
            path.unlink()


def bench_engine(files: int, repeat: int, backend: str) -> dict[str, list[float]]:
    names = ("first", "unchanged", "30 changes", "plan", "restore")
    results: dict[str, list[float]] = {f"{backend}: {k}": [] for k in names}
    for round_ in range(repeat):
        with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as work:
            os.environ["WYCKOFF_HOME"] = home
            root = Path(work)
            made = build_tree(root, files)
            engine = CheckpointEngine(root, CheckpointsConfig(), backend=backend)
            results[f"{backend}: first"].append(timed(engine.snapshot)[0])
            time.sleep(2.1)  # past the racy-timestamp window, as between real rounds
            results[f"{backend}: unchanged"].append(timed(engine.snapshot)[0])
            checkpoint = engine.checkpoint("bench", "m")
            change(made, round_)
            results[f"{backend}: 30 changes"].append(timed(engine.snapshot)[0])
            started = time.perf_counter()
            plan = engine.plan(checkpoint)
            results[f"{backend}: plan"].append(time.perf_counter() - started)
            started = time.perf_counter()
            engine.apply(plan, "bench")
            results[f"{backend}: restore"].append(time.perf_counter() - started)
            print(f"  round {round_ + 1}: disk use {engine.disk_use() / 1e6:.1f} MB", file=sys.stderr)
    return results


def bench_porcelain(files: int, repeat: int) -> dict[str, list[float]]:
    from dulwich import porcelain
    from dulwich.repo import Repo

    results: dict[str, list[float]] = {"porcelain first": [], "porcelain unchanged": []}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as work:
            root = Path(work)
            build_tree(root, files)
            repo = Repo(str(root))
            for name in ("porcelain first", "porcelain unchanged"):
                started = time.perf_counter()
                porcelain.add(repo)
                porcelain.commit(repo, message=b"checkpoint", author=b"w <w@x>", committer=b"w <w@x>")
                results[name].append(time.perf_counter() - started)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backend", choices=("git", "dulwich", "both"), default="git")
    parser.add_argument("--porcelain", action="store_true")
    args = parser.parse_args()
    results: dict[str, list[float]] = {}
    for backend in ("git", "dulwich") if args.backend == "both" else (args.backend,):
        results |= bench_engine(args.files, args.repeat, backend)
    if args.porcelain:
        results |= bench_porcelain(args.files, args.repeat)
    print(f"{args.files:,} files, median of {args.repeat}:")
    for name, values in results.items():
        print(f"  {name:<22} {statistics.median(values) * 1000:8.0f} ms   (min {min(values) * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
