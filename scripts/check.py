"""Every quality gate, in order, failing fast: the one command a contributor runs.

    python scripts/check.py            # lint, format, types, tests
    python scripts/check.py --fast     # skip the slow tests (wheel build, subprocess runs)
    python scripts/check.py -- -k loop # extra arguments go to pytest
    python scripts/check.py -- -n 0    # the tests one after another (pytest-xdist off)

Each step is named in the output; the first failure stops the run with a hint.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable

STEPS: list[tuple[str, list[str], str]] = [
    ("lint: ruff check", [PY, "-m", "ruff", "check", "."], "run `ruff check --fix .` and fix what remains"),
    ("format: ruff format --check", [PY, "-m", "ruff", "format", "--check", "."], "run `ruff format .`"),
    ("types: mypy (strict)", [PY, "-m", "mypy"], "fix the reported types; no blanket ignores"),
]


def main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    # every core (at most 4: the subprocess-heavy tests need CPU of their own), each test
    # file on one worker in its order (module-scoped servers, e.g. the language-server tests,
    # are shared by a file's tests in sequence); `-- -n 0` runs them in this process
    pytest_args = [PY, "-m", "pytest", "-n", "auto", "--maxprocesses", "4", "--dist", "loadfile", *extra]
    if "--fast" in argv:
        pytest_args += ["-m", "not slow"]
    steps = [*STEPS, ("tests: pytest", pytest_args, "see the failures above")]
    for number, (name, command, hint) in enumerate(steps, 1):
        print(f"\n=== [{number}/{len(steps)}] {name}", flush=True)
        started = time.monotonic()
        code = subprocess.call(command, cwd=ROOT)
        print(
            f"=== {name}: {'ok' if code == 0 else 'FAILED'} ({time.monotonic() - started:.1f} s)", flush=True
        )
        if code != 0:
            print(f"\ncheck failed at step {number} ({name}): {hint}", file=sys.stderr)
            return code
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
