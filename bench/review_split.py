"""`wyckoff review` over a many-file change: wall time with the reviewers in parallel
against one at a time, and what the review itself costs beyond the model's time.

A real git repository with FILES changed files (FILES / 12 reviewer groups) is reviewed
through the real Anthropic adapter against the fake server; every model answer is paced
to take about LATENCY seconds (`chars_per_second`), as a real model's would. Each run
reports wall time (after one warm-up review that pays the SDK's import); `overhead` is wall time minus the model time the slowest chain of
calls needed (groups / parallel rounds × LATENCY), i.e. git, prompts, tool calls and the
event plumbing.

    python bench/review_split.py [--files 60] [--latency 0.5] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wyckoff_cli.runtime.review.changes import ReviewTarget, collect_change
from wyckoff_cli.runtime.review.engine import ReviewRun, ReviewSettings
from wyckoff_cli.runtime.review.groups import MAX_GROUP_FILES
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.review import close_agents, review_agents
from wyckoff_cli.testing.fake_server import FakeServer

MODEL = "anthropic:claude-sonnet-4-5"


def make_repo(root: Path, files: int) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b"}
    env["GIT_COMMITTER_EMAIL"] = "b@b"

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)

    git("init", "-q")
    for n in range(files):
        path = root / f"pkg_{n // 10}" / f"mod_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(40)))
    git("add", "-A")
    git("commit", "-qm", "base")
    for n in range(files):
        path = root / f"pkg_{n // 10}" / f"mod_{n}.py"
        path.write_text(path.read_text().replace("return x + 7", "return x - 7"))


async def review_once(root: Path, server: FakeServer, parallel: int, latency: float, groups: int) -> float:
    answer = "No findings in my part."
    pace = {"chars_per_second": len(answer) / latency} if latency else {}
    server.script(*({"text": answer, **pace} for _ in range(groups)))
    builder = SessionBuilder(open_workspace(root), cwd=root)
    agents, _ = review_agents(builder, MODEL)
    started = time.perf_counter()
    run = ReviewRun(await collect_change(root, ReviewTarget()), agents, ReviewSettings(max_parallel=parallel))
    async for _event in run.events():
        pass
    wall = time.perf_counter() - started
    await close_agents(agents)
    assert run.result is not None and run.result.groups == groups
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    groups = math.ceil(args.files / MAX_GROUP_FILES)
    rows = []
    with tempfile.TemporaryDirectory() as folder, FakeServer() as server:
        root = Path(folder) / "repo"
        root.mkdir()
        make_repo(root, args.files)
        os.environ.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="bench", WYCKOFF_HOME=folder)
        asyncio.run(review_once(root, server, 4, args.latency, groups))  # warm-up: the SDK's import
        for latency in (args.latency, 0.0):
            for parallel in (1, 4):
                wall = asyncio.run(review_once(root, server, parallel, latency, groups))
                rows.append(
                    {"latency": latency, "parallel": parallel, "groups": groups, "wall_s": round(wall, 2)}
                )
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            paced = f"answers paced {row['latency']} s" if row["latency"] else "answers unpaced"
            print(
                f"{args.files} files, {row['groups']} reviewers, {row['parallel']} at once, {paced}: "
                f"{row['wall_s']:.2f} s"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
