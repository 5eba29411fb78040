"""The checkpoints' side-effects notice is shown once per session (issue 28): not again
when `wyckoff run --resume` continues the session, nor when the app rebuilds the session
for another model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.core import events as ev
from wyckoff_cli.runtime.checkpoints.hooks import SIDE_EFFECTS_NOTICE
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.controller import ChatController

SHELL = {"tool_calls": [{"name": "run_shell", "args": {"command": "echo hi > out.txt"}}]}


def script(tmp_path: Path, name: str, rounds: list[Any]) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


def run(workspace: Path, model: str, *extra: str, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code = main(
        [
            "run",
            "-m",
            model,
            "--cwd",
            str(workspace),
            "--permission-mode",
            "yolo",
            "--output-format",
            "json",
            *extra,
        ]
    )
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert code == 0, data
    return data


def side_effect_notices(data: dict[str, Any]) -> list[str]:
    return [
        e["message"] for e in data["events"] if e["type"] == "notice" and e["message"] == SIDE_EFFECTS_NOTICE
    ]


def test_a_resumed_session_does_not_repeat_the_notice(
    workspace: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = run(workspace, script(tmp_path, "a", [SHELL, SHELL, {"text": "ran twice"}]), "go", capsys=capsys)
    assert side_effect_notices(first) == [SIDE_EFFECTS_NOTICE]  # once, for two commands
    again = script(tmp_path, "b", [SHELL, {"text": "ran again"}])
    second = run(workspace, again, "--resume", first["session_id"], "again", capsys=capsys)
    assert second["session_id"] == first["session_id"]
    assert second["summary"]["tool_calls"]["ok"] == 1
    assert side_effect_notices(second) == []
    fresh = run(workspace, script(tmp_path, "c", [SHELL, {"text": "new session"}]), "go", capsys=capsys)
    assert side_effect_notices(fresh) == [SIDE_EFFECTS_NOTICE]  # a new session is told


async def test_a_session_rebuilt_for_another_model_does_not_repeat_it(
    workspace: Path, tmp_path: Path
) -> None:
    first = script(tmp_path, "a", [SHELL, {"text": "one"}])
    second = script(tmp_path, "b", [SHELL, {"text": "two"}])
    controller = ChatController(
        SessionBuilder(open_workspace(workspace), cwd=workspace), model=first, mode="yolo"
    )
    notices: list[str] = []
    try:
        for text, model in (("a", first), ("b", second)):
            if model != controller.model:
                [_ async for _ in controller.handle(rq.SetModel(model))]
            async for event in controller.handle(rq.Turn(text)):
                if isinstance(event, ev.Notice) and event.message == SIDE_EFFECTS_NOTICE:
                    notices.append(text)
    finally:
        await controller.aclose()
    assert notices == ["a"]
