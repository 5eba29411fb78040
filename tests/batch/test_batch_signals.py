"""`wyckoff batch` as a real process: Ctrl+C, and the progress display on a terminal."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
from pathlib import Path

import pytest

from tests.batch.support import ROOT, batch_argv, make_repo, results, scripted_model, task_file
from tests.waiting import until_sync

pytestmark = pytest.mark.slow


def _blocking_tasks(tmp_path: Path, count: int) -> tuple[Path, Path]:
    """`count` tasks whose setup waits until `release` exists (each says it started)."""
    make_repo(tmp_path / "repo")
    gate = tmp_path / "gate"
    gate.mkdir()
    model = scripted_model(tmp_path, [{"text": "ok"}])
    wait = f"touch {gate}/$(basename $PWD).started; while [ ! -e {gate}/release ]; do sleep 0.05; done"
    rows = [
        {"id": f"t{i}", "repo": "repo", "prompt": "hi", "model": model, "setup": [wait]} for i in range(count)
    ]
    return task_file(tmp_path / "tasks.jsonl", rows), gate


def _start(argv: list[str], **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, cwd=ROOT, text=True, start_new_session=True, **kwargs)  # type: ignore[call-overload]


def test_first_ctrl_c_stops_scheduling_and_lets_running_tasks_end(tmp_path: Path) -> None:
    tasks, gate = _blocking_tasks(tmp_path, 4)
    out = tmp_path / "out"
    batch = _start(batch_argv(tasks, out, "--workers", "2"), stderr=subprocess.PIPE)
    try:
        until_sync(lambda: len(list(gate.glob("*.started"))) == 2, what="two tasks running")
        batch.send_signal(signal.SIGINT)
        assert batch.stderr is not None
        lines: list[dict[str, object]] = []
        for line in batch.stderr:
            lines.append(json.loads(line))
            if lines[-1].get("event") == "note" and "Ctrl+C" in str(lines[-1]["message"]):
                break
        (gate / "release").touch()
        _, rest = batch.communicate(timeout=120)
    finally:
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
    assert batch.returncode == 130
    got = results(out)
    assert sorted(got) == ["t0", "t1"] and {r["status"] for r in got.values()} == {"done"}
    assert sorted(p.name for p in gate.glob("*.started")) == ["t0.started", "t1.started"]
    assert "2 task(s) not started" in rest


def test_second_ctrl_c_cancels_running_tasks_as_interrupted_and_a_rerun_runs_them(tmp_path: Path) -> None:
    tasks, gate = _blocking_tasks(tmp_path, 3)
    out = tmp_path / "out"
    batch = _start(batch_argv(tasks, out, "--workers", "2"), stderr=subprocess.PIPE)
    try:
        until_sync(lambda: len(list(gate.glob("*.started"))) == 2, what="two tasks running")
        batch.send_signal(signal.SIGINT)
        assert batch.stderr is not None
        for line in batch.stderr:
            if "Ctrl+C" in line:
                break
        batch.send_signal(signal.SIGINT)
        batch.communicate(timeout=120)
    finally:
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
    assert batch.returncode == 130
    got = results(out)
    assert sorted(got) == ["t0", "t1"]
    assert {r["status"] for r in got.values()} == {"interrupted"}
    assert all(r["reason"] == "cancelled (during setup)" for r in got.values())
    (gate / "release").touch()
    again = subprocess.run(batch_argv(tasks, out), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert {r["status"] for r in results(out).values()} == {"done"} and len(results(out)) == 3


def test_a_terminal_gets_the_rich_progress_display(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    model = scripted_model(tmp_path, [{"text": "ok"}])
    tasks = task_file(
        tmp_path / "tasks.jsonl",
        [
            {"id": "fine", "repo": "repo", "prompt": "hi", "model": model},
            {"id": "gone", "repo": "nowhere", "prompt": "hi"},
        ],
    )
    main_end, terminal = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    batch = _start(batch_argv(tasks, tmp_path / "out"), stdout=subprocess.DEVNULL, stderr=terminal, env=env)
    os.close(terminal)
    shown = b""
    try:
        while True:
            try:
                chunk = os.read(main_end, 4096)
            except OSError:  # the other end closed: the process is gone
                break
            if not chunk:
                break
            shown += chunk
        batch.wait(timeout=120)
    finally:
        os.close(main_end)
        if batch.poll() is None:
            os.killpg(batch.pid, signal.SIGKILL)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode("utf-8", "replace"))
    assert batch.returncode == 1
    assert "{" not in text.replace("{}", "")  # no JSON lines on a terminal
    assert "done 1" in text and "failed 1" in text and "gone: failed: cannot clone" in text
    assert "batch: 1 done, 1 not done" in text
