"""The context manager driven by the runtime: recall, compaction mid-turn, /compact,
calibration and the `remember` tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.runtime.support import assert_history_valid, collect, make_runtime, make_tool, of_type
from wyckoff_cli.context.instructions import load_project_instructions
from wyckoff_cli.context.manager import ContextManager
from wyckoff_cli.context.memory import MemoryStore
from wyckoff_cli.context.prompt import Environment, SystemPromptBuilder
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.conversation import Conversation
from wyckoff_cli.core.messages import Message
from wyckoff_cli.runtime.loop import RuntimeSettings

SUMMARY = "## Goals\nShip the feature.\n\n## Open\nWrite the docs."


def builder(workspace: Path, tools: tuple[str, ...] = ("read_file",)) -> SystemPromptBuilder:
    return SystemPromptBuilder(
        Environment.detect(workspace), tools, load_project_instructions(workspace), base="BASE"
    )


def reader() -> Any:
    return make_tool("read_file", concurrency_safe=True)


async def test_recalled_memories_are_stored_as_sent_and_not_repeated(workspace: Path, tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    fact = store.add("The staging database resets every Monday morning", scope="project", project=workspace)
    store.add("Unrelated: the office plant needs water", scope="user")
    manager = ContextManager(context_window=200_000, memory=store, project_root=workspace)
    runtime, provider = make_runtime([{"text": "ok"}, {"text": "ok again"}], [], workspace, context=manager)
    history = Conversation()
    events, _ = await collect(runtime, "why is the staging database empty?", history)
    sent = history[0]
    assert sent.parts[0].text.startswith("<relevant-memories>")
    assert "resets every Monday" in sent.parts[0].text and "office plant" not in sent.parts[0].text
    assert sent.parts[-1].text == "why is the staging database empty?"
    assert sent.meta["memory_ids"] == [fact.memory.id]
    assert provider.requests[0].messages[0] == sent
    committed = of_type(events, ev.MessageCommitted)[0]
    assert Message.from_dict(committed.message) == sent  # persisted exactly as sent

    await collect(runtime, "is the staging database back?", history)
    assert history[2].parts[0].text == "is the staging database back?"  # already shown: not repeated
    assert provider.requests[1].messages[0] == sent  # the earlier block stays: same prefix


async def test_no_memories_means_an_unchanged_message(workspace: Path, tmp_path: Path) -> None:
    manager = ContextManager(
        context_window=200_000, memory=MemoryStore(tmp_path / "m.db"), project_root=workspace
    )
    runtime, _ = make_runtime([{"text": "ok"}], [], workspace, context=manager)
    _, history = await collect(runtime, "hello there")
    assert history[0] == Message.user("hello there")


async def test_compaction_mid_turn_emits_the_event_and_reloads_instructions(workspace: Path) -> None:
    (workspace / "AGENTS.md").write_text("Old rule.", encoding="utf-8")
    manager = ContextManager(
        context_window=9_000,
        max_output=1_000,
        prompt=builder(workspace),
        reload_instructions=lambda: load_project_instructions(workspace),
    )
    big = "data " * 3_000  # three results pass the threshold (7,650 tokens), two do not
    rounds: list[Any] = [
        {"tool_calls": [{"name": "read_file", "args": {"path": f"f{i}.py"}}], "usage": {"input_tokens": 0}}
        for i in range(4)
    ]
    rounds.insert(3, {"text": SUMMARY})  # the summary call comes between model rounds
    rounds.append({"text": "All read."})

    async def read(args: dict[str, Any], ctx: Any) -> str:
        return big

    runtime, provider = make_runtime(
        rounds,
        [make_tool("read_file", read)],
        workspace,
        context=manager,
        settings=RuntimeSettings(offload_threshold=100_000),
    )
    system_prompt = manager.system_prompt
    (workspace / "AGENTS.md").write_text("New rule.", encoding="utf-8")
    events, history = await collect(runtime, "read four files", system_prompt=system_prompt)
    compactions = of_type(events, ev.Compacted)
    assert len(compactions) == 1 and compactions[0].method == "summary"
    side = events[events.index(compactions[0]) + 1]  # the summary call is reported and paid for
    assert isinstance(side, ev.UsageReported) and (side.input_tokens, side.output_tokens) == (100, 20)
    assert of_type(events, ev.TurnDone)[0].usage["input_tokens"] == sum(
        u.input_tokens for u in of_type(events, ev.UsageReported)
    )
    types = [e.type for e in events]
    assert types.index("compaction") < len(types) - types[::-1].index("model_start") - 1
    assert of_type(events, ev.TurnDone)[0].reason == "completed"
    assert_history_valid(history)
    assert history[0].meta["synthetic"] == "compaction"
    assert any(m.text == "read four files" for m in history)  # the request, verbatim
    model_requests = [r for r in provider.requests if r.tools]
    assert "Old rule." in model_requests[0].system_prompt
    assert "New rule." in model_requests[-1].system_prompt  # re-read after the compaction
    assert "New rule." in manager.system_prompt


async def test_manual_compact_with_focus(workspace: Path) -> None:
    manager = ContextManager(context_window=200_000, prompt=builder(workspace))
    rounds = [{"text": f"answer {i}"} for i in range(3)] + [{"text": SUMMARY}]
    runtime, provider = make_runtime(rounds, [], workspace, context=manager)
    history = Conversation()
    for i in range(3):
        await collect(runtime, f"question {i}", history, system_prompt=manager.system_prompt)
    event = await runtime.compact(history, manager.system_prompt, "the database schema")
    assert event is not None and event.method == "summary"
    assert "focus on: the database schema" in provider.requests[-1].messages[0].text
    assert provider.requests[-1].tools == ()
    assert [m.role for m in history] == ["user", "user", "assistant"]
    assert history[1].text == "question 2" and history[2].text == "answer 2"
    side = runtime.side_usage()
    assert side is not None and (side.input_tokens, side.output_tokens) == (100, 20)
    assert runtime.side_usage() is None  # reported once


async def test_manual_compact_of_a_single_exchange_does_nothing(workspace: Path) -> None:
    manager = ContextManager(context_window=200_000)
    runtime, provider = make_runtime([{"text": "hi"}], [], workspace, context=manager)
    _, history = await collect(runtime, "hello")
    history.pop()  # just the user message
    assert await runtime.compact(history, "") is None
    assert len(provider.requests) == 1


async def test_reported_input_tokens_calibrate_the_estimate(workspace: Path) -> None:
    manager = ContextManager(context_window=200_000)
    history = [Message.user("word " * 5_000)]
    raw = manager.estimator.estimate_request("", [], history)
    runtime, _ = make_runtime(
        [{"text": "ok", "usage": {"input_tokens": raw * 2}}], [], workspace, context=manager
    )
    await collect(runtime, "go on", history)
    assert manager.estimator.ratio > 1.4
    assert manager.estimator.estimate_request("", [], history) > 1.4 * raw


async def test_the_model_can_remember_without_approval(workspace: Path, tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    manager = ContextManager(
        context_window=200_000, memory=store, project_root=workspace, session_id=lambda: "s9"
    )
    rounds = [
        {"tool_calls": [{"name": "remember", "args": {"text": "Run tests with make check", "kind": "fact"}}]},
        {"tool_calls": [{"name": "remember", "args": {"text": "Run tests with make check."}}]},
        {"text": "Noted."},
    ]
    runtime, _ = make_runtime(rounds, manager.tools(), workspace, context=manager)
    events, history = await collect(runtime, "remember how to run tests")
    results = of_type(events, ev.ToolSucceeded)
    assert results[0].result.startswith("Saved memory #1 (project, fact)")
    assert results[0].display == {
        "memory": {
            "id": 1,
            "text": "Run tests with make check",
            "kind": "fact",
            "scope": "project",
            "created": True,
        }
    }
    assert results[1].result.startswith("Already remembered as #1")
    assert not of_type(events, ev.ApprovalRequested)
    (memory,) = store.list_memories(project=workspace)
    assert memory.source_session == "s9"


async def test_remember_rejects_bad_arguments(workspace: Path, tmp_path: Path) -> None:
    manager = ContextManager(
        context_window=200_000, memory=MemoryStore(tmp_path / "m.db"), project_root=workspace
    )
    rounds = [
        {"tool_calls": [{"name": "remember", "args": {"text": "x", "scope": "galaxy"}}]},
        {"tool_calls": [{"name": "remember", "args": {"text": "y" * 1_500}}]},
        {"text": "ok"},
    ]
    runtime, _ = make_runtime(rounds, manager.tools(), workspace, context=manager)
    events, _ = await collect(runtime, "remember things")
    errors = [e.error for e in of_type(events, ev.ToolFailed)]
    assert len(errors) == 2
    assert "scope" in errors[0] and "1000 characters" in errors[1]
