"""Background sessions: the memory of idle ones and the time of `wyckoff ps`.

Builds a git repository of N files (default 20,000: 400 folders of 50 small files,
committed), then starts `--sessions` background sessions (default 4) on it with
`wyckoff run --background`, each through the real Anthropic SDK against the loopback
fake server, each asked to write a file so that it sits waiting for an approval: an
idle background session. With `--worktree` (part A's option, when this build has it)
each session runs in its own worktree. Measured:

- each idle session's resident memory (VmRSS from /proc), and its CPU while idle
  (user + system time over `--idle-seconds`);
- `wyckoff ps` (text) and `wyckoff ps --json --all`, as a user runs them (a new
  process each time), median and max of `--runs`.

The sessions are stopped with `wyckoff stop` at the end.

    python bench/background.py [--files 20000] [--sessions 4] [--runs 9] [--worktree]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wyckoff_cli.testing.fake_server import FakeServer

CLI = [sys.executable, "-P", "-m", "wyckoff_cli"]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def build_repo(root: Path, files: int) -> None:
    for index in range(files):
        folder = root / f"pkg{index // 50:03d}"
        if index % 50 == 0:
            folder.mkdir(parents=True)
        (folder / f"module_{index:05d}.py").write_text(
            f"# module {index}\ndef f(x):\n    return x + {index}\n"
        )
    (root / ".wyckoff").mkdir()
    git = ["git", "-c", "user.email=bench@example.com", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tree"], cwd=root, check=True)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def pss_mb(pid: int) -> tuple[float, float]:
    """(PSS, USS) in MB: shared pages counted by share, and only the private ones."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        values[name] = int(rest.split()[0])
    return values["Pss"] / 1024, (values["Private_Clean"] + values["Private_Dirty"]) / 1024


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def ps(env: dict[str, str], cwd: Path, *extra: str) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the process, its output): on a loaded machine the
    wall time is mostly waiting for a core; the CPU time is what `ps` itself costs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run([*CLI, "ps", *extra], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout


def wait_for(condition: object, what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--idle-seconds", type=float, default=5.0)
    parser.add_argument("--worktree", action="store_true", help="each session in its own worktree (part A)")
    parser.add_argument(
        "--provider",
        choices=("anthropic", "scripted", "both"),
        default="both",
        help="the real Anthropic SDK against the fake server, the scripted provider (no SDK), or both",
    )
    args = parser.parse_args()
    for provider in ("anthropic", "scripted") if args.provider == "both" else (args.provider,):
        print(f"== {provider} ==")
        measure(args, provider)


def measure(args: argparse.Namespace, provider: str) -> None:
    with tempfile.TemporaryDirectory(prefix="wyckoff-bg-") as tmp, FakeServer() as server:
        base = Path(tmp)
        repo = base / "repo"
        repo.mkdir()
        started = time.perf_counter()
        build_repo(repo, args.files)
        print(f"tree: {args.files} files, committed in {time.perf_counter() - started:.1f} s")
        ask = {
            "text": "Writing.",
            "tool_calls": [{"name": "write_file", "args": {"path": "out.txt", "content": "x"}}],
        }
        server.script(*[ask] * args.sessions)
        script = base / "script.json"
        script.write_text(json.dumps({"rounds": [ask]}))
        model = "anthropic:claude-sonnet-4-5" if provider == "anthropic" else f"scripted:{script}"
        env = {
            **os.environ,
            "WYCKOFF_HOME": str(base / "home"),
            "ANTHROPIC_API_KEY": "bench-key",
            "ANTHROPIC_BASE_URL": server.url,
            "NO_PROXY": "127.0.0.1",
        }
        ids: list[str] = []
        for number in range(args.sessions):
            extra = ["--worktree", f"bench{number}"] if args.worktree else []
            command = [*CLI, "run", "--background", *extra, "-m", model, f"task {number}"]
            out = subprocess.run(
                command, cwd=repo, env=env, capture_output=True, text=True, check=True
            ).stdout
            ids.append(out.splitlines()[0].rstrip(".").split()[-1])
        registry = base / "home" / "data" / "running"

        def entries() -> list[dict[str, object]]:
            return [json.loads((registry / f"{i}.json").read_text()) for i in ids]

        wait_for(
            lambda: all(e["state"] == "waiting" for e in entries()), "every session to wait for its approval"
        )
        pids = [int(str(e["pid"])) for e in entries()]
        before = [cpu_seconds(pid) for pid in pids]
        time.sleep(args.idle_seconds)  # the bench measures idleness over a fixed span
        cpu = [(cpu_seconds(pid) - b) / args.idle_seconds * 100 for pid, b in zip(pids, before, strict=True)]
        rss = [rss_mb(pid) for pid in pids]
        shares = [pss_mb(pid) for pid in pids]
        for session_id, pid, mb, (pss, uss), load in zip(ids, pids, rss, shares, cpu, strict=True):
            print(
                f"{session_id} pid {pid}: RSS {mb:.1f} MB, PSS {pss:.1f} MB, USS {uss:.1f} MB, idle CPU {load:.2f} %"
            )
        print(f"RSS: max {max(rss):.1f} MB, mean {statistics.mean(rss):.1f} MB (target < 80 MB each)")
        print(f"load average before ps: {Path('/proc/loadavg').read_text().split()[0]}")
        for extra in ((), ("--json", "--all")):
            runs = [ps(env, repo, *extra) for _ in range(args.runs)]
            wall = sorted(r[0] * 1000 for r in runs)
            cpu = sorted(r[1] * 1000 for r in runs)
            label = " ".join(("wyckoff ps", *extra))
            print(f"{label}: wall median {statistics.median(wall):.0f} ms (min {wall[0]:.0f}, max {wall[-1]:.0f}); "
                  f"CPU median {statistics.median(cpu):.0f} ms, over {args.runs} runs (target < 300 ms)")  # fmt: skip
        print(ps(env, repo)[2])
        for session_id in ids:
            subprocess.run([*CLI, "stop", session_id], cwd=repo, env=env, capture_output=True, check=False)


if __name__ == "__main__":
    main()
