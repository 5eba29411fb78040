"""run_shell, task_output and task_stop with real processes."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.tools.conftest import run_tool
from tests.waiting import eventually
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.process import TAIL_CHARS
from wyckoff_cli.tools.shell import run_shell, task_output, task_stop


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting to be reaped counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


async def wait_dead(pids: list[int], timeout: float = 3.0) -> None:
    await eventually(
        lambda: not any(alive(pid) for pid in pids),
        timeout,
        what=f"{pids} to end",
        observe=lambda: f"still alive: {[p for p in pids if alive(p)]}",
    )


def recorded_pids(root: Path) -> list[str]:
    return (root / "pids").read_text().split() if (root / "pids").exists() else []


# A child and a grandchild, both recording their pids, both sleeping.
FAMILY = "bash -c 'sleep 30 & echo $! >> pids; wait' & echo $! >> pids; sleep 30"


async def test_output_and_exit_code(ctx: ToolContext) -> None:
    outcome = await run_tool(run_shell, ctx, command="echo out; echo err >&2; exit 3")
    assert outcome.text == "out\nerr\n[exit code 3]"
    assert outcome.display == {"exit_code": 3, "cwd": "."}


async def test_no_output(ctx: ToolContext) -> None:
    assert (await run_tool(run_shell, ctx, command="true")).text == "(no output)\n[exit code 0]"


async def test_output_is_streamed_while_running(ctx: ToolContext) -> None:
    seen: list[tuple[float, str]] = []
    ctx.emit_output = lambda text: seen.append((time.monotonic(), text))
    await run_tool(run_shell, ctx, command="echo first; sleep 0.4; echo second")
    done = time.monotonic()
    assert "".join(text for _, text in seen) == "first\nsecond\n"
    assert done - seen[0][0] >= 0.3  # "first" arrived well before the command ended


async def test_runs_in_workspace_and_cwd(root: Path, ctx: ToolContext, outside: Path) -> None:
    (root / "sub dir").mkdir()
    assert (await run_tool(run_shell, ctx, command="pwd")).text.splitlines()[0] == str(root)
    outcome = await run_tool(run_shell, ctx, command="pwd", cwd="sub dir")
    assert outcome.text.splitlines()[0] == str(root / "sub dir")
    with pytest.raises(ToolError, match="outside the workspace"):
        await run_tool(run_shell, ctx, command="pwd", cwd=str(outside))
    with pytest.raises(ToolError, match="not an existing folder"):
        await run_tool(run_shell, ctx, command="pwd", cwd="missing")
    ctx.approved_outside_paths = frozenset({outside})
    assert (await run_tool(run_shell, ctx, command="pwd", cwd=str(outside))).text.startswith(str(outside))


async def test_children_never_get_api_keys(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-leak")
    monkeypatch.setenv("MY_SERVICE_AUTH_TOKEN", "tok")
    monkeypatch.setenv("HARMLESS", "kept")
    command = "echo ${OPENAI_API_KEY:-none} ${MY_SERVICE_AUTH_TOKEN:-none} $HARMLESS"
    assert (await run_tool(run_shell, ctx, command=command)).text.startswith("none none kept")
    ctx.env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-x", "HARMLESS": "given"}
    command = "echo ${ANTHROPIC_API_KEY:-none} $HARMLESS"
    assert (await run_tool(run_shell, ctx, command=command)).text.startswith("none given")


async def test_stdin_is_empty(ctx: ToolContext) -> None:
    outcome = await run_tool(run_shell, ctx, command="cat; echo done", timeout=5)
    assert outcome.text == "done\n[exit code 0]"


async def test_timeout_kills_the_whole_process_group(root: Path, ctx: ToolContext) -> None:
    started = time.monotonic()
    outcome = await run_tool(run_shell, ctx, command=f"echo started; {FAMILY}", timeout=0.8)
    assert time.monotonic() - started < 5
    assert outcome.text.startswith("started\n[timed out after 0.8 s")
    assert outcome.display is not None and outcome.display["timed_out"] is True
    assert outcome.display["exit_code"] is None
    pids = [int(p) for p in (root / "pids").read_text().split()]
    assert len(pids) == 2
    await wait_dead(pids)


async def test_cancel_kills_the_whole_process_group(root: Path, ctx: ToolContext) -> None:
    task = asyncio.create_task(run_tool(run_shell, ctx, command=FAMILY, timeout=60))
    await eventually(
        lambda: len(recorded_pids(root)) >= 2, what="the child and grandchild to record their pids"
    )
    pids = [int(p) for p in (root / "pids").read_text().split()]
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_dead(pids)


async def test_processes_left_running_are_stopped_when_the_command_ends(root: Path, ctx: ToolContext) -> None:
    started = time.monotonic()
    outcome = await run_tool(run_shell, ctx, command="sleep 30 & echo $! > pid; echo bye", timeout=20)
    assert time.monotonic() - started < 5
    assert outcome.text == "bye\n[exit code 0]"
    await wait_dead([int((root / "pid").read_text())])


async def test_long_output_keeps_head_and_tail_and_saves_the_rest(ctx: ToolContext) -> None:
    outcome = await run_tool(run_shell, ctx, command="seq 1 30000; echo END >&2")
    text = outcome.text
    assert len(text) < 7_500
    assert text.startswith("1\n2\n3\n")
    assert text.endswith("29999\n30000\nEND\n[exit code 0]")
    assert "characters omitted from the middle" in text
    saved = Path(outcome.display["full_output"])  # type: ignore[index]
    assert saved.read_text().splitlines()[14_999] == "15000"
    assert str(saved) in text
    tail_part = text.split("omitted from the middle", 1)[1]
    assert len(tail_part) <= TAIL_CHARS + 400


async def test_ansi_colours_and_progress_redraws_are_cleaned(ctx: ToolContext) -> None:
    outcome = await run_tool(run_shell, ctx, command=r"printf '\033[31mred\033[0m\n10%%\r50%%\r100%%\n'")
    assert outcome.text == "red\n100%\n[exit code 0]"


async def test_undecodable_output(ctx: ToolContext) -> None:
    outcome = await run_tool(run_shell, ctx, command=r"printf 'caf\351\n'")
    assert outcome.text == "caf\ufffd\n[exit code 0]"


async def test_signal_exit(ctx: ToolContext) -> None:
    assert (await run_tool(run_shell, ctx, command="kill -9 $$")).text.endswith("[killed by signal 9]")


def test_preview_shows_command_cwd_and_rule(root: Path, ctx: ToolContext) -> None:
    assert run_shell.preview is not None
    preview = run_shell.preview({"command": "git status --short"}, ctx)
    assert preview == {
        "kind": "command",
        "command": "git status --short",
        "cwd": str(root),
        "timeout": 120.0,
        "background": False,
        "rule": "run_shell(git status)",
    }
    assert "rule" not in run_shell.preview({"command": "rm -rf /"}, ctx)


# --------------------------------------------------------------------------- background


async def test_background_lifecycle(ctx: ToolContext) -> None:
    assert ctx.background is not None
    outcome = await run_tool(run_shell, ctx, command="echo one; sleep 0.3; echo two; exit 4", background=True)
    assert outcome.text.startswith("Started in the background as task bg-1")
    assert outcome.display == {"task_id": "bg-1", "cwd": ".", "background": True}
    running = (await run_tool(task_output, ctx, task_id="bg-1")).text
    assert "is running" in running
    task = ctx.background.get("bg-1")
    assert task is not None
    await eventually(lambda: task.status != "running", what="the background task to end")
    assert task.status == "failed" and task.exit_code == 4
    assert [t.id for t in ctx.background.drain_finished()] == ["bg-1"]
    text = (await run_tool(task_output, ctx, task_id="bg-1", since=0)).text
    assert text.splitlines() == [
        "Task bg-1 (run_shell: echo one; sleep 0.3; echo two; exit 4) is failed with exit code 4.",
        "Output, characters 0-8 of 8:",
        "one",
        "two",
        "[end of output]",
    ]
    later = (await run_tool(task_output, ctx, task_id="bg-1", since=4)).text
    assert later.splitlines()[1:] == ["Output, characters 4-8 of 8:", "two", "[end of output]"]
    assert "already ended" in (await run_tool(task_stop, ctx, task_id="bg-1")).text


async def test_task_output_pages_and_since(ctx: ToolContext) -> None:
    assert ctx.background is not None
    await run_tool(run_shell, ctx, command="seq 1 5000", background=True)
    task = ctx.background.get("bg-1")
    assert task is not None
    await eventually(lambda: task.status != "running", what="the background task to end")
    latest = (await run_tool(task_output, ctx, task_id="bg-1")).text
    assert latest.rstrip().endswith("[end of output]") and "5000" in latest
    assert "[earlier output: task_output(task_id='bg-1', since=0)]" in latest
    collected = ""
    since = 0
    for _ in range(20):
        page = (await run_tool(task_output, ctx, task_id="bg-1", since=since)).text
        lines = page.splitlines()
        body = lines[2:-1]
        collected += "\n".join(body) + "\n"
        if "[end of output]" in page:
            break
        since = int(lines[-1].rsplit("since=", 1)[1].rstrip(")]"))
    assert collected.split() == [str(i) for i in range(1, 5001)]


async def test_task_stop_kills_the_group(root: Path, ctx: ToolContext) -> None:
    assert ctx.background is not None
    await run_tool(run_shell, ctx, command=f"echo up; {FAMILY}", background=True)
    await eventually(
        lambda: len(recorded_pids(root)) >= 2, what="the child and grandchild to record their pids"
    )
    pids = [int(p) for p in (root / "pids").read_text().split()]
    text = (await run_tool(task_stop, ctx, task_id="bg-1")).text
    assert text.startswith("Stopped task bg-1") and "stopped" in text and "up" in text
    await wait_dead(pids)
    task = ctx.background.get("bg-1")
    assert task is not None and task.status == "stopped"


async def test_background_timeout_fails_the_task(ctx: ToolContext) -> None:
    assert ctx.background is not None
    await run_tool(run_shell, ctx, command="sleep 10", background=True, timeout=0.3)
    task = ctx.background.get("bg-1")
    assert task is not None
    await eventually(lambda: task.status != "running", what="the background task to end")
    assert task.status == "failed" and "timed out" in task.result


async def test_task_errors(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="no background task 'bg-9'"):
        await run_tool(task_output, ctx, task_id="bg-9")
    with pytest.raises(ToolError, match="no background task"):
        await run_tool(task_stop, ctx, task_id="bg-9")
    ctx.background = None
    with pytest.raises(ToolError, match="not available"):
        await run_tool(run_shell, ctx, command="ls", background=True)
