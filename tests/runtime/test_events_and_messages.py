"""Events and messages are plain JSON and round-trip losslessly."""

from __future__ import annotations

import dataclasses
import json
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message, TextPart, ThinkingPart, ToolCallPart
from wyckoff_cli.core.usage import Usage
from wyckoff_cli.providers.anthropic import anthropic_usage
from wyckoff_cli.providers.base import TextChunk, ThinkingChunk, ToolCallChunk
from wyckoff_cli.providers.openai_compat import openai_usage
from wyckoff_cli.runtime.assembly import ArgumentsError, ResponseAssembler, parse_arguments

SAMPLES: dict[type, dict[str, typing.Any]] = {
    ev.ModelStart: {"round": 2, "model": "anthropic:claude"},
    ev.TextDelta: {"text": "hi"},
    ev.ThinkingDelta: {"text": "hm"},
    ev.ThinkingDone: {"text": "hm", "duration_ms": 12},
    ev.ToolCallsReceived: {"calls": [{"id": "1", "name": "read_file", "args": {"path": "a"}}]},
    ev.ApprovalRequested: {
        "id": "1",
        "name": "run_shell",
        "args": {"command": "ls"},
        "preview": {"kind": "command"},
        "rule": "run_shell(ls)",
    },
    ev.ApprovalDecided: {"id": "1", "name": "run_shell", "decision": "deny", "rule": None, "feedback": "no"},
    ev.ToolStarted: {"id": "1", "name": "x", "args": {}, "background": True},
    ev.ToolOutput: {"id": "1", "text": "out"},
    ev.ToolSucceeded: {
        "id": "1",
        "name": "x",
        "result": "r",
        "elapsed_ms": 3,
        "offloaded_path": "/p",
        "display": {"diff": "-a"},
        "images": ["shot.png 1280\u00d7720"],
    },
    ev.ToolFailed: {"id": "1", "name": "x", "error": "e", "elapsed_ms": 1},
    ev.BackgroundTaskUpdate: {
        "task_id": "bg-1",
        "status": "completed",
        "name": "run_shell",
        "summary": "make",
        "exit_code": 0,
    },
    ev.Compacted: {
        "before_messages": 40,
        "after_messages": 8,
        "before_tokens": 90000,
        "after_tokens": 9000,
        "method": "summary",
        "archive_path": "/a",
    },
    ev.RetryInjected: {"attempt": 1, "missing_tools": ["read_file"], "message": "m"},
    ev.UsageReported: {
        "model": "m",
        "input_tokens": 1,
        "output_tokens": 2,
        "cache_read_tokens": 3,
        "cache_write_tokens": 4,
        "reasoning_tokens": 5,
        "purpose": "compaction",
        "resent": [{"call_id": "c1", "tool": "grep", "tokens": 40}],
    },
    ev.BudgetWarning: {"scope": "day", "percent": 80, "limit_usd": 5.0, "spent_usd": 4.1},
    ev.FallbackSwitched: {"from_model": "a:b", "to_model": "c:d", "error": "429", "discarded_text": "par"},
    ev.Retrying: {
        "model": "a:b",
        "attempt": 2,
        "attempts": 3,
        "delay": 1.5,
        "error": "429",
        "discarded_text": "par",
    },
    ev.ServerToolUsed: {
        "name": "web_search",
        "summary": "searched the web: q",
        "provider": "anthropic",
        "sources": [{"url": "https://example.com", "title": "Example"}],
    },
    ev.Notice: {"level": "warning", "message": "careful"},
    ev.HookRan: {
        "hook_event": "PreToolUse",
        "command": "./check.sh",
        "outcome": "blocked",
        "elapsed_ms": 12,
        "exit_code": 2,
        "message": "no rm",
        "source": ".claude/settings.json",
        "call_id": "c1",
    },
    ev.MessageCommitted: {"message": {"role": "user", "parts": [{"type": "text", "text": "x"}]}},
    ev.TurnDone: {
        "text": "t",
        "reason": "completed",
        "rounds": 1,
        "usage": {"input_tokens": 1},
        "stop_reason": "end_turn",
        "cost_usd": 0.25,
    },
    ev.TurnFailed: {"kind": "auth", "message": "bad key", "retryable": False},
    ev.CommandOutput: {
        "command": "cost",
        "title": "This session",
        "text": "",
        "columns": ["model", "calls"],
        "rows": [["anthropic:claude", "2"]],
    },
    ev.ConfirmRequested: {"command": "undo", "title": "Undo", "text": "Restore to checkpoint 1a2b3c4d"},
    ev.Rewound: {"messages_removed": 2, "input_text": "write b"},
    ev.SessionChanged: {"session_id": "20261201-abc", "resumed": True, "messages": 4},
    ev.ModelChanged: {"model": "openai:gpt-5", "context_window": 400_000},
    ev.ModeChanged: {"mode": "plan"},
    ev.Preparing: {"what": "starting MCP server docs…"},
    ev.SubagentEvent: {
        "agent_id": "explore-1a2b3c4d",
        "agent": "explore",
        "parent_call_id": "call_1",
        "event": ev.ToolStarted("c1", "grep", {"pattern": "x"}),
    },
}


def test_every_event_type_has_a_sample() -> None:
    assert set(SAMPLES) == set(ev.EVENT_TYPES.values())
    assert set(typing.get_args(ev.RuntimeEvent)) == set(ev.EVENT_TYPES.values())


@pytest.mark.parametrize("cls", list(SAMPLES), ids=lambda c: c.type)
def test_event_round_trip_through_json(cls: type) -> None:
    event = cls(**SAMPLES[cls])
    data = json.loads(json.dumps(event.to_dict()))
    assert data["type"] == cls.type
    # every field is serialized but the in-process handles (an approval's responder)
    wire = {f.name for f in dataclasses.fields(cls) if f.metadata.get("wire", True)}
    assert set(data) == {"type"} | wire
    assert ev.event_from_dict(data) == event


def test_unknown_event_type_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown event type"):
        ev.event_from_dict({"type": "nope"})


def test_events_are_frozen() -> None:
    event = ev.TextDelta("x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.text = "y"  # type: ignore[misc]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
parts = st.one_of(
    st.builds(TextPart, st.text()),
    st.builds(
        ThinkingPart, st.text(), st.none() | st.text(min_size=1), st.none() | st.sampled_from(["anthropic"])
    ),
    st.builds(
        ToolCallPart,
        st.text(min_size=1),
        st.text(min_size=1),
        st.dictionaries(st.text(max_size=8), json_values, max_size=3),
        st.none() | st.text(),
        st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=2),
    ),
)


@given(st.sampled_from(["user", "assistant", "tool"]), st.lists(parts, max_size=4), st.booleans())
def test_message_round_trip(role: str, message_parts: list[typing.Any], is_error: bool) -> None:
    message = Message(role, tuple(message_parts), "call_1" if role == "tool" else None, None, is_error)  # type: ignore[arg-type]
    assert Message.from_dict(json.loads(json.dumps(message.to_dict()))) == message


@given(st.dictionaries(st.text(), json_values))
def test_parse_arguments_accepts_any_json_object(args: dict[str, typing.Any]) -> None:
    assert parse_arguments(json.dumps(args)) == args


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", {}),
        ("  ", {}),
        ('{"a": 1,}', {"a": 1}),
        ('{"a": {"b": 2}', {"a": {"b": 2}}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('"{\\"a\\": 1}"', {"a": 1}),
    ],
)
def test_parse_arguments_is_lenient(raw: str, expected: dict[str, typing.Any]) -> None:
    assert parse_arguments(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"), [("[1, 2]", "must be a JSON object"), ("{a: 1}", "not valid JSON")]
)
def test_parse_arguments_errors_are_precise(raw: str, message: str) -> None:
    with pytest.raises(ArgumentsError, match=message):
        parse_arguments(raw)


def test_assembler_keeps_arrival_order_and_interleaved_fragments() -> None:
    assembler = ResponseAssembler(provider="anthropic")
    for chunk in [
        ThinkingChunk("think "),
        ThinkingChunk("more"),
        ThinkingChunk(signature="sig"),
        TextChunk("Let me "),
        TextChunk("look."),
        ToolCallChunk(0, "a", "read_file", '{"pa'),
        ToolCallChunk(1, "b", "grep", '{"pattern"'),
        ToolCallChunk(0, arguments='th": "x"}'),
        ToolCallChunk(1, arguments=': "y"}'),
        TextChunk("After."),
    ]:
        assembler.add(chunk)
    result = assembler.parts()
    assert result == [
        ThinkingPart("think more", "sig", "anthropic"),
        TextPart("Let me look."),
        ToolCallPart("a", "read_file", {"path": "x"}),
        ToolCallPart("b", "grep", {"pattern": "y"}),
        TextPart("After."),
    ]


def test_usage_conventions() -> None:
    anthropic = anthropic_usage(
        input_tokens=25, output_tokens=87, cache_read_input_tokens=3400, cache_creation_input_tokens=1200
    )
    assert (anthropic.input_tokens, anthropic.uncached_input_tokens) == (4625, 25)
    openai = openai_usage(prompt_tokens=1000, completion_tokens=50, cached_tokens=800, reasoning_tokens=10)
    assert (openai.input_tokens, openai.uncached_input_tokens, openai.reasoning_tokens) == (1000, 200, 10)
    assert (anthropic + openai).input_tokens == 5625
    assert Usage.from_dict(anthropic.to_dict()) == anthropic


def test_message_ids_are_stable_saved_and_ignored_by_equality() -> None:
    first, second = Message.user("same"), Message.user("same")
    assert first.id != second.id and first == second
    assert Message.from_dict(first.to_dict()).id == first.id
    assert dataclasses.replace(first, meta={"k": 1}).id == first.id
    legacy = first.to_dict()
    del legacy["id"]  # logs written before ids existed still load, each with a fresh id
    assert Message.from_dict(legacy).id
