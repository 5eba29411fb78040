"""`wyckoff batch --engine ray` against a real Ray cluster started here (`ray start --head`).

The cluster runs with its own `WYCKOFF_HOME` (its workers are its children, not ours),
on 127.0.0.1 with 2 CPUs and a small object store, and is ended as a process group.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.batch.support import ROOT, batch_argv, make_repo, results, scripted_model, task_file, writes_file
from tests.waiting import until_sync

pytest.importorskip("ray", reason="the ray extra is not installed (pip install -e '.[ray]')")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # a cluster's start on a loaded machine


@pytest.fixture(autouse=True)
def no_token_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray 2.60 turns token authentication on for a head when ~/.ray/auth_token exists
    (a local `ray.init()` writes one) unless RAY_AUTH_MODE says otherwise; the head and
    the driver must agree, and a test must not depend on the machine's home."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")


@dataclass(frozen=True)
class Cluster:
    address: str
    home: Path  # the workers' WYCKOFF_HOME


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _accepts(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    base = Path(tempfile.mkdtemp(prefix="wy-ray-", dir="/tmp"))  # short: Ray's socket paths
    home = base / "home"
    home.mkdir()
    port = _free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.upper().endswith(("_API_KEY", "_AUTH_TOKEN", "_PROXY")) and key != "PYTEST_CURRENT_TEST"
    }
    env.update(WYCKOFF_HOME=str(home), RAY_USAGE_STATS_ENABLED="0", NO_PROXY="127.0.0.1,localhost")
    env.update(RAY_AUTH_MODE="disabled")  # whatever ~/.ray/auth_token holds (see no_token_auth)
    ray_cli = Path(sys.executable).parent / "ray"
    head = subprocess.Popen(
        [
            str(ray_cli), "start", "--head", "--block", f"--port={port}", "--node-ip-address=127.0.0.1",
            "--num-cpus=2", "--object-store-memory=100000000", "--include-dashboard=false",
            "--disable-usage-stats", f"--temp-dir={base / 'ray'}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        until_sync(lambda: _accepts(port) or head.poll() is not None, timeout=120, what="the Ray head")
        assert head.poll() is None, "ray start --head exited"
        yield Cluster(f"127.0.0.1:{port}", home)
    finally:
        with_group = head.pid
        os.killpg(with_group, signal.SIGTERM)  # `--block` ends its Ray processes on SIGTERM
        try:
            head.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(with_group, signal.SIGKILL)
            head.wait()
        shutil.rmtree(base, ignore_errors=True)


def test_tasks_run_on_the_cluster_and_the_driver_writes_the_same_results(
    tmp_path: Path, cluster: Cluster
) -> None:
    make_repo(tmp_path / "repo")
    rows = [
        {
            "id": "edit",
            "repo": "repo",
            "prompt": "write",
            "model": writes_file(tmp_path),
            "permission_mode": "auto-edit",
            "test": "test -f hello.txt",
        },
        {"id": "talk", "repo": "repo", "prompt": "hi", "model": scripted_model(tmp_path, [{"text": "hi"}])},
        {"id": "gone", "repo": "nowhere", "prompt": "hi"},
    ]
    tasks = task_file(tmp_path / "tasks.jsonl", rows)
    out = tmp_path / "out"
    argv = batch_argv(tasks, out, "--engine", "ray", "--ray-address", cluster.address)
    ran = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 1, ran.stderr
    got = results(out)
    assert got["edit"]["status"] == "done" and got["edit"]["files_changed"] == ["hello.txt"]
    assert got["edit"]["test_exit"] == 0 and "+hi" in Path(got["edit"]["patch"]).read_text()
    assert got["edit"]["session"] and list((cluster.home).rglob(f"{got['edit']['session']}"))
    assert got["talk"]["status"] == "done"
    assert got["gone"]["status"] == "failed" and got["gone"]["reason"].startswith("cannot clone")
    again = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and results(out) == got  # finished ids are skipped on Ray too


def test_a_task_lost_with_its_worker_is_run_again_once(tmp_path: Path, cluster: Cluster) -> None:
    make_repo(tmp_path / "repo")
    marks = tmp_path / "marks"
    marks.mkdir()
    # the first attempt says which worker runs it, then hangs; the second goes straight on
    setup = f"if [ -e {marks}/worker ]; then exit 0; fi; echo $PPID > {marks}/worker.tmp; mv {marks}/worker.tmp {marks}/worker; echo $$ > {marks}/shell; exec sleep 600"
    model = scripted_model(tmp_path, [{"text": "ok"}])
    tasks = task_file(
        tmp_path / "tasks.jsonl",
        [{"id": "lost", "repo": "repo", "prompt": "hi", "model": model, "setup": [setup]}],
    )
    out = tmp_path / "out"
    argv = batch_argv(tasks, out, "--engine", "ray", "--ray-address", cluster.address)
    batch = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        worker = int(
            until_sync(
                lambda: (marks / "worker").exists() and (marks / "worker").read_text().strip(),
                timeout=300,
                what="the task's worker pid",
            )
        )
        sleeper = int(
            until_sync(
                lambda: (marks / "shell").exists() and (marks / "shell").read_text().strip(),
                what="the setup's pid",
            )
        )
        os.kill(worker, signal.SIGKILL)  # the worker dies with its task
        os.kill(sleeper, signal.SIGKILL)  # its orphaned setup (in its own session) too
        _, err = batch.communicate(timeout=600)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    assert batch.returncode == 0, err
    got = results(out)["lost"]
    assert got["status"] == "done" and got["reason"] == "completed"


def test_a_second_ctrl_c_cancels_the_tasks_on_the_cluster(tmp_path: Path, cluster: Cluster) -> None:
    make_repo(tmp_path / "repo")
    gate = tmp_path / "gate"
    gate.mkdir()
    setup = f"echo $$ > {gate}/$(basename $PWD).pid; exec sleep 600"
    model = scripted_model(tmp_path, [{"text": "ok"}])
    rows = [
        {"id": f"c{i}", "repo": "repo", "prompt": "hi", "model": model, "setup": [setup]} for i in range(2)
    ]
    tasks = task_file(tmp_path / "tasks.jsonl", rows)
    out = tmp_path / "out"
    argv = batch_argv(tasks, out, "--engine", "ray", "--ray-address", cluster.address)
    batch = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        until_sync(lambda: len(list(gate.glob("*.pid"))) == 2, timeout=300, what="both tasks in their setup")
        sleepers = [int(p.read_text()) for p in gate.glob("*.pid")]
        batch.send_signal(signal.SIGINT)
        assert batch.stderr is not None
        for line in batch.stderr:
            if "Ctrl+C" in line:
                break
        batch.send_signal(signal.SIGINT)
        _, err = batch.communicate(timeout=300)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    assert batch.returncode == 130, err
    got = results(out)
    assert sorted(got) == ["c0", "c1"] and {r["status"] for r in got.values()} == {"interrupted"}
    for pid in sleepers:  # the worker ended the setup's process group, not only itself
        until_sync(lambda pid=pid: not _alive(pid), what=f"setup process {pid} ended")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]
