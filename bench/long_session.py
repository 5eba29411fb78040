"""Resuming a long session: load to interactive, then memory while scrolling through it.

Creates one synthetic session of N messages (default 2,000) through the real
`SessionStore` and `SessionRecorder`, in a temporary `WYCKOFF_HOME`: turns of a user
message, a few tool rounds (assistant text, sometimes thinking, one or two tool calls
of read_file / grep / run_shell / edit_file / list_dir, results of a few hundred to a
few thousand characters) and a final Markdown answer with code blocks, lists and the
odd table. Then, each in a fresh process (imports done before the clock starts):

1. resume: the `SessionBuilder` and `ChatController` as `wyckoff chat` builds them
   (with a scripted model), `store.load(id)`, `WyckoffApp(controller)` run headless, until the chat screen is shown and the prompt has focus
   -- target < 1.5 s; then a key typed into the prompt and the refresh after it, and
   when the off-screen answers have finished rendering in the background;
2. scrolling (one run): RSS after resuming; every "↑ N earlier messages" expanded
   (`LoadEarlier.show_earlier()`, 50 messages at a time) and rendered; then PageUp to
   the top and PageDown to the bottom through the whole transcript, several passes,
   sampling RSS every 20 pages. The keys go through the app's own bindings, posted
   as the driver posts them (animations off, so each key scrolls at once; not
   `Pilot.press`, which waits on every one of the thousands of widgets). Memory should
   stay flat while scrolling: the first pass paints every entry for the first time,
   so the target is on the passes after it (under FLAT_MB of growth);
3. end to end: `wyckoff chat --resume ID` launched as a process, with the probe
   driver of `bench/startup.py`, until a typed key is in the prompt.

The machine is noisy: the figures are medians of several runs.

    python bench/long_session.py [--messages 2000] [--runs 5] [--passes 3] [--width 100] [--height 40]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_SECONDS = 1.5
FLAT_MB = 5.0
SEED = 9


# --------------------------------------------------------------------------- the synthetic session

FILES = ["src/app/cli.py", "src/app/config.py", "src/app/store.py", "src/app/http.py", "tests/test_store.py"]
WORDS = [
    *["the", "config", "loader", "reads", "each", "file", "once", "and", "caches", "the", "parsed"],
    *["result", "until", "its", "mtime", "changes", "so", "the", "request", "handler", "never"],
    *["blocks", "on", "disk", "while", "the", "store", "keeps", "at", "most", "128", "entries"],
    *["and", "logs", "a", "warning", "for", "unknown", "keys", "before", "the", "retry", "loop"],
]


def _prose(rng: random.Random, words: int) -> str:
    picked = [rng.choice(WORDS) for _ in range(words)]
    picked[0] = picked[0].capitalize()
    text = " ".join(picked)
    return text.replace(" so ", ". So ").replace(" and ", ", and ") + "."


def _code(rng: random.Random, n: int, lines: int) -> str:
    body = [f"def handler_{n}(request: Request, limit: int | None = None) -> Response:"]
    body.append(f'    """Serve request {n}, keeping at most `limit` items."""')
    for i in range(lines):
        body.append(
            rng.choice(
                [
                    f"    items = [item for item in store.fetch({i}) if item.ok]",
                    f"    if limit is not None and len(items) > limit:  # step {i}",
                    "        items = items[:limit]",
                    f"    log.debug('handler_{n}: %d items', len(items))",
                    f"    cache[{i}] = {{'key': request.key, 'count': len(items)}}",
                ]
            )
        )
    body.append("    return Response(items)")
    return "\n".join(body)


def _file_text(rng: random.Random, chars: int) -> str:
    lines, n = [], 0
    while sum(map(len, lines)) < chars:
        n += 1
        lines.append(f"{n:>4}\t" + _code(rng, n, 3).replace("\n", f"\n{n:>4}\t"))
    return "\n".join(lines)[:chars]


def _answer(rng: random.Random, n: int) -> str:
    parts = [f"## What changed in step {n}\n", _prose(rng, rng.randint(30, 70)) + "\n"]
    parts.append(
        "\n".join(f"- `{rng.choice(FILES)}`: {_prose(rng, rng.randint(6, 14))}" for _ in range(3)) + "\n"
    )
    for _ in range(rng.randint(1, 2)):
        parts.append(f"```python\n{_code(rng, n, rng.randint(6, 24))}\n```\n")
        parts.append(_prose(rng, rng.randint(15, 40)) + "\n")
    if rng.random() < 0.25:
        parts.append("| file | lines | status |\n|---|---:|---|\n")
        parts[-1] += "".join(f"| {f} | {rng.randint(10, 400)} | changed |\n" for f in rng.sample(FILES, 3))
    return "\n".join(parts)


def _call(rng: random.Random, turn: int, index: int) -> tuple[dict[str, Any], str]:
    """A tool call's arguments and its result."""
    name = rng.choice(["read_file", "read_file", "grep", "run_shell", "edit_file", "list_dir"])
    path = rng.choice(FILES)
    if name == "read_file":
        return {"name": name, "args": {"path": path}}, _file_text(rng, rng.randint(800, 4000))
    if name == "grep":
        hits = "\n".join(f"{rng.choice(FILES)}:{rng.randint(1, 400)}: cache[{i}] = load()" for i in range(20))
        return {"name": name, "args": {"pattern": "cache\\[", "path": "src"}}, hits[: rng.randint(300, 1500)]
    if name == "run_shell":
        output = "".join(f"tests/test_store.py::test_case_{i} PASSED\n" for i in range(rng.randint(8, 60)))
        return {"name": name, "args": {"command": "python -m pytest -q tests"}}, output + "== all passed =="
    if name == "edit_file":
        old, new = _code(rng, turn, 4), _code(rng, turn + 1, 5)
        return {"name": name, "args": {"path": path, "old_string": old, "new_string": new}}, f"Edited {path}."
    listing = "\n".join(f"{f}  {rng.randint(100, 9000)} bytes" for f in FILES * 4)
    return {"name": name, "args": {"path": "src"}}, listing[: rng.randint(300, 800)]


def turn_messages(rng: random.Random, turn: int, budget: int) -> list[Any]:
    """One turn of at least 2 messages, `budget` when fewer than 2 would be left over:
    the user's message, tool rounds (an assistant message with its calls, then one
    result each), and the final answer."""
    from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart

    planned = 2 + sum(1 + rng.randint(1, 2) for _ in range(rng.randint(0, 4)))
    size = budget if budget - planned < 2 else planned  # never leave a single message over
    left = size - 2  # messages for tool rounds
    user = f"Turn {turn}: " + _prose(rng, rng.randint(8, 60))
    if rng.random() < 0.15:
        user += "\n\nI get this error:\n\n" + "\n".join(
            f'  File "src/app/store.py", line {i}' for i in range(8)
        )
    messages = [Message.user(user)]
    while left >= 2:
        calls = 2 if left >= 3 and rng.random() < 0.35 else 1
        parts: list[Any] = []
        if rng.random() < 0.3:
            parts.append(ThinkingPart(_prose(rng, rng.randint(20, 80)), signature="c2ln" * 20))
        parts.append(TextPart(_prose(rng, rng.randint(5, 25))))
        results = []
        for index in range(calls):
            spec, result = _call(rng, turn, index)
            call = ToolCallPart(f"toolu_{turn}_{len(messages)}_{index}", spec["name"], spec["args"])
            parts.append(call)
            results.append(Message.tool_result(call.id, call.name, result))
        messages.append(Message("assistant", tuple(parts)))
        messages.extend(results)
        left -= 1 + calls
    messages.append(Message.assistant(_answer(rng, turn)))
    if left == 1:  # one message short: a short follow-up answer
        messages.append(Message.assistant(_prose(rng, 12)))
    return messages


def create_session(store: Any, project: Path, count: int) -> str:
    from wyckoff_cli.core import events as ev

    rng = random.Random(SEED)
    recorder = store.create(project, model="anthropic:claude-sonnet-4-5")
    written, turn = 0, 0
    while written < count:
        turn += 1
        messages = turn_messages(rng, turn, count - written)
        recorder.record(ev.ModelStart(1, "anthropic:claude-sonnet-4-5"))
        for message in messages:
            recorder.conversation.append(message)
            recorder.record(ev.MessageCommitted(message.to_dict()))
        recorder.record(ev.UsageReported("anthropic:claude-sonnet-4-5", 20_000 + 40 * written, 900, 18_000))
        recorder.record(ev.TurnDone(messages[-1].text, "completed", len(messages) // 2))
        written += len(messages)
    recorder.close()
    return str(recorder.id)


# --------------------------------------------------------------------------- the child: resume and scroll


def rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _until(check: Any, timeout: float = 60.0, step: float = 0.001, what: Any = None) -> None:
    deadline = time.perf_counter() + timeout
    while not check():
        if time.perf_counter() > deadline:
            raise RuntimeError(f"timed out waiting for the app{': ' + what() if what else ''}")
        await asyncio.sleep(step)


async def _refreshed(app: Any) -> None:
    """Wait for the app's next screen refresh."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    app.call_after_refresh(lambda: done.done() or done.set_result(None))
    await done


async def child(
    project: Path, script: Path, session_id: str, size: tuple[int, int], scroll: int
) -> dict[str, Any]:
    from textual import events

    from wyckoff_cli.session.builder import SessionBuilder, open_workspace
    from wyckoff_cli.session.controller import ChatController
    from wyckoff_cli.tui.app import WyckoffApp
    from wyckoff_cli.tui.replay import LoadEarlier
    from wyckoff_cli.tui.widgets.markdown_stream import MarkdownStreamView
    from wyckoff_cli.tui.widgets.prompt_input import PromptInput
    from wyckoff_cli.tui.widgets.transcript import BlockLinesView

    out: dict[str, Any] = {"rss_start": rss_mb()}
    started = time.perf_counter()
    builder = SessionBuilder(open_workspace(project), cwd=project)
    store = builder.sessions()
    out["deps"] = time.perf_counter() - started
    loaded = store.load(session_id)
    out["load"] = time.perf_counter() - started
    out["messages"] = len(loaded.history)
    app = WyckoffApp(ChatController(builder, model=f"scripted:{script}", loaded=loaded))
    async with app.run_test(size=size):
        await _until(lambda: isinstance(app.focused, PromptInput))
        out["focused"] = time.perf_counter() - started
        prompt = app.focused
        assert isinstance(prompt, PromptInput)
        app.post_message(events.Key("z", "z"))
        await _until(lambda: "z" in prompt.text)
        out["typed"] = time.perf_counter() - started
        await _refreshed(app)
        out["painted"] = time.perf_counter() - started
        assert app.chat is not None
        transcript = app.chat.transcript

        def unsettled() -> list[str]:
            """Text entries not yet rendered at their width with exact heights (what is
            off screen is rendered in the background after the first paint)."""
            found = []
            for view in transcript.query(BlockLinesView):
                width = view._width
                if width <= 0 or (isinstance(view, MarkdownStreamView) and view._dirty):
                    found.append(f"{view!r}: width {width}, dirty")
                    continue
                for block in view._blocks:
                    strips = block.strips.get(width)
                    if strips is None or not view._height_fits(block, len(strips)):
                        lines = None if strips is None else len(strips)
                        found.append(
                            f"{view!r}: block height {block.height}, rendered {lines}, size {view.size}"
                        )
                        break
            return found

        def settled() -> bool:
            return not unsettled()

        def describe() -> str:
            problems = unsettled()
            return f"{len(problems)} entries not settled, e.g. {problems[:3]}"

        await _until(settled, step=0.02, what=describe)
        out["settled"] = time.perf_counter() - started
        out["widgets"] = len(transcript.children)
        out["rss_resumed"] = rss_mb()
        if not scroll:
            return out

        # Keys are posted to the app as the driver posts them; Pilot.press() is not used
        # because it waits for every widget of the screen (thousands here) each time.
        expansions: list[float] = []
        while earlier := list(transcript.query(LoadEarlier)):
            began = time.perf_counter()
            earlier[0].show_earlier()
            await _until(lambda: not earlier[0].is_attached)
            await _refreshed(app)
            expansions.append(time.perf_counter() - began)
        out["expansions"] = expansions
        out["rss_expanded"] = rss_mb()
        began = time.perf_counter()
        await _until(settled, timeout=300, step=0.25, what=describe)  # it walks every entry: not too often
        out["expanded_settle_time"] = time.perf_counter() - began
        out["expanded_settled_rss"] = rss_mb()
        out["widgets_all"] = len(transcript.children)
        out["objects"] = len(gc.get_objects())  # what a full garbage collection walks
        out["lines"] = transcript.virtual_size.height

        pauses: list[tuple[int, float]] = []  # (generation, seconds) of each garbage collection
        gc_started = [0.0]

        def on_gc(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                gc_started[0] = time.perf_counter()
            else:
                pauses.append((info["generation"], time.perf_counter() - gc_started[0]))

        gc.callbacks.append(on_gc)
        passes: list[dict[str, Any]] = []
        samples: list[float] = []
        for _ in range(scroll):
            record: dict[str, Any] = {}
            for key, done in (
                ("pageup", lambda: transcript.scroll_y <= 0),
                ("pagedown", lambda: transcript.scroll_y >= transcript.max_scroll_y),
            ):
                steps: list[float] = []
                while not done():
                    before = transcript.scroll_y
                    began = time.perf_counter()
                    app.post_message(events.Key(key, None))
                    await _until(lambda before=before: transcript.scroll_y != before)
                    await _refreshed(app)
                    steps.append(time.perf_counter() - began)
                    if len(steps) % 20 == 0:
                        samples.append(rss_mb())
                record[key] = steps
            record["rss"] = rss_mb()
            samples.append(record["rss"])
            passes.append(record)
        gc.callbacks.remove(on_gc)
        out["gc_full"] = [seconds for generation, seconds in pauses if generation == 2]
        out["gc_young_max"] = max((seconds for generation, seconds in pauses if generation < 2), default=0.0)
        out["passes"] = passes
        out["rss_samples"] = samples
        painted_lines = sum(v.lines_painted for v in transcript.query(BlockLinesView))
        out["lines_painted"] = painted_lines
    out["rss_peak"] = peak_rss_mb()
    return out


# --------------------------------------------------------------------------- the parent


def spawn(env: dict[str, str], *args: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"child failed ({done.returncode}):\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.1f} ms, max {max(values) * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--passes", type=int, default=3, help="PageUp-to-top-and-back passes")
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--height", type=int, default=40)
    parser.add_argument(
        "--child", nargs=4, metavar=("PROJECT", "SCRIPT", "ID", "PASSES"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    size = (args.width, args.height)
    if args.child:
        project, script, session_id, passes = args.child
        result = asyncio.run(child(Path(project), Path(script), session_id, size, int(passes)))
        print(json.dumps(result))
        return

    from startup import make_workspace, run_once

    from wyckoff_cli.session.builder import SessionBuilder, open_workspace

    with tempfile.TemporaryDirectory(prefix="wyckoff-bench-") as tmp:
        project, script, env = make_workspace(Path(tmp))
        os.environ["WYCKOFF_HOME"] = env["WYCKOFF_HOME"]
        env["TEXTUAL_ANIMATIONS"] = "none"  # PageUp scrolls at once (the key path is the same)
        store = SessionBuilder(open_workspace(project), cwd=project).sessions()
        began = time.perf_counter()
        session_id = create_session(store, project, args.messages)
        chat_log = store.find(session_id).directory / "chat.jsonl"
        print(
            f"session {session_id}: {args.messages:,} messages, chat log {chat_log.stat().st_size / 2**20:.1f} MB,"
            f" created in {time.perf_counter() - began:.1f} s; terminal {args.width}x{args.height}, headless"
        )
        common = (str(project), str(script), session_id)
        spawn(env, *common, "0")  # warm-up (disk cache, .pyc)
        runs = [spawn(env, *common, "0") for _ in range(args.runs)]
        print(
            f"resume, fresh process each, median of {args.runs} runs (min-max), seconds from the start of resuming:"
        )
        labels = [
            ("deps", "session builder made (config, store)"),
            ("load", "store.load(id) done"),
            ("focused", "chat screen shown, prompt focused"),
            ("typed", "typed key in the prompt"),
            ("painted", "refresh after the key"),
            ("settled", "off-screen answers rendered (background)"),
        ]
        for key, label in labels:
            values = [run[key] for run in runs]
            print(f"  {label:<44} {statistics.median(values):6.3f} s  ({min(values):.3f}-{max(values):.3f})")
        first = runs[0]
        print(f"  ({first['messages']} messages loaded, {first['widgets']} widgets mounted)")
        headline = statistics.median(run["focused"] for run in runs)
        verdict = "met" if headline < TARGET_SECONDS else "MISSED"
        print(f"resume to interactive: {headline:.3f} s (target < {TARGET_SECONDS:g} s) -- {verdict}")
        rss = [(run["rss_start"], run["rss_resumed"]) for run in runs]
        print(
            f"RSS: {statistics.median(a for a, _ in rss):.0f} MB after imports,"
            f" {statistics.median(b for _, b in rss):.0f} MB resumed"
        )

        ends = [
            run_once(project, script, env, chat_args=("--resume", session_id))[0] for _ in range(args.runs)
        ]
        e2e = statistics.median(run["painted"] for run in ends)
        print(
            f"end to end, `wyckoff chat --resume ID` launched: typed key on screen {e2e:.3f} s"
            f" (median of {args.runs}; prompt focused {statistics.median(r['focused'] for r in ends):.3f} s)"
        )

        if not args.passes:
            return
        print(f"scrolling (one run, {args.passes} passes):")
        scroll = spawn(env, *common, str(args.passes))
        print(
            f"  RSS after resume {scroll['rss_resumed']:.0f} MB; expanding the earlier messages"
            f" {len(scroll['expansions'])} times ({_ms(scroll['expansions'])} each) -> {scroll['rss_expanded']:.0f} MB,"
            f" {scroll['expanded_settled_rss']:.0f} MB once every block was rendered in the background"
            f" ({scroll['expanded_settle_time']:.1f} s later)"
        )
        print(f"  {scroll['widgets_all']} widgets, {scroll['lines']:,} lines in the transcript")
        for number, record in enumerate(scroll["passes"], 1):
            print(
                f"  pass {number}: {len(record['pageup'])} x PageUp ({_ms(record['pageup'])}),"
                f" {len(record['pagedown'])} x PageDown ({_ms(record['pagedown'])}) -> RSS {record['rss']:.0f} MB"
            )
        samples = scroll["rss_samples"]
        growth = scroll["passes"][-1]["rss"] - scroll["passes"][0]["rss"]
        print(
            f"  RSS while scrolling: {min(samples):.0f}-{max(samples):.0f} MB;"
            f" change from the end of pass 1 to the end of pass {len(scroll['passes'])}: {growth:+.1f} MB;"
            f" peak {max(scroll['rss_peak'], *samples):.0f} MB"
        )
        first = scroll["passes"][0]["rss"] - scroll["expanded_settled_rss"]
        if len(scroll["passes"]) > 1:
            verdict = "met" if growth < FLAT_MB else "MISSED"
            print(
                f"memory while scrolling: {first:+.1f} MB over pass 1 (every entry painted for the first time),"
                f" {growth:+.1f} MB over passes 2-{len(scroll['passes'])} (target < {FLAT_MB:g} MB) -- {verdict}"
            )
        full = scroll["gc_full"]
        print(
            f"  garbage collection while scrolling ({scroll['objects'] / 1e6:.1f} M objects tracked):"
            f" {len(full)} full collections"
            f" (longest {max(full, default=0) * 1000:.0f} ms), young ones at most {scroll['gc_young_max'] * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
