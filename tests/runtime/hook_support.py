"""Real hook scripts in temp folders, configured the way users configure them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import tomli_w

from wyckoff_cli.runtime.hook_config import load_hooks
from wyckoff_cli.runtime.user_hooks import UserHooks
from wyckoff_cli.storage import paths

SCRIPT = """\
import json, os, sys, time
data = json.load(sys.stdin)
with open({log!r}, "a", encoding="utf-8") as handle:
    handle.write(json.dumps({{"input": data, "project": os.environ.get("WYCKOFF_PROJECT_DIR"),
        "claude_project": os.environ.get("CLAUDE_PROJECT_DIR"), "key": os.environ.get("OPENAI_API_KEY"),
        "cwd": os.getcwd(), "pid": os.getpid()}}) + "\\n")
time.sleep({sleep!r})
sys.stdout.write({stdout!r})
sys.stderr.write({stderr!r})
sys.exit({code!r})
"""


def hook_command(
    folder: Path,
    name: str,
    *,
    code: int = 0,
    stdout: str | dict[str, Any] = "",
    stderr: str = "",
    sleep: float = 0.0,
) -> tuple[str, Path]:
    """A hook script; returns (the command to configure, the log of its inputs)."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{name}.log"
    text = json.dumps(stdout) if isinstance(stdout, dict) else stdout
    script = folder / f"{name}.py"
    script.write_text(SCRIPT.format(log=str(log), sleep=sleep, stdout=text, stderr=stderr, code=code))
    return f"{sys.executable} {script}", log


def inputs(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


def write_user_hooks(hooks: dict[str, list[dict[str, Any]]]) -> Path:
    """`[[hooks.EVENT]]` tables in the user's config.toml."""
    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps({"hooks": hooks}))
    return path


def group(command: str, matcher: str = "", timeout: float | None = None) -> dict[str, Any]:
    hook: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    return {"matcher": matcher, "hooks": [hook]}


def user_hooks(workspace: Path, hooks: dict[str, list[dict[str, Any]]], **options: Any) -> UserHooks:
    write_user_hooks(hooks)
    found = load_hooks(workspace)
    assert found.problems == []
    return UserHooks(found, project_dir=workspace, **options)
