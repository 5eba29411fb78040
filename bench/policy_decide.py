"""How long the approval policy takes to decide on shell commands of growing size.

    python bench/policy_decide.py

Prints the median of 5 runs per case (fresh parse each time: the cache is cleared).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy
from wyckoff_cli.tools.permissions.shellparse import parse_command

CASES = {
    "git status": "git status",
    "10 KB heredoc": "cat > f <<'EOF'\n" + "line of text $HOME\n" * 520 + "EOF",
    "50 KB heredoc": "cat > f <<'EOF'\n" + "line of text $HOME\n" * 2_600 + "EOF",
    "60 KB of 8,000 commands": "; ".join(["echo hi"] * 7_000),
    "100 KB heredoc": "cat > f <<'EOF'\n" + "line of text $HOME\n" * 5_200 + "EOF",
    "2 MB one word": "echo " + "a" * 2_000_000,
    "2 MB heredoc": "cat > f <<'EOF'\n" + "line of text $HOME\n" * 105_000 + "EOF",
}


def main() -> None:
    shell = {t.name: t for t in default_registry()}["run_shell"]
    policy = ApprovalPolicy(mode="yolo", deny=["run_shell(git push*)"], allow=["run_shell(pytest*)"])
    with tempfile.TemporaryDirectory() as folder:
        ctx = ToolContext(workspace=Path(folder))
        for name, command in CASES.items():
            times = []
            for _ in range(5):
                parse_command.cache_clear()
                started = time.perf_counter()
                verdict = policy.evaluate(shell, {"command": command}, ctx)
                times.append(time.perf_counter() - started)
            print(
                f"{name:<26} {len(command):>9,} chars  {statistics.median(times) * 1000:8.2f} ms  {verdict.action}"
            )


if __name__ == "__main__":
    main()
