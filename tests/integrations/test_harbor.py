"""The Harbor adapter: importable without Harbor, and run with Harbor's own classes.

The second part needs a Python 3.12+ venv with Harbor (`scripts/make_harbor_venv.sh`;
found at $WYCKOFF_HARBOR_PYTHON or /tmp/harbor-venv/bin/python) and is skipped, saying
so, without one. It runs a real `wyckoff run` against the fake server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wyckoff_cli.integrations import harbor
from wyckoff_cli.testing.fake_server import FakeServer

ROOT = Path(__file__).resolve().parents[2]
HARBOR_PYTHON = Path(os.environ.get("WYCKOFF_HARBOR_PYTHON", "/tmp/harbor-venv/bin/python"))


def test_the_module_imports_without_harbor_and_says_what_the_class_needs() -> None:
    if "harbor" in sys.modules or _importable("harbor"):
        pytest.skip("harbor is importable here: the class exists")
    with pytest.raises(ImportError, match="needs Harbor, which needs Python 3.12"):
        from wyckoff_cli.integrations.harbor import WyckoffAgent  # noqa: F401


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("anthropic/claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
        ("openrouter/meta/llama-4", "openrouter:meta/llama-4"),
        ("anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
        ("sonnet", "sonnet"),
    ],
)
def test_harbor_model_names_become_wyckoff_model_ids(given: str, expected: str) -> None:
    assert harbor.wyckoff_model(given) == expected


@pytest.mark.parametrize(
    "instruction",
    [
        "plain",
        "it's quoted",
        'double "quotes" and \\ backslashes',
        "$(touch pwned) and `touch pwned` and ${HOME}",
        "new\nlines; echo pwned > pwned",
        "-- --model evil:model",
        "%s %d printf formats",
    ],
)
def test_the_instruction_reaches_wyckoff_verbatim_whatever_it_contains(
    tmp_path: Path, instruction: str
) -> None:
    """The command runs in a real bash with a stand-in `wyckoff` that echoes argv and stdin."""
    bin_dir = tmp_path / "home" / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    stand_in = bin_dir / "wyckoff"
    stand_in.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$ARGS_FILE"\ncat > "$STDIN_FILE"\n')
    stand_in.chmod(0o755)
    command = harbor.run_command(
        instruction,
        events_dir=str(tmp_path / "logs"),
        model="anthropic/x",
        permission_mode="yolo",
        sandbox="off",
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "ARGS_FILE": str(tmp_path / "args"),
        "STDIN_FILE": str(tmp_path / "stdin"),
    }
    subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, check=True)
    assert (tmp_path / "stdin").read_text() == instruction
    argv = (tmp_path / "args").read_text().splitlines()
    assert argv == [
        "run",
        "--output-format",
        "stream-json",
        "--permission-mode",
        "yolo",
        "--sandbox",
        "off",
        "--model",
        "anthropic:x",
        "-",
    ]
    assert not (tmp_path / "pwned").exists()


def test_a_torn_event_stream_still_reports_what_was_used() -> None:
    text = "\n".join(
        [
            json.dumps(
                {
                    "type": "usage",
                    "model": "m",
                    "input_tokens": 10,
                    "output_tokens": 2,
                    "cache_read_tokens": 4,
                }
            ),
            json.dumps(
                {"type": "usage", "model": "m", "input_tokens": 5, "output_tokens": 1, "cache_read_tokens": 0}
            ),
            '{"type": "done", "usa',
        ]
    )
    report = harbor.RunReport.parse(text)
    assert report.done is None
    assert report.totals() == {"input_tokens": 15, "output_tokens": 3, "cache_read_tokens": 4}
    assert report.metadata() == {"reason": None}


def test_only_the_named_provider_variables_are_forwarded() -> None:
    environ = {
        "ANTHROPIC_API_KEY": "k",
        "AWS_SECRET_ACCESS_KEY": "no",
        "WYCKOFF_HOME": "/host/path",
        "OPENAI_BASE_URL": "",
    }
    assert harbor.forwarded_env(environ) == {"ANTHROPIC_API_KEY": "k"}


def _harbor_python() -> Path:
    if not HARBOR_PYTHON.exists():
        pytest.skip(f"no Harbor venv at {HARBOR_PYTHON}: create one with scripts/make_harbor_venv.sh")
    probe = subprocess.run([str(HARBOR_PYTHON), "-c", "import harbor"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"{HARBOR_PYTHON} cannot import harbor: {probe.stderr.strip().splitlines()[-1:]}")
    return HARBOR_PYTHON


def _drive(tmp_path: Path, server: FakeServer, name: str) -> dict[str, object]:
    python = _harbor_python()
    workspace = tmp_path / name / "workspace"
    workspace.mkdir(parents=True)
    bin_dir = tmp_path / name / "home" / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "wyckoff").symlink_to(
        Path(sys.executable).parent / "wyckoff"
    )  # "installed" in the environment
    logs = tmp_path / name / "logs"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "fake",
    }
    driven = subprocess.run(
        [str(python), str(ROOT / "tests" / "integrations" / "harbor_driver.py"), str(workspace), str(logs), "anthropic/claude-sonnet-4-5", "write the file"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert driven.returncode == 0, driven.stderr
    result: dict[str, object] = json.loads(driven.stdout.splitlines()[-1])
    result["workspace"] = str(workspace)
    return result


@pytest.mark.slow
def test_harbor_runs_wyckoff_and_gets_its_tokens_and_cost(tmp_path: Path) -> None:
    with FakeServer() as server:
        server.script(
            {
                "tool_calls": [{"name": "write_file", "args": {"path": "out.txt", "content": "done\n"}}],
                "usage": {"input_tokens": 1000, "output_tokens": 50},
            },
            {
                "text": "written",
                "usage": {"input_tokens": 1200, "output_tokens": 10, "cache_read_tokens": 800},
            },
        )
        result = _drive(tmp_path, server, "ok")
    assert result["error"] is None
    assert result["name"] == "wyckoff"
    assert result["import_path"] == "wyckoff_cli.integrations.harbor:WyckoffAgent"
    setup = result["setup_commands"]
    assert isinstance(setup, list) and any(
        "uv tool install --force --python 3.12 wyckoff" in c for c in setup
    )
    assert (Path(str(result["workspace"])) / "out.txt").read_text() == "done\n"
    context = result["context"]
    assert isinstance(context, dict)
    assert (context["n_input_tokens"], context["n_output_tokens"], context["n_cache_tokens"]) == (
        2200,
        60,
        800,
    )
    assert context["cost_usd"] > 0
    assert sum(u["n_input_tokens"] for u in context["model_usage"].values()) == 2200
    assert context["metadata"]["wyckoff"]["reason"] == "completed"
    post_run = result["post_run_context"]
    assert isinstance(post_run, dict) and post_run["n_input_tokens"] == 2200  # from the synced wyckoff.jsonl


@pytest.mark.slow
def test_a_failed_turn_is_harbors_error_and_still_reports_its_usage(tmp_path: Path) -> None:
    with FakeServer() as server:
        server.script({"status": 401})
        result = _drive(tmp_path, server, "fails")
    assert str(result["error"]).startswith(("NonZeroAgentExitCodeError", "AgentAuthenticationError"))
    context = result["context"]
    assert isinstance(context, dict)
    assert context["metadata"]["wyckoff"]["reason"] == "error"
    assert context["metadata"]["wyckoff"]["error"]["kind"] == "auth"
