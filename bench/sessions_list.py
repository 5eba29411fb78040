"""How fast `wyckoff sessions list` is with thousands of saved sessions.

Creates N synthetic sessions (default 2,000) through the real `SessionStore` and
`SessionRecorder` in a temporary `WYCKOFF_HOME`: each has two turns with a tool call,
thinking and usage, like a short real session. Then it times:

- `SessionStore.list(project)`: one project holding all N sessions (the target:
  under 0.5 s);
- `SessionStore.list(None)`: the same N spread over 20 projects (`--all-projects`);
- the rebuild path: every `session.json` removed, so each summary is rebuilt from
  the logs (what happens only to sessions killed mid-turn);
- `wyckoff sessions list` and `--json` end to end, in a fresh interpreter (start-up,
  imports and rendering included).

    python bench/sessions_list.py [--sessions 2000] [--repeat 5]
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

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.storage.redact import Redactor
from wyckoff_cli.storage.sessions import SessionStore


def populate(store: SessionStore, projects: list[Path], count: int) -> None:
    for n in range(count):
        recorder = store.create(projects[n % len(projects)], model="anthropic:claude-sonnet-4-5")
        for turn in range(2):
            call = ToolCallPart(f"toolu_{n}_{turn}", "read_file", {"path": f"src/module_{n}.py"})
            messages = [
                Message.user(
                    f"Session {n}, turn {turn}: please look at module {n} and fix the failing test."
                ),
                Message(
                    "assistant",
                    (
                        ThinkingPart("Reading first.", signature="c2ln" * 20),
                        TextPart("Let me read it."),
                        call,
                    ),
                ),
                Message.tool_result(call.id, "read_file", "def f():\n    return 1\n" * 40),
                Message.assistant("Fixed: f returns 1 now."),
            ]
            recorder.record(ev.ModelStart(1, "anthropic:claude-sonnet-4-5"))
            for message in messages:
                recorder.record(ev.MessageCommitted(message.to_dict()))
            recorder.record(ev.UsageReported("anthropic:claude-sonnet-4-5", 12_000, 400, 10_000))
            recorder.record(ev.TurnDone("Fixed.", "completed", 2))
        recorder.close()


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), min(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wyckoff-bench-") as tmp:
        home = Path(tmp) / "home"
        os.environ["WYCKOFF_HOME"] = str(home)
        one = Path(tmp) / "one-project"
        many = [Path(tmp) / f"project-{i:02d}" for i in range(20)]
        for folder in [one, *many]:
            (folder / ".wyckoff").mkdir(parents=True)
        store = SessionStore(redactor=Redactor())
        started = time.perf_counter()
        populate(store, [one], args.sessions)
        populate(store, many, args.sessions)
        print(f"created 2 × {args.sessions} sessions in {time.perf_counter() - started:.1f} s")

        rows = [("SessionStore.list(project)", lambda: store.list(one))]
        rows.append(("SessionStore.list(None), 20 projects", lambda: store.list(None)))
        for name, fn in rows:
            median, best = timed(fn, args.repeat)
            print(
                f"{name:<44} {len(fn()):>5} sessions  median {median * 1000:7.1f} ms  best {best * 1000:7.1f} ms"
            )

        env = {**os.environ, "WYCKOFF_HOME": str(home)}
        for extra in ([], ["--json"]):
            command = [sys.executable, "-m", "wyckoff_cli", "sessions", "list", "--cwd", str(one), *extra]

            def cli(command: list[str] = command) -> None:
                subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)

            median, best = timed(cli, args.repeat)
            label = "wyckoff sessions list " + " ".join(extra)
            print(
                f"{label:<44} {args.sessions:>5} sessions  median {median * 1000:7.1f} ms  best {best * 1000:7.1f} ms"
            )
        version = [sys.executable, "-m", "wyckoff_cli", "--version"]
        median, _ = timed(lambda: subprocess.run(version, env=env, check=True, stdout=subprocess.DEVNULL), 3)
        print(f"{'(for scale: wyckoff --version)':<44} {'':>5}           median {median * 1000:7.1f} ms")

        for summary in store.project_dir(one).glob("*/session.json"):
            summary.unlink()
        median, best = timed(lambda: store.list(one), 1)
        print(
            f"{'rebuild: no session.json (logs read)':<44} {args.sessions:>5} sessions  {median * 1000:7.1f} ms"
        )


if __name__ == "__main__":
    main()
