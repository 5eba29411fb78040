"""`Agent` as a host of the controller: approvals with and without `on_approval`, the
arguments that shape the session, typed events, errors before any request (issue 32)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import wyckoff_cli
from wyckoff_cli import Agent, ApprovalDecision
from wyckoff_cli.api import API_VERSION, ApprovalRequest, UsageError, WyckoffError, events
from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.testing.fake_server import FakeServer

MODEL = "openai:gpt-4.1"
WRITE = {"tool_calls": [{"name": "write_file", "args": {"path": "out.txt", "content": "x\n"}}]}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    with FakeServer() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        yield fake


def test_the_public_names_and_the_typed_marker() -> None:
    assert wyckoff_cli.Agent is Agent and wyckoff_cli.API_VERSION == API_VERSION == "1.0"
    assert (Path(wyckoff_cli.__file__).parent / "py.typed").exists()


def test_without_on_approval_a_call_needing_approval_is_refused(server: FakeServer, workspace: Path) -> None:
    server.script(WRITE, {"text": "I could not write it."})
    result = Agent(MODEL, workspace=workspace).run_sync("write out.txt")
    assert not (workspace / "out.txt").exists() and result.files_changed == []
    refusal = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"][0]["content"]
    assert "this run has no one to ask" in json.dumps(refusal)


@pytest.mark.parametrize("asynchronous", [False, True])
def test_on_approval_answers_plain_or_async(server: FakeServer, workspace: Path, asynchronous: bool) -> None:
    asked: list[ApprovalRequest] = []

    def plain(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.allow()

    async def later(request: ApprovalRequest) -> ApprovalDecision:
        await asyncio.sleep(0)
        return plain(request)

    server.script(WRITE, {"text": "done"})
    agent = Agent(MODEL, workspace=workspace, on_approval=later if asynchronous else plain)
    result = agent.run_sync("write out.txt")
    assert [r.name for r in asked] == ["write_file"] and result.files_changed == ["out.txt"]
    assert (workspace / "out.txt").read_text() == "x\n" and result.reason == "completed"


def test_a_denial_with_feedback_reaches_the_model(server: FakeServer, workspace: Path) -> None:
    server.script(WRITE, {"text": "ok"})
    Agent(MODEL, workspace=workspace, on_approval=lambda r: ApprovalDecision.deny("use notes.txt")).run_sync(
        "w"
    )
    assert "use notes.txt" in json.dumps(server.requests[1].body["messages"])


def test_allow_deny_tools_and_the_prompt_append_shape_the_request(
    server: FakeServer, workspace: Path
) -> None:
    server.script(WRITE, {"text": "ok"})
    agent = Agent(
        MODEL,
        workspace=workspace,
        allow=["write_file"],
        deny=["write_file(out.txt)"],
        tools=["read_file", "write_file"],
        system_prompt_append="Always answer in French.",
    )
    agent.run_sync("write")
    body = server.requests[0].body
    assert sorted(t["function"]["name"] for t in body["tools"]) == ["read_file", "write_file"]
    assert body["messages"][0]["role"] == "system" and body["messages"][0]["content"].endswith(
        "Always answer in French."
    )
    assert not (workspace / "out.txt").exists()  # deny wins over allow


def test_stream_yields_the_typed_union_ending_with_done(server: FakeServer, workspace: Path) -> None:
    server.script({"text": "hi", "usage": {"input_tokens": 4, "output_tokens": 1}})

    async def collect() -> list[events.RuntimeEvent]:
        return [e async for e in Agent(MODEL, workspace=workspace).stream("hello")]

    seen = asyncio.run(collect())
    assert isinstance(seen[-1], events.TurnDone) and seen[-1].text == "hi"
    assert any(isinstance(e, events.TextDelta) for e in seen)
    assert [e.to_dict()["type"] for e in seen][:2] == ["message", "model_start"]


@pytest.mark.parametrize(
    ("kwargs", "prompt", "error", "says"),
    [
        ({"permission_mode": "reckless"}, "x", UsageError, "unknown permission_mode 'reckless'"),
        ({"max_budget_usd": 0}, "x", UsageError, "max_budget_usd must be a positive"),
        ({}, "   ", UsageError, "the prompt is empty"),
        ({"tools": ["no_such_tool"]}, "x", UsageError, "no tool named no_such_tool"),
        ({"deny": ["run_shell(("]}, "x", ConfigError, "deny"),
        ({"model": "nosuchvendor:m"}, "x", WyckoffError, "unknown model 'nosuchvendor:m'"),
    ],
)
def test_bad_input_is_a_clear_error_before_any_request(
    server: FakeServer, workspace: Path, kwargs: dict[str, object], prompt: str, error: type, says: str
) -> None:
    model = kwargs.pop("model", MODEL)
    with pytest.raises(error) as raised:
        Agent(str(model), workspace=workspace, **kwargs).run_sync(prompt)  # type: ignore[arg-type]
    assert says in str(raised.value.message)
    assert server.requests == []
    if "tools" in kwargs:  # found once the session was open: it was closed again, not left locked
        server.script({"text": "fine"})
        from wyckoff_cli.session.store import build_session_store

        (info,) = build_session_store().list()
        assert Agent(MODEL, workspace=workspace).resume(info.id).run_sync("x").text == "fine"


def test_a_bad_output_schema_raises_before_any_request(server: FakeServer, workspace: Path) -> None:
    with pytest.raises(UsageError, match="not a valid JSON Schema"):
        Agent(MODEL, workspace=workspace).run_sync("x", output_schema={"type": 5})
    assert server.requests == []


def test_run_sync_inside_a_loop_says_to_await(workspace: Path) -> None:
    async def inside() -> None:
        Agent(MODEL, workspace=workspace).run_sync("x")

    with pytest.raises(RuntimeError, match="await agent.run"):
        asyncio.run(inside())


def test_resume_continues_the_named_session(server: FakeServer, workspace: Path) -> None:
    server.script({"text": "one"}, {"text": "two"})
    first = Agent(MODEL, workspace=workspace).run_sync("remember 7")
    assert first.session_id is not None
    Agent(MODEL, workspace=workspace).resume(first.session_id[:14]).run_sync("which?")
    texts = json.dumps(server.requests[1].body["messages"])
    assert "remember 7" in texts and "one" in texts


def test_mcp_servers_join_the_session_without_trust(server: FakeServer, workspace: Path) -> None:
    import sys

    from tests.tools.mcp.conftest import DEMO

    server.script({"text": "ok"})
    agent = Agent(
        MODEL,
        workspace=workspace,
        mcp_servers={"demo": {"command": sys.executable, "args": [str(DEMO), "stdio"]}},
    )
    assert agent.run_sync("hi").reason == "completed"
    names = [t["function"]["name"] for t in server.requests[0].body["tools"]]
    assert any(name.startswith("mcp__demo__") for name in names), names


def test_max_budget_usd_ends_the_turn_with_budget(server: FakeServer, workspace: Path) -> None:
    costly = {"input_tokens": 2_000_000, "output_tokens": 10}
    server.script({**WRITE, "usage": costly}, {"text": "never asked for"})
    result = Agent(MODEL, workspace=workspace, max_budget_usd=0.01, permission_mode="yolo").run_sync("w")
    assert result.reason == "budget" and result.cost_usd is not None and result.cost_usd > 0.01
    assert server.pending == 1


@pytest.mark.parametrize("answer", [ValueError("no thanks"), "allow"])
def test_a_failing_or_wrong_on_approval_comes_out_of_run(
    server: FakeServer, workspace: Path, answer: object, caplog: pytest.LogCaptureFixture
) -> None:
    def approve(request: ApprovalRequest) -> ApprovalDecision:
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[return-value]

    server.script(WRITE, {"text": "never"})
    agent = Agent(MODEL, workspace=workspace, on_approval=approve)
    with pytest.raises(ValueError if isinstance(answer, Exception) else TypeError):
        agent.run_sync("w")
    assert not (workspace / "out.txt").exists() and server.pending == 1  # the turn stopped
    assert not [r for r in caplog.records if r.levelname == "ERROR"]  # it ended cleanly, then raised
    server.reset()
    server.script({"text": "again"})
    assert agent.run_sync("still usable?").text == "again"  # the session was closed, not left locked
