"""Headless `wyckoff run` through the real entry point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.cli.main import main


def script(tmp_path: Path, rounds: list[Any]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


def test_text_output_prints_the_answer(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = script(tmp_path, [{"text": "The answer is 42.", "chunk_size": 4}])
    code = main(["run", "--model", model, "--cwd", str(workspace), "what is it?"])
    assert code == 0
    assert capsys.readouterr().out == "The answer is 42.\n"


def test_stream_json_prints_every_event_as_a_line(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = script(tmp_path, [{"text": "ok"}])
    assert main(["run", "-m", model, "--cwd", str(workspace), "--output-format", "stream-json", "hi"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["type"] for line in lines] == [
        "message",
        "model_start",
        "text_delta",
        "usage",
        "message",
        "done",
    ]
    assert lines[-1]["reason"] == "completed"


def test_json_output_is_one_object(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = script(tmp_path, [{"text": "ok", "usage": {"input_tokens": 9, "output_tokens": 2}}])
    assert main(["run", "-m", model, "--cwd", str(workspace), "--output-format", "json", "hi"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["text"] == "ok" and result["reason"] == "completed" and result["usage"]["input_tokens"] == 9
    assert result["error"] is None
    assert "text_delta" not in {e["type"] for e in result["events"]}


def test_prompt_from_stdin(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    model = script(tmp_path, [{"text": "read it"}])
    monkeypatch.setattr(sys, "stdin", io.StringIO("from stdin"))
    assert main(["run", "-m", model, "--cwd", str(workspace), "--output-format", "json", "-"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["events"][0]["message"]["parts"][0]["text"] == "from stdin"


def test_failed_turn_exits_1_with_the_error_kind(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = script(tmp_path, [{"error": {"kind": "auth", "message": "invalid x-api-key"}}])
    assert main(["run", "-m", model, "--cwd", str(workspace), "hi"]) == 1
    assert "auth: invalid x-api-key" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "--model", "nope", "hi"], "unknown model 'nope'"),
        (["run", "--model", "scripted:/does/not/exist.json", "hi"], "cannot read script"),
    ],
)
def test_usage_and_config_errors_exit_2_without_traceback(
    argv: list[str], message: str, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv[:1], "--cwd", str(workspace), *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_bad_max_tool_rounds_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--max-tool-rounds", "0", "hi"])
    assert exit_info.value.code == 2
    assert "expected a positive integer" in capsys.readouterr().err


def test_ctrl_c_interrupts_with_status_130(tmp_path: Path, workspace: Path) -> None:
    model = script(tmp_path, [[{"text": "working"}, {"sleep": 30}]])
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wyckoff_cli",
            "run",
            "-m",
            model,
            "--cwd",
            str(workspace),
            "--output-format",
            "stream-json",
            "hi",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    for line in proc.stdout:
        if json.loads(line)["type"] == "text_delta":
            break
        assert time.monotonic() < deadline
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert json.loads(rest.splitlines()[-1])["reason"] == "aborted"


def test_tool_output_saved_to_disk_has_api_keys_removed(
    tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "sk-proj-" + "Q" * 40
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    (workspace / "big.txt").write_text(f"OPENAI_API_KEY={secret}\n" + "filler line\n" * 3000)
    command = "cat big.txt"
    model = script(
        tmp_path, [{"tool_calls": [{"name": "run_shell", "args": {"command": command}}]}, {"text": "ok"}]
    )
    code = main(
        [
            "run",
            "-m",
            model,
            "--cwd",
            str(workspace),
            "--allow",
            f"run_shell({command})",
            "--output-format",
            "json",
            "show it",
        ]
    )
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    saved = [Path(e["offloaded_path"]) for e in result["events"] if e.get("offloaded_path")]
    shell_files = list(Path(os.environ["WYCKOFF_HOME"]).rglob("run_shell-*.txt"))
    files = saved + shell_files
    assert files, "the large output was written somewhere"
    for path in files:
        text = path.read_text()
        assert secret not in text and "[REDACTED]" in text


def test_unknown_model_suggests_ids_that_exist(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wyckoff_cli.cli.main import main as run_main

    (workspace / ".wyckoff" / "config.toml").write_text(
        '[models.fast]\nprovider = "openai"\nmodel = "gpt-5-mini"\n'
    )
    assert run_main(["run", "--cwd", str(workspace), "--model", "sonnet", "hi"]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'sonnet'" in err and "Your aliases: fast" in err
    assert "Did you mean anthropic:claude-sonnet" in err


def test_text_output_separates_rounds_and_reports_refused_calls_on_stderr(
    tmp_path: Path, workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rounds = [
        {"text": "I'll look first.", "tool_calls": [{"name": "frobnicate", "args": {}}]},
        {
            "text": "Now I'll try another way.",
            "tool_calls": [{"name": "read_file", "args": {"path": "nope.txt"}}],
        },
        {"text": "That is all I can do."},
    ]
    code = main(["run", "--model", script(tmp_path, rounds), "--cwd", str(workspace), "look at it"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out == "I'll look first.\n\nNow I'll try another way.\n\nThat is all I can do.\n"
    refused = [
        line
        for line in captured.err.splitlines()
        if line.startswith("wyckoff: ") and "not run or failed" in line
    ]
    assert len(refused) == 2 and "frobnicate" in refused[0] and "read_file" in refused[1]
