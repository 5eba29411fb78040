"""`wyckoff batch`'s own cost per task, beyond the agent's: 20 tasks x 2 workers.

Each task clones a small repository (20 files), runs one setup command, runs headless
`wyckoff run` against the fake provider server (Anthropic wire format, on 127.0.0.1,
one short answer per task) and a test command. Each result carries `duration_s` (the
whole task in its worker) and `agent_s` (the `wyckoff run` process alone), so:

- in-task overhead = mean(duration_s - agent_s): clone, checkout, setup, the two tree
  snapshots for the patch, the session look-up, the test command;
- driver overhead = (wall x workers - sum(duration_s)) / tasks: scheduling, collecting,
  rewriting results.jsonl, the progress lines, start and end of the batch;
- batch overhead per task = (wall x workers - sum(agent_s)) / tasks, the sum of both
  (what the issue bounds: under 0.5 s with `local`).

`--engine ray` starts a Ray head on 127.0.0.1 (`ray start --head --block`, 2 CPUs) and
runs the batch against it; the cluster's start is not counted, the driver's connection
to it is (it is part of every batch run on a cluster).

    python bench/batch.py [--tasks 20] [--workers 2] [--engine local|ray|both]

The machine is shared: the load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wyckoff_cli.testing.fake_server import FakeServer  # noqa: E402

MODEL = "anthropic:claude-sonnet-4-5"


def make_repo(path: Path) -> None:
    path.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.invalid"}
    env.update(GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid")
    subprocess.run(["git", "init", "--quiet", "--initial-branch=main"], cwd=path, check=True)
    for i in range(20):
        (path / f"module_{i}.py").write_text(f"VALUE_{i} = {i}\n" * 50)
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", "commit", "--quiet", "-m", "bench"], cwd=path, env=env, check=True)


def start_ray_head(base: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    head = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", f"--port={port}",
            "--node-ip-address=127.0.0.1", "--num-cpus=2", "--object-store-memory=100000000",
            "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={base / 'ray'}",
        ],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return head, f"127.0.0.1:{port}"
        if head.poll() is not None:
            raise SystemExit("ray start --head exited")
        time.sleep(0.2)
    raise SystemExit("the Ray head did not start in 180 s")


def run(engine: str, tasks: int, workers: int, base: Path, server: FakeServer) -> dict[str, float]:
    work = base / engine
    make_repo(work / "repo")
    rows = [
        {
            "id": f"t{i:02d}",
            "repo": "repo",
            "prompt": "say ok",
            "model": MODEL,
            "setup": ["true"],
            "test": "true",
        }
        for i in range(tasks)
    ]
    (work / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    server.script(*[{"text": "ok", "usage": {"input_tokens": 1000, "output_tokens": 5}}] * tasks)
    env = {**os.environ, "WYCKOFF_HOME": str(work / "home"), "ANTHROPIC_BASE_URL": server.url}
    env.update(ANTHROPIC_API_KEY="fake", NO_PROXY="127.0.0.1,localhost", RAY_USAGE_STATS_ENABLED="0")
    env.update(RAY_AUTH_MODE="disabled")  # head and driver agree, whatever ~/.ray holds
    argv = [
        sys.executable,
        "-m",
        "wyckoff_cli",
        "batch",
        str(work / "tasks.jsonl"),
        "--out",
        str(work / "out"),
    ]
    argv += ["--workers", str(workers), "--engine", engine]
    head = None
    if engine == "ray":
        head, address = start_ray_head(work, env)
        argv += ["--ray-address", address]
    try:
        started = time.monotonic()
        done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
        wall = time.monotonic() - started
    finally:
        if head is not None:
            os.killpg(head.pid, signal.SIGTERM)
            head.wait(timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"batch failed ({done.returncode}): {done.stderr[-2000:]}")
    results = [json.loads(line) for line in (work / "out" / "results.jsonl").read_text().splitlines()]
    assert len(results) == tasks and all(r["status"] == "done" for r in results)
    durations = [r["duration_s"] for r in results]
    agents = [r["agent_s"] for r in results]
    return {
        "wall_s": wall,
        "agent_s_mean": statistics.mean(agents),
        "in_task_overhead_s": statistics.mean(d - a for d, a in zip(durations, agents, strict=True)),
        "driver_overhead_s": (wall * workers - sum(durations)) / tasks,
        "batch_overhead_s": (wall * workers - sum(agents)) / tasks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--engine", choices=("local", "ray", "both"), default="both")
    args = parser.parse_args()
    engines = ["local", "ray"] if args.engine == "both" else [args.engine]
    base = Path(tempfile.mkdtemp(prefix="wy-bench-", dir="/tmp"))
    try:
        with FakeServer() as server:
            for engine in engines:
                figures = run(engine, args.tasks, args.workers, base, server)
                load = os.getloadavg()
                print(f"{engine}: {args.tasks} tasks x {args.workers} workers, load {load[0]:.1f}")
                for key, value in figures.items():
                    print(f"  {key:20s} {value:8.3f}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
