"""`wyckoff batch` end to end: real git clones, real `wyckoff run` processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.batch.support import make_repo, results, scripted_model, task_file, writes_file
from wyckoff_cli.cli.main import main
from wyckoff_cli.testing.fake_server import FakeServer

pytestmark = pytest.mark.slow


def test_a_task_runs_in_its_own_clone_and_records_its_patch_and_test(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_repo(tmp_path / "repo")
    model = writes_file(tmp_path)
    tasks = task_file(
        tmp_path / "tasks.jsonl",
        [
            {
                "id": "one",
                "repo": "repo",  # relative to the task file's folder
                "prompt": "write hello.txt",
                "model": model,
                "permission_mode": "auto-edit",
                "setup": ["echo built > build.txt"],
                "test": "test -f hello.txt && test -f build.txt",
            },
            {
                "id": "two",
                "repo": str(repo),
                "ref": "v1",
                "prompt": "say hi",
                "model": scripted_model(tmp_path, [{"text": "hi"}]),
            },
        ],
    )
    out = tmp_path / "out"
    assert main(["batch", str(tasks), "--out", str(out)]) == 0
    got = results(out)
    one, two = got["one"], got["two"]
    assert one["status"] == "done" and one["reason"] == "completed" and one["exit"] == 0
    assert one["files_changed"] == ["hello.txt"]  # setup's build.txt is the base, not the agent's work
    assert one["test_exit"] == 0
    patch = Path(one["patch"])
    assert patch == out / "patches" / "one.diff" and "+hi" in patch.read_text()
    assert (out / "work" / "one" / "hello.txt").read_text() == "hi\n"
    assert not (repo / "hello.txt").exists()  # the source repository is untouched
    assert one["session"] and one["duration_s"] > 0 and one["tokens"]["output_tokens"] >= 0
    assert two["status"] == "done" and two["files_changed"] == [] and two["test_exit"] is None
    assert Path(two["patch"]).read_text() == ""
    events = [json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")]
    assert [e["event"] for e in events].count("end") == 2  # stderr is not a terminal: JSON lines
    assert events[-1] == {
        "event": "batch",
        "stopped": None,
        "total": 2,
        "done": 2,
        "running": 0,
        "failed": 0,
        "cost_usd": 0.0,
    }


def test_bad_input_is_recorded_with_its_reason_and_the_rest_run(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo")
    good = {"repo": "repo", "prompt": "hi", "model": scripted_model(tmp_path, [{"text": "hi"}])}
    tasks = task_file(
        tmp_path / "tasks.jsonl",
        [
            {"id": "ok", **good},
            '{"id": "torn", "repo": ',
            {"id": "no-prompt", "repo": "repo"},
            "",
            {"id": "missing-repo", **good, "repo": str(tmp_path / "nowhere")},
            {"id": "bad-ref", **good, "ref": "no-such-branch"},
            {"id": "bad-setup", **good, "setup": ["true", "echo broke >&2; exit 3"]},
            {"id": "hangs", **good, "setup": ["exec sleep 600"], "timeout_s": 1},
            {"id": "ok", **good},
            {"id": "../escape", **good},
        ],
    )
    out = tmp_path / "out"
    assert main(["batch", str(tasks), "--out", str(out), "--workers", "3"]) == 1
    got = results(out)
    assert got["ok"]["status"] == "done"
    assert got["line-2"]["status"] == "failed" and got["line-2"]["reason"].startswith("line 2: not JSON")
    assert got["no-prompt"]["reason"] == "line 3: missing 'prompt'"
    assert got["missing-repo"]["status"] == "failed"
    assert got["missing-repo"]["reason"].startswith(f"cannot clone {tmp_path / 'nowhere'}")
    assert got["bad-ref"]["reason"].startswith("ref 'no-such-branch' does not resolve")
    assert got["bad-setup"]["reason"].startswith("setup command 2 failed (exit 3): echo broke")
    assert "broke" in got["bad-setup"]["reason"]
    assert got["hangs"]["status"] == "timeout"
    assert got["hangs"]["reason"] == "past its timeout of 1 s (during setup)"
    assert got["line-9"]["reason"] == "line 9: duplicate id 'ok' (first on line 1)"
    assert got["line-10"]["reason"].startswith("line 10: id '../escape' must be")
    assert not (out / "escape").exists()
    assert len(got) == 9


def test_a_rerun_skips_finished_ids_without_a_model_request_and_retry_failed_reruns_the_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(tmp_path / "repo")
    with FakeServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake")
        server.script({"text": "first"}, {"status": 400})
        model = "anthropic:claude-sonnet-4-5"
        tasks = task_file(
            tmp_path / "tasks.jsonl",
            [
                {"id": "a", "repo": "repo", "prompt": "hi", "model": model},
                {"id": "b", "repo": "repo", "prompt": "hi", "model": model},
            ],
        )
        out = tmp_path / "out"
        argv = ["batch", str(tasks), "--out", str(out), "--workers", "1"]
        assert main(argv) == 1
        first = results(out)
        assert first["a"]["status"] == "done" and first["b"]["status"] == "failed"
        assert "bad_request" in first["b"]["reason"]
        assert len(server.requests) == 2
        assert main(argv) == 0  # nothing left to run: the failed one is finished too
        assert len(server.requests) == 2 and results(out) == first
        server.script({"text": "second"})
        assert main([*argv, "--retry-failed"]) == 0
        assert len(server.requests) == 3
        again = results(out)
        assert again["a"] == first["a"] and again["b"]["status"] == "done"
        assert list(again) == ["a", "b"]


def test_max_cost_stops_scheduling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    make_repo(tmp_path / "repo")
    with FakeServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "fake")
        answer = {"text": "ok", "usage": {"input_tokens": 100_000, "output_tokens": 1000}}
        server.script(answer, answer, answer)
        rows = [
            {"id": f"t{i}", "repo": "repo", "prompt": "hi", "model": "anthropic:claude-sonnet-4-5"}
            for i in range(3)
        ]
        tasks = task_file(tmp_path / "tasks.jsonl", rows)
        out = tmp_path / "out"
        assert main(["batch", str(tasks), "--out", str(out), "--workers", "1", "--max-cost-usd", "0.01"]) == 1
        got = results(out)
        assert list(got) == ["t0"] and got["t0"]["cost_usd"] > 0.01
        assert len(server.requests) == 1
        err = capsys.readouterr().err
        assert "reaching --max-cost-usd 0.01" in err and "2 task(s) not started" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["batch", "{tmp}/none.jsonl", "--out", "{tmp}/out"], "no task file"),
        (["batch", "{tmp}/tasks.jsonl", "--out", "{tmp}/file/out"], "cannot use"),
        (
            ["batch", "{tmp}/tasks.jsonl", "--out", "{tmp}/out", "--ray-address", "x:1"],
            "--ray-address needs --engine ray",
        ),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "tasks.jsonl").write_text("")
    (tmp_path / "file").write_text("a file, not a folder")
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "many", "1000"])
def test_bad_workers_is_a_usage_error(tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["batch", str(tmp_path / "t.jsonl"), "--out", str(tmp_path), "--workers", value])
    assert exit_info.value.code == 2
    assert "--workers" in capsys.readouterr().err


SECRETS = {
    "ANTHROPIC_API_KEY": "fake",
    "OPENAI_API_KEY": "sk-planted-openai",
    "GITHUB_TOKEN": "ghp_planted",
    "AWS_SECRET_ACCESS_KEY": "planted/aws",
    "DB_PASSWORD": "planted-password",
}


def test_setup_and_test_commands_get_no_secrets_while_the_agent_gets_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_repo(tmp_path / "repo")
    with FakeServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        for name, value in SECRETS.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("BATCH_VISIBLE", "kept")
        server.script({"text": "ok"})
        row = {"id": "env", "repo": "repo", "prompt": "hi", "model": "anthropic:claude-sonnet-4-5"}
        row |= {"setup": [f"env > {tmp_path}/setup.env"], "test": f"env > {tmp_path}/test.env"}
        tasks = task_file(tmp_path / "tasks.jsonl", [row])
        assert main(["batch", str(tasks), "--out", str(tmp_path / "out")]) == 0
        headers = server.requests[0].headers
        assert "fake" in (
            headers.get("x-api-key") or headers.get("authorization") or ""
        )  # the agent had its key
    for seen in ("setup.env", "test.env"):
        text = (tmp_path / seen).read_text()
        assert "BATCH_VISIBLE=kept" in text
        for name, value in SECRETS.items():
            assert name not in text and value not in text, (seen, name)
