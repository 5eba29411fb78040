"""`/review`: the same review through the request union, in a chat and headless."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.review.support import configure, git, make_repo, plant_bug, planted_bug_answers
from wyckoff_cli.cli.main import main
from wyckoff_cli.core import events as ev
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.commands import ACP, HEADLESS, offered_by, parse
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.testing.fake_server import FakeServer


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


@pytest.fixture
def repo(tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_repo(tmp_path / "repo")
    configure(server, monkeypatch, root)
    git(root, "add", ".wyckoff")
    git(root, "commit", "-q", "-m", "config")
    return root


@pytest.mark.parametrize(
    ("text", "request_"),
    [
        ("/review", rq.Review()),
        ("/review --uncommitted", rq.Review()),
        ("/review --base main", rq.Review("base", "main")),
        ("/review --commit 1a2b3c", rq.Review("commit", "1a2b3c")),
        ("/review --base", rq.Invalid("review", "/review [--uncommitted | --base REF | --commit SHA]")),
        (
            "/review --commit --upload-pack=x",
            rq.Invalid("review", "/review [--uncommitted | --base REF | --commit SHA]"),
        ),
        ("/review main", rq.Invalid("review", "/review [--uncommitted | --base REF | --commit SHA]")),
    ],
)
def test_review_arguments_parse_into_a_request(text: str, request_: rq.Request) -> None:
    assert parse(text) == request_


def test_every_host_offers_review() -> None:
    assert "review" in {c.name for c in offered_by(ACP)} & {c.name for c in offered_by(HEADLESS)}


async def test_review_in_a_chat_shows_the_findings_and_records_their_usage(
    repo: Path, server: FakeServer
) -> None:
    plant_bug(repo)
    server.script(*planted_bug_answers(confirm=True))
    controller = ChatController(SessionBuilder(open_workspace(repo), cwd=repo))
    recorder = controller.session.recorder  # an open session records the review's calls
    assert recorder is not None
    try:
        events = [event async for event in controller.handle(rq.Review())]
    finally:
        await controller.aclose()
    output = [e for e in events if isinstance(e, ev.CommandOutput)]
    assert len(output) == 1 and output[0].command == "review"
    assert "1 finding (1 high)" in output[0].title
    assert "`calc.py:3` average divides by len - 1" in output[0].text
    assert {"review", "review_check"} <= set(controller.status.per_purpose)
    lines = (recorder.directory / "scratchpad.jsonl").read_text().splitlines()
    purposes = [record.get("purpose") for record in map(json.loads, lines) if record.get("type") == "usage"]
    assert purposes.count("review") == 2 and purposes.count("review_check") == 2


async def test_review_outside_a_repository_is_a_warning(tmp_path: Path) -> None:
    controller = ChatController(SessionBuilder(open_workspace(tmp_path), cwd=tmp_path))
    events = [event async for event in controller.handle(rq.Review("base", "main"))]
    await controller.aclose()
    assert [type(e) for e in events] == [ev.Notice]
    assert isinstance(events[0], ev.Notice) and "is not in a git repository" in events[0].message


def test_headless_run_of_review_prints_the_findings(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    plant_bug(repo)
    server.script(*planted_bug_answers(confirm=True))
    assert main(["run", "--cwd", str(repo), "--output-format", "json", "/review"]) == 0
    report = json.loads(capsys.readouterr().out)
    shown = [e for e in report["events"] if e["type"] == "command_output"]
    assert "average divides by len - 1" in shown[0]["text"]
    assert any(e["type"] == "usage" and e["purpose"] == "review" for e in report["events"])


async def test_an_interrupt_stops_the_review(repo: Path, server: FakeServer) -> None:
    import asyncio

    from tests.runtime.review.support import REVIEWER_MARK
    from tests.waiting import eventually

    plant_bug(repo)
    server.script({"when": REVIEWER_MARK, "text": "Looking", "stall": 90})
    controller = ChatController(SessionBuilder(open_workspace(repo), cwd=repo))
    events: list[ev.RuntimeEvent] = []

    async def consume() -> None:
        async for event in controller.handle(rq.Review()):
            events.append(event)

    task = asyncio.create_task(consume())
    try:
        await eventually(lambda: server.requests, what="the reviewer's request")
        controller.handle_now(rq.Interrupt())
        await asyncio.wait_for(task, 30)
    finally:
        await controller.aclose()
    assert isinstance(events[-1], ev.Notice) and "The review was interrupted" in events[-1].message
    assert not any(isinstance(e, ev.CommandOutput) for e in events)
    assert controller.interrupted
