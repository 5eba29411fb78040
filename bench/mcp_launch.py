"""Launch with three MCP servers configured, one slow to start (issue 36).

Three stdio servers in the user's `config.toml` (`[mcp_servers.NAME]`): `alpha` and
`beta` are the tests' demo server, `slow` is the same server behind a wrapper that
sleeps `--slow` seconds first. The app is built as `wyckoff chat` builds it (the
`SessionBuilder`, `chat_cmd`'s own MCP host, the `ChatController` with a scripted
model) and run headless at 100x40 in a fresh process; the clock starts before the app
is built (imports done). Measured, median of `--runs` runs:

1. prompt focused, and a typed key in the prompt and on screen (the servers start in
   the background meanwhile) -- target: the prompt accepts typing within 0.5 s;
2. a first message that does not name the slow server, sent as soon as `alpha` and
   `beta` are ready: Enter -> the model's request (the scripted provider records it), and
   whether the slow server was still starting then, with the notice that says so;
3. a message naming `slow`: Enter -> the model's request, which waits for it (so at
   about the server's own start-up time), with its tools in the request.

    python bench/mcp_launch.py [--runs 3] [--slow 3.0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from long_session import _refreshed, _until

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "tests" / "tools" / "mcp" / "demo_server.py"
TARGET_TYPING = 0.5
SLOW_WRAPPER = """\
import runpy, sys, time
time.sleep(float(sys.argv[1]))
sys.argv = [sys.argv[2], "stdio"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def make_home(tmp: Path, slow: float) -> tuple[Path, Path, dict[str, str]]:
    home, project = tmp / "home", tmp / "project"
    (project / ".wyckoff").mkdir(parents=True)
    (project / "README.md").write_text("# demo\n", encoding="utf-8")
    wrapper = tmp / "slow_server.py"
    wrapper.write_text(SLOW_WRAPPER, encoding="utf-8")
    script = tmp / "answers.json"
    script.write_text(json.dumps([{"text": "Hello."}, {"text": "Hello again."}]), encoding="utf-8")
    env = {**os.environ, "WYCKOFF_HOME": str(home)}
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(Path(__file__).parent), os.environ.get("PYTHONPATH")])
    )
    python = json.dumps(sys.executable)
    servers = [
        ("alpha", [str(DEMO), "stdio"], 30),
        ("beta", [str(DEMO), "stdio"], 30),
        ("slow", [str(wrapper), str(slow), str(DEMO)], 60),
    ]
    text = "".join(
        f"[mcp_servers.{name}]\ncommand = {python}\nargs = {json.dumps(args)}\nstartup_timeout = {timeout}\n\n"
        for name, args, timeout in servers
    )
    config = subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "config", "path"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(config).parent.mkdir(parents=True, exist_ok=True)
    Path(config).write_text(text, encoding="utf-8")
    return project, script, env


async def child(project: Path, script: Path, bare: bool = False) -> dict[str, Any]:
    from textual import events

    from wyckoff_cli.cli.chat_cmd import _mcp_host
    from wyckoff_cli.providers.scripted import ScriptedProvider
    from wyckoff_cli.session.builder import SessionBuilder, open_workspace
    from wyckoff_cli.session.controller import ChatController
    from wyckoff_cli.tui.app import WyckoffApp
    from wyckoff_cli.tui.widgets.entries import NoticeLine
    from wyckoff_cli.tui.widgets.prompt_input import PromptInput

    out: dict[str, Any] = {}
    started = time.perf_counter()
    workspace = open_workspace(project)
    rounds = json.loads(script.read_text(encoding="utf-8"))
    provider = ScriptedProvider(rounds, model="scripted:bench")
    builder = SessionBuilder(workspace, cwd=project, provider_factory=lambda _model: provider)
    host = _mcp_host(workspace, "scripted:bench")
    if not bare:
        builder.mcp = host
    app = WyckoffApp(ChatController(builder, model="scripted:bench"))
    async with app.run_test(size=(100, 40)):
        await _until(lambda: isinstance(app.focused, PromptInput))
        out["focused"] = time.perf_counter() - started
        prompt = app.focused
        assert isinstance(prompt, PromptInput)
        app.post_message(events.Key("z", "z"))
        await _until(lambda: "z" in prompt.text)
        out["typed"] = time.perf_counter() - started
        await _refreshed(app)
        out["key_on_screen"] = time.perf_counter() - started
        out["starting_at_key"] = host.connecting()
        if bare:
            return out
        await _until(lambda: set(host.connecting()) <= {"slow"} and host.manager is not None, timeout=60)
        out["fast_ready"] = time.perf_counter() - started

        async def send(text: str, requests: int) -> float:
            prompt.load_text(text)
            began = time.perf_counter()
            app.post_message(events.Key("enter", "\r"))
            await _until(lambda: len(provider.requests) >= requests, timeout=120)
            return time.perf_counter() - began

        out["slow_starting_at_send"] = "slow" in host.connecting()
        out["first_request"] = await send("hi", 1)
        out["first_tools"] = sorted(t.name for t in provider.requests[0].tools if t.name.startswith("mcp__"))
        out["notice"] = next(
            (n.message for n in app.screen.query(NoticeLine) if "still starting" in n.message), ""
        )
        await _until(lambda: not app.chat or not app.chat.busy, timeout=60)
        out["slow_starting_at_second"] = "slow" in host.connecting()
        out["second_request"] = await send("ask slow to echo", 2)
        out["second_tools"] = sorted(t.name for t in provider.requests[1].tools if t.name.startswith("mcp__"))
        out["slow_ready"] = time.perf_counter() - started
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--slow", type=float, default=3.0, help="seconds the slow server sleeps before starting"
    )
    parser.add_argument("--child", nargs=2, metavar=("PROJECT", "SCRIPT"), help=argparse.SUPPRESS)
    parser.add_argument("--bare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(Path(args.child[0]), Path(args.child[1]), bare=args.bare))))
        return
    with tempfile.TemporaryDirectory(prefix="wyckoff-bench-") as tmp:
        project, script, env = make_home(Path(tmp), args.slow)
        print(
            f"3 stdio MCP servers (one sleeping {args.slow:g} s first); load average {os.getloadavg()[0]:.2f}"
        )
        bare = subprocess.run(
            [sys.executable, __file__, "--child", str(project), str(script), "--bare"],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if bare.returncode != 0:
            raise SystemExit(f"child failed ({bare.returncode}):\n{bare.stderr[-3000:]}")
        figures = json.loads(bare.stdout.strip().splitlines()[-1])
        print(
            f"for scale, the same app with no server configured: typed key on screen {figures['key_on_screen']:.3f} s"
        )
        runs = []
        for _ in range(args.runs + 1):  # the first is a warm-up (bytecode, disk cache)
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(project), str(script)],
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                raise SystemExit(f"child failed ({done.returncode}):\n{done.stderr[-3000:]}")
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        runs = runs[1:]

        def median(key: str) -> float:
            return statistics.median(run[key] for run in runs)

        typing = median("key_on_screen")
        print(f"prompt focused {median('focused'):.3f} s; typed key in the prompt {median('typed'):.3f} s,")
        print(
            f"  on screen {typing:.3f} s (target < {TARGET_TYPING:g} s -- {'met' if typing < TARGET_TYPING else 'MISSED'});"
            f" servers still starting then: {runs[0]['starting_at_key']}"
        )
        print(f"alpha and beta ready at {median('fast_ready'):.3f} s")
        first = runs[0]
        print(
            f"first message (names no server): Enter -> request {median('first_request') * 1000:.0f} ms;"
            f" slow still starting at Enter in {sum(r['slow_starting_at_send'] for r in runs)}/{len(runs)} runs;"
            f" MCP tools in the request: {first['first_tools']}"
        )
        print(f"  notice: {first['notice']!r}")
        print(
            f"message naming `slow`: Enter -> request {median('second_request'):.3f} s (slow ready at"
            f" {median('slow_ready'):.3f} s from launch); MCP tools: {first['second_tools']}"
        )


if __name__ == "__main__":
    main()
