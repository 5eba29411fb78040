"""Runs `WyckoffAgent` with Harbor's own classes; started by test_harbor.py with the
Python of a Harbor venv (3.12+), the repository on PYTHONPATH. Prints one JSON object.

    harbor_driver.py WORKSPACE LOGS_DIR MODEL

1. Harbor's `AgentFactory` loads the agent from its import path (as `harbor run
   --agent-import-path` does) and `agent.setup()` runs against an environment that
   records commands instead of running them (it would install system packages).
2. `agent.run()` runs against a local environment: every command in a real `bash` in
   WORKSPACE, with HOME at WORKSPACE/../home (where the test put `.local/bin/wyckoff`).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path, PurePosixPath
from typing import Any

from harbor.agents.factory import AgentFactory
from harbor.environments.base import ExecResult
from harbor.models.agent.context import AgentContext


class RecordingEnvironment:
    default_user = None

    def __init__(self) -> None:
        self.commands: list[str] = []

    async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_sec: int | None = None, user: str | int | None = None) -> ExecResult:  # fmt: skip
        self.commands.append(command)
        return ExecResult(stdout="", stderr="", return_code=0)


class LocalEnvironment:
    default_user = None

    def __init__(self, workspace: Path, home: Path) -> None:
        self.workspace = workspace
        self.home = home

    async def exec(self, command: str, cwd: str | None = None, env: dict[str, str] | None = None,
                   timeout_sec: int | None = None, user: str | int | None = None) -> ExecResult:  # fmt: skip
        merged = {**os.environ, "HOME": str(self.home), **(env or {})}
        done = await asyncio.to_thread(
            subprocess.run, ["bash", "-c", command], cwd=cwd or self.workspace, env=merged,
            capture_output=True, text=True, timeout=timeout_sec,
        )  # fmt: skip
        return ExecResult(stdout=done.stdout, stderr=done.stderr, return_code=done.returncode)


async def main(workspace: Path, logs_dir: Path, model: str, instruction: str) -> dict[str, Any]:
    agent = AgentFactory.create_agent_from_import_path(
        "wyckoff_cli.integrations.harbor:WyckoffAgent",
        logs_dir=logs_dir,
        model_name=model,
        environment_logs_dir=PurePosixPath(logs_dir),
        permission_mode="auto-edit",
    )
    recorded = RecordingEnvironment()
    await agent.setup(recorded)  # type: ignore[arg-type]
    context = AgentContext()
    error = None
    try:
        await agent.run(instruction, LocalEnvironment(workspace, workspace.parent / "home"), context)  # type: ignore[arg-type]
    except Exception as exc:  # a turn that did not complete: Harbor records the error
        error = f"{type(exc).__name__}: {exc}"
    empty = AgentContext()
    agent.populate_context_post_run(empty)
    return {
        "name": agent.name(),
        "import_path": type(agent).import_path(),
        "setup_commands": recorded.commands,
        "context": context.model_dump(),
        "post_run_context": empty.model_dump(),
        "error": error,
    }


if __name__ == "__main__":
    workspace, logs_dir, model, instruction = sys.argv[1:5]
    print(json.dumps(asyncio.run(main(Path(workspace), Path(logs_dir), model, instruction))))
