"""Headless `wyckoff run` is a host of the `ChatController` (issue 28): its turn is an
`rq.Turn` handled by the controller, which records every event, as in the app and ACP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.cli.main import main
from wyckoff_cli.core import events as ev
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.storage.sessions import SessionStore


def script(tmp_path: Path, rounds: list[Any]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"rounds": rounds}))
    return f"scripted:{path}"


@pytest.fixture
def handled(monkeypatch: pytest.MonkeyPatch) -> list[rq.SessionRequest]:
    seen: list[rq.SessionRequest] = []
    original = ChatController.handle

    async def handle(self: ChatController, request: rq.SessionRequest) -> AsyncIterator[ev.RuntimeEvent]:
        seen.append(request)
        async for event in original(self, request):
            yield event

    monkeypatch.setattr(ChatController, "handle", handle)
    return seen


@pytest.mark.parametrize("extra", [[], ["--no-session"], ["--output-format", "stream-json"]])
def test_the_turn_is_a_turn_request_to_the_controller(
    tmp_path: Path, workspace: Path, handled: list[rq.SessionRequest], extra: list[str]
) -> None:
    model = script(tmp_path, [{"text": "ok"}])
    assert main(["run", "-m", model, "--cwd", str(workspace), *extra, "hello there"]) == 0
    assert [type(r) for r in handled] == [rq.Turn]
    assert isinstance(handled[0], rq.Turn) and handled[0].text == "hello there"


def test_the_controller_records_the_turn_once(
    tmp_path: Path, workspace: Path, handled: list[rq.SessionRequest], capsys: pytest.CaptureFixture[str]
) -> None:
    model = script(tmp_path, [{"text": "saved answer"}])
    assert main(["run", "-m", model, "--cwd", str(workspace), "--output-format", "json", "hi"]) == 0
    session_id = json.loads(capsys.readouterr().out)["session_id"]
    from wyckoff_cli.session.store import build_session_store
    from wyckoff_cli.storage.config import load_config

    store: SessionStore = build_session_store(load_config(workspace).config)
    loaded = store.load(session_id)
    texts = [m.text for m in loaded.history]
    assert texts == ["hi", "saved answer"]  # each message once: the host does not record again
