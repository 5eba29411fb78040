"""The wire check itself: it accepts what the ACP schema allows and rejects, with a
specific reason, each way a message can be wrong."""

from __future__ import annotations

from typing import Any

import pytest
from acp.connection import StreamDirection, StreamEvent

from tests.acp.wire_check import WireCheck

SID = "20261201-000000-0001"


def update(**fields: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID, "update": fields}}


GOOD = [
    update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": "hi"}),
    update(sessionUpdate="tool_call_update", toolCallId="c1", status="completed", rawOutput={"output": "x"}),
    update(sessionUpdate="usage_update", used=10, size=200_000),
    update(sessionUpdate="current_mode_update", currentModeId="plan"),
]
BAD = [
    (update(sessionUpdate="tool_call_update", toolCallId="c1", rawOutput="x"), "rawOutput is str"),
    (update(sessionUpdate="tool_call", toolCallId="c1", title="t", rawInput=["a"]), "rawInput is list"),
    (update(sessionUpdate="agent_message_chunk"), "SessionNotification"),
    (update(sessionUpdate="no_such_update"), "SessionNotification"),
    (update(sessionUpdate="usage_update", used=-1, size=10), "SessionNotification"),
    (update(sessionUpdate="tool_call_update", toolCallId="c1", status="done"), "SessionNotification"),
    ({"jsonrpc": "2.0", "method": "session/bogus", "params": {}}, "does not define"),
    ({**update(sessionUpdate="current_mode_update", currentModeId="x"), "jsonrpc": "1.0"}, "JSON-RPC 2.0"),
]


@pytest.mark.parametrize("message", GOOD)
def test_it_accepts_messages_the_schema_allows(message: dict[str, Any]) -> None:
    assert WireCheck().check(message) == []


@pytest.mark.parametrize(("message", "reason"), BAD)
def test_it_rejects_each_wrong_form_with_a_reason(message: dict[str, Any], reason: str) -> None:
    found = WireCheck().check(message)
    assert found and any(reason in problem for problem in found), found


def test_responses_are_checked_against_the_request_they_answer() -> None:
    wire = WireCheck()
    wire(StreamEvent(StreamDirection.OUTGOING, {"jsonrpc": "2.0", "id": 3, "method": "session/prompt"}))
    wire(StreamEvent(StreamDirection.INCOMING, {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "ok"}}))
    wire(StreamEvent(StreamDirection.INCOMING, {"jsonrpc": "2.0", "id": 9, "result": {}}))
    assert len(wire.found) == 2
    assert "PromptResponse" in wire.found[0] and "no request" in wire.found[1]
    with pytest.raises(AssertionError, match="schema rejects"):
        wire.assert_clean()
