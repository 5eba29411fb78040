"""CPU of a warm `wyckoff run` in one process: set-up, the stream, output, teardown.

Under the load of a shared machine wall times follow the share of a core a process
is given; CPU seconds follow its work. Each sample is a child process (this checkout,
or `--compare CHECKOUT`'s code through `PYTHONPATH`, alternating) that calls
`main(["run", "--no-session", "--output-format", "stream-json", ...])` `--runs` times
in a row against the loopback fake server (its own process) streaming the 80 KB answer
as 20,070 deltas, stdout to a pipe read by this process. The first run also pays the
imports (reported apart); the later runs are the per-run work, CPU by
`time.process_time()` in the child. Medians over all later runs of all samples.

    python bench/headless_cpu.py [--vendor openai] [--samples 3] [--runs 4] [--compare CHECKOUT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from provider_stream import MODELS, ServerProcess, answer_text

CHILD = """
import contextlib, io, json, os, sys, time
from wyckoff_cli.cli.main import main
argv = json.loads(sys.argv[1])
runs = int(sys.argv[2])
times = []
for _ in range(runs):
    started = time.process_time()
    with contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    sys.stdout.flush()
    times.append(time.process_time() - started)
    assert code == 0, code
os.write(int(sys.argv[3]), json.dumps(times).encode())
"""


def sample(vendor: str, server: ServerProcess, runs: int, code: str | None) -> list[float]:
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ)
        env.update(
            WYCKOFF_HOME=home,
            ANTHROPIC_BASE_URL=server.url,
            ANTHROPIC_API_KEY="bench-key",
            OPENAI_BASE_URL=server.openai_url,
            OPENAI_API_KEY="bench-key",
            GOOGLE_GEMINI_BASE_URL=server.url,
            GEMINI_API_KEY="bench-key",
        )
        if code is not None:
            env["PYTHONPATH"] = code
        argv = ["run", "--no-session", "--cwd", home, "--output-format", "stream-json"]
        argv += ["--model", f"{vendor}:{MODELS[vendor]}", "go"]
        read, write = os.pipe()
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, json.dumps(argv), str(runs), str(write)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=home,
            pass_fds=(write,),
        )
        os.close(write)
        assert child.stdout is not None
        lines = sum(1 for _ in child.stdout)  # a reader on the pipe, as a script would be
        child.wait()
        with os.fdopen(read, "rb") as result:
            times: list[float] = json.loads(result.read() or b"[]")
        assert child.returncode == 0 and len(times) == runs and lines > runs * 1000, (child.returncode, lines)
        return times


def report(label: str, samples: list[list[float]]) -> None:
    first = statistics.median(s[0] for s in samples)
    later = [t for s in samples for t in s[1:]]
    print(
        f"{label:32} warm run CPU {statistics.median(later):.3f} s (min {min(later):.3f}, "
        f"{len(later)} runs)   first run (with imports) {first:.3f} s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", nargs="?", type=Path)
    parser.add_argument("--vendor", choices=sorted(MODELS), default="openai")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--compare", type=Path, metavar="CHECKOUT")
    args = parser.parse_args()
    server = ServerProcess(answer_text(args.path), 4)
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    try:
        ours: list[list[float]] = []
        theirs: list[list[float]] = []
        for _ in range(args.samples):  # alternating: both see the same load
            if args.compare is not None:
                theirs.append(sample(args.vendor, server, args.runs, str(args.compare)))
            ours.append(sample(args.vendor, server, args.runs, None))
        if args.compare is not None:
            report(f"{args.vendor} ({args.compare})", theirs)
        report(f"{args.vendor} (this checkout)", ours)
    finally:
        server.close()
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
