"""Sub-agents through the real builder: the `task` tool, its children, their events,
approvals, cancellation, the budget and the costs (scripted providers)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.session.subagent_support import allow_all, build, child_events, make_builder, run, task_call
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.abort import AbortSignal
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.session.status import StatusModel

PARENT = "scripted:parent"
CHILD = "scripted:child"
USAGE = {"input_tokens": 1000, "output_tokens": 100}


def providers(parent: list[Any], child: list[Any]) -> tuple[dict[str, ScriptedProvider], Any]:
    made = {PARENT: ScriptedProvider(parent, model=PARENT), CHILD: ScriptedProvider(child, model=CHILD)}
    return made, lambda model: made[model]


def agent_file(folder: Path, name: str, front: str, body: str = "You are a helper.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\n{front}\n---\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("def main():\n    return 42\n", encoding="utf-8")
    agent_file(
        workspace / ".wyckoff" / "agents",
        "finder",
        f"name: finder\ndescription: Finds things.\ntools: [read_file, grep]\nmodel: {CHILD}",
        "You find things.",
    )
    return workspace


async def test_a_child_runs_end_to_end_with_its_own_context_and_tools(project: Path) -> None:
    made, factory = providers(
        [
            {"tool_calls": [task_call("finder", "Where is main defined?", call_id="call_1")], "usage": USAGE},
            {"text": "In src/app.py."},
        ],
        [
            {"tool_calls": [{"name": "grep", "args": {"pattern": "def main"}}], "usage": USAGE},
            {"text": "main is at src/app.py:1", "usage": USAGE},
        ],
    )
    session = build(make_builder(project, factory), PARENT)
    events = await run(session, "find main")
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "completed"
    # the child's own conversation: its system prompt and the task prompt only
    first = made[CHILD].requests[0]
    assert "You find things." in first.system_prompt and "SYSTEM" not in first.system_prompt
    assert [m.text for m in first.messages] == ["Where is main defined?"]
    assert [t.name for t in first.tools] == ["read_file", "grep"]
    # its events on the parent's stream, wrapped
    wrapped = [e for e in events if isinstance(e, ev.SubagentEvent)]
    assert wrapped and {(e.agent, e.parent_call_id) for e in wrapped} == {("finder", "call_1")}
    assert wrapped[0].agent_id.startswith("finder-")
    assert any(isinstance(e, ev.ToolSucceeded) and "src/app.py" in e.result for e in child_events(events))
    # the result: the answer and a one-line footer naming the saved transcript
    result = next(e for e in events if isinstance(e, ev.ToolSucceeded) and e.name == "task")
    answer, footer = result.result.rsplit("\n\n", 1)
    assert answer == "main is at src/app.py:1"
    assert footer.startswith(
        f"[{wrapped[0].agent_id}: completed; 2 rounds, 1 tool call, 2,200 tokens, $0.0022"
    )
    assert result.display is not None and result.display["agent"] == "finder"
    transcript = session.recorder.directory / result.display["transcript"]  # type: ignore[union-attr]
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert lines[0]["agent"] == "finder"
    assert [line["message"]["role"] for line in lines[1:]] == ["user", "assistant", "tool", "assistant"]
    # linked from the parent's chat log: the tool message names it
    chat = (session.recorder.directory / "chat.jsonl").read_text()  # type: ignore[union-attr]
    assert result.display["transcript"] in chat
    # the parent's next call saw the result, not the child's work
    assert "grep" not in json.dumps([m.to_dict() for m in made[PARENT].requests[1].messages[-1:]])
    await session.aclose()


async def test_the_task_tool_lists_agents_and_is_not_in_a_child(project: Path) -> None:
    made, factory = providers(
        [{"tool_calls": [task_call("general", "do it")]}, {"text": "ok"}],
        [],
    )
    builder = make_builder(project, factory)
    session = build(builder, PARENT)
    task = session.registry.get("task")
    assert task is not None
    assert (
        task.description.index("- explore:")
        < task.description.index("- general:")
        < task.description.index("- finder:")
    )
    made[PARENT].rounds.insert(1, {"text": "general done"})  # general inherits the parent's model
    events = await run(session, "go")
    tools = made[PARENT].requests[1].tools
    assert "task" not in [t.name for t in tools] and "read_file" in [t.name for t in tools]
    assert isinstance(events[-1], ev.TurnDone) and events[-1].reason == "completed"
    await session.aclose()


async def test_parallel_explore_tasks_run_at_once(project: Path) -> None:
    started: list[float] = []
    slow = {"text": "found", "delay": 0.2, "chunk_size": 1}
    made, factory = providers(
        [
            {
                "tool_calls": [
                    task_call("explore", "a", call_id="t1"),
                    task_call("explore", "b", call_id="t2"),
                ]
            },
            {"text": "both done"},
        ],
        [],
    )
    made[PARENT].rounds[1:1] = [dict(slow, text="x"), dict(slow, text="y")]
    session = build(make_builder(project, factory), PARENT)
    events = await run(session, "look")
    starts = [e for e in events if isinstance(e, ev.ToolStarted) and e.name == "task"]
    assert len(starts) == 2
    # both started before either finished: one group, run in parallel
    first_result = next(i for i, e in enumerate(events) if isinstance(e, ev.ToolSucceeded))
    assert all(events.index(s) < first_result for s in starts)
    # and the children really ran at the same time: their event streams overlap (run one after
    # the other, every event of the first child would come before the second child's first)
    spans: dict[str, list[int]] = {}
    for index, event in enumerate(events):
        if isinstance(event, ev.SubagentEvent):
            spans.setdefault(event.parent_call_id, []).append(index)
    assert sorted(spans) == ["t1", "t2"]
    assert spans["t2"][0] < spans["t1"][-1] and spans["t1"][0] < spans["t2"][-1]
    del started
    results = sorted(e.result.split("\n")[0] for e in events if isinstance(e, ev.ToolSucceeded))
    assert results == ["x", "y"]
    await session.aclose()


async def test_a_general_task_is_not_concurrency_safe_but_explore_is(project: Path) -> None:
    _, factory = providers([], [])
    session = build(make_builder(project, factory), PARENT)
    task = session.registry.get("task")
    assert task is not None
    assert task.concurrency_safe_for({"agent": "explore"}) is True
    assert task.concurrency_safe_for({"agent": "general"}) is False
    assert task.concurrency_safe_for({"agent": "finder"}) is True  # read_file and grep only
    await session.aclose()


async def test_a_tool_outside_the_childs_set_is_refused(project: Path) -> None:
    made, factory = providers(
        [{"tool_calls": [task_call("explore", "write a file")]}],
        [],
    )
    made[PARENT].rounds += [
        {"tool_calls": [{"name": "write_file", "args": {"path": "x.txt", "content": "hi"}}]},
        {"text": "I could not write it."},
        {"text": "done"},
    ]
    session = build(make_builder(project, factory), "scripted:parent", mode="yolo")
    events = await run(session, "go", allow_all)
    failed = child_events(events, ev.ToolFailed)
    assert len(failed) == 1 and "Unknown tool 'write_file'" in failed[0].error
    assert "read_file" in failed[0].error and not (project / "x.txt").exists()
    await session.aclose()


async def test_a_scoped_tool_rule_refuses_other_calls(project: Path) -> None:
    agent_file(
        project / ".wyckoff" / "agents",
        "tester",
        f"name: tester\ndescription: Runs the tests.\ntools: read_file, run_shell(pytest *)\nmodel: {CHILD}",
    )
    made, factory = providers(
        [{"tool_calls": [task_call("tester", "run it")]}, {"text": "done"}],
        [{"tool_calls": [{"name": "run_shell", "args": {"command": "rm -rf src"}}]}, {"text": "refused"}],
    )
    session = build(make_builder(project, factory), PARENT, mode="yolo")
    events = await run(session, "go", allow_all)
    decided = child_events(events, ev.ApprovalDecided)
    assert decided and decided[0].decision == "auto_deny"
    assert "only as run_shell(pytest *)" in (decided[0].feedback or "")
    assert (project / "src" / "app.py").exists()
    await session.aclose()


async def test_a_childs_approval_is_answered_by_the_parents_host(project: Path) -> None:
    agent_file(
        project / ".wyckoff" / "agents",
        "writer",
        f"name: writer\ndescription: Writes files.\ntools: write_file\nmodel: {CHILD}",
    )
    made, factory = providers(
        [{"tool_calls": [task_call("writer", "write notes")]}, {"text": "done"}],
        [
            {"tool_calls": [{"name": "write_file", "args": {"path": "notes.txt", "content": "hi"}}]},
            {"text": "ok"},
        ],
    )
    asked: list[ev.ApprovalRequested] = []

    async def host(request: ev.ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.allow()

    session = build(make_builder(project, factory), PARENT)
    events = await run(session, "go", host)
    assert [r.name for r in asked] == ["write_file"]
    wrapper = next(
        e for e in events if isinstance(e, ev.SubagentEvent) and isinstance(e.event, ev.ApprovalRequested)
    )
    assert wrapper.agent == "writer" and ev.approval_of(wrapper) is asked[0]
    assert (project / "notes.txt").read_text() == "hi"
    # a denial reaches the child the same way
    (project / "notes.txt").unlink()
    made[PARENT].rounds += [{"tool_calls": [task_call("writer", "again")]}, {"text": "done"}]
    made[CHILD].rounds += [
        {"tool_calls": [{"name": "write_file", "args": {"path": "notes.txt", "content": "no"}}]},
        {"text": "denied"},
    ]

    async def deny(request: ev.ApprovalRequested) -> ApprovalDecision:
        return ApprovalDecision.deny("not now")

    events = await run(session, "again", deny)
    assert not (project / "notes.txt").exists()
    assert any("not now" in e.error for e in child_events(events, ev.ToolFailed))
    await session.aclose()


async def test_a_child_never_gets_a_wider_mode_than_the_parent(project: Path) -> None:
    agent_file(
        project / ".wyckoff" / "agents",
        "wild",
        f"name: wild\ndescription: Anything.\ntools: write_file\nmodel: {CHILD}\npermissionMode: bypassPermissions",
    )
    made, factory = providers(
        [{"tool_calls": [task_call("wild", "write")]}, {"text": "done"}],
        [{"tool_calls": [{"name": "write_file", "args": {"path": "w.txt", "content": "x"}}]}, {"text": "ok"}],
    )
    session = build(make_builder(project, factory), PARENT, mode="plan")
    events = await run(session, "go", allow_all)
    assert not (project / "w.txt").exists()
    assert any(d.decision == "auto_deny" for d in child_events(events, ev.ApprovalDecided))
    await session.aclose()


async def test_esc_cancels_two_running_children(project: Path) -> None:
    hang = {"text": "working " * 50, "delay": 0.05, "chunk_size": 4}
    made, factory = providers(
        [
            {
                "tool_calls": [
                    task_call("explore", "a", call_id="t1"),
                    task_call("explore", "b", call_id="t2"),
                ]
            },
            hang,
            hang,
        ],
        [],
    )
    session = build(make_builder(project, factory), PARENT)
    abort = AbortSignal()
    seen: list[ev.RuntimeEvent] = []

    async def consume() -> None:
        stream = session.runtime.run_stream(session.conversation, "go", system_prompt="S", abort=abort)
        async for event in stream:
            seen.append(event)
            deltas = {
                e.agent_id
                for e in seen
                if isinstance(e, ev.SubagentEvent) and isinstance(e.event, ev.TextDelta)
            }
            if len(deltas) == 2 and not abort.aborted:
                abort.abort()

    await asyncio.wait_for(consume(), 10)
    done = seen[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "aborted"
    failed = [e for e in seen if isinstance(e, ev.ToolFailed) and e.name == "task"]
    assert sorted(e.id for e in failed) == ["t1", "t2"]
    assert made[PARENT].closed_streams >= 2  # both children's model streams were closed
    assert len(made[PARENT].requests) == 3  # no call after the abort
    history = list(session.conversation)
    assert [m.role for m in history] == ["user", "assistant", "tool", "tool"]
    await session.aclose()


async def test_the_budget_stops_the_whole_session_children_included(project: Path) -> None:
    big = {"input_tokens": 600_000, "output_tokens": 0}
    made, factory = providers(
        [{"tool_calls": [task_call("finder", "spend")], "usage": big}, {"text": "never"}],
        [
            {"tool_calls": [{"name": "grep", "args": {"pattern": "x"}}], "usage": big},
            {"text": "never either"},
        ],
    )
    session = build(make_builder(project, factory, budget=1.0), PARENT)
    events = await run(session, "go")
    # the child stopped before its second call, then the parent before its second
    assert len(made[CHILD].requests) == 1 and len(made[PARENT].requests) == 1
    child_done = child_events(events, ev.TurnDone)
    assert child_done[0].reason == "budget"
    notices = [e for e in events if isinstance(e, ev.Notice)]
    assert notices and "budget of $1.00 was reached ($1.2000 spent)" in notices[-1].message
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "budget"
    assert events[-2] == notices[-1]
    await session.aclose()


async def test_cost_is_attributed_per_agent_and_totalled(project: Path) -> None:
    made, factory = providers(
        [{"tool_calls": [task_call("finder", "x")], "usage": USAGE}, {"text": "ok", "usage": USAGE}],
        [{"text": "found", "usage": {"input_tokens": 3000, "output_tokens": 0}}],
    )
    session = build(make_builder(project, factory), PARENT)
    events = await run(session, "go")
    status = StatusModel(PARENT, price=lambda model, u: ((u.input_tokens + u.output_tokens) / 1e6, 0.0))
    for event in events:
        status.observe(event)
    assert status.per_agent["finder"].input_tokens == 3000
    assert status.per_agent["finder"].cost == pytest.approx(0.003)
    assert status.cost == pytest.approx(0.003 + 0.0022)
    assert status.main_cost() == pytest.approx(0.0022)
    assert status.input_tokens == 5000
    names = [name for name, _ in status.segments()]
    assert names[5:8] == ["cache", "cost", "agents"]  # the share beside the total
    assert dict(status.segments())["agents"] == "main $0.0022 · finder $0.0030"
    session.recorder.flush()  # type: ignore[union-attr]
    info = json.loads((session.recorder.directory / "session.json").read_text())  # type: ignore[union-attr]
    assert json.dumps(info).count("scripted:child") >= 1  # the session's saved totals include the child
    await session.aclose()


async def test_a_claude_code_agent_file_works(project: Path) -> None:
    agent_file(
        project / ".claude" / "agents",
        "code-reviewer",
        "name: code-reviewer\n"
        "description: Expert code review specialist. Use immediately after writing code.\n"
        "tools: Read, Grep, Glob\n"
        "model: sonnet\n"
        "color: blue",
        "You are a senior code reviewer.",
    )
    made, factory = providers(
        [{"tool_calls": [task_call("code-reviewer", "review src")]}, {"text": "LGTM"}, {"text": "done"}],
        [],
    )
    builder = make_builder(project, factory)
    agent = builder.agents().get("code-reviewer")
    assert agent is not None
    assert agent.tools == ("read_file", "grep", "glob") and agent.model == "inherit"
    assert agent.source.endswith(".claude/agents/code-reviewer.md")
    session = build(builder, PARENT)
    events = await run(session, "review")
    assert [t.name for t in made[PARENT].requests[1].tools] == ["read_file", "grep", "glob"]
    assert "You are a senior code reviewer." in made[PARENT].requests[1].system_prompt
    assert isinstance(events[-1], ev.TurnDone) and events[-1].reason == "completed"
    await session.aclose()


def test_bad_front_matter_is_reported_once_with_file_and_line(project: Path) -> None:
    bad = agent_file(
        project / ".wyckoff" / "agents", "broken", "name: broken\ndescription: x\nmax_rounds: lots"
    )
    _, factory = providers([], [])
    builder = make_builder(project, factory)
    catalog = builder.agents()
    assert "broken" not in catalog.names() and "finder" in catalog.names()
    assert catalog.problems == [
        f"{bad}, line 4: `max_rounds` must be 1 to 10000, not 'lots'; the agent was skipped"
    ]
    assert builder.agents() is catalog  # read once
    build(builder, PARENT)
    assert len(builder.agents().problems) == 1


def test_stream_json_shows_wrapped_events() -> None:
    inner = ev.ToolStarted("c1", "grep", {"pattern": "x"})
    wrapped = ev.SubagentEvent("explore-1", "explore", "call_1", inner)
    data = wrapped.to_dict()
    assert data == {
        "type": "subagent",
        "agent_id": "explore-1",
        "agent": "explore",
        "parent_call_id": "call_1",
        "event": {
            "type": "tool_start",
            "id": "c1",
            "name": "grep",
            "args": {"pattern": "x"},
            "background": False,
        },
    }
    assert ev.event_from_dict(json.loads(json.dumps(data))) == wrapped


async def test_a_task_that_may_change_files_is_checkpointed_first(project: Path) -> None:
    from wyckoff_cli.core.messages import ToolCallPart
    from wyckoff_cli.runtime.checkpoints.hooks import CheckpointHooks

    _, factory = providers([], [])
    session = build(make_builder(project, factory), PARENT)
    task = session.registry.get("task")
    hooks = CheckpointHooks(None, "s1")  # no engine: a round that would checkpoint warns once
    explore = ToolCallPart("t1", "task", {"agent": "explore", "description": "d", "prompt": "p"})
    assert await hooks.before_tool_round([explore], [task]) == ()
    general = ToolCallPart("t2", "task", {"agent": "general", "description": "d", "prompt": "p"})
    assert await hooks.before_tool_round([general], [task]) != ()
    await session.aclose()


async def test_a_child_stops_at_its_round_limit(project: Path) -> None:
    agent_file(
        project / ".wyckoff" / "agents",
        "brief",
        f"name: brief\ndescription: Short.\ntools: [grep]\nmodel: {CHILD}\nmax_rounds: 1",
    )
    grep = {"tool_calls": [{"name": "grep", "args": {"pattern": "x"}}]}
    made, factory = providers(
        [{"tool_calls": [task_call("brief", "search")]}, {"text": "done"}],
        [dict(grep), dict(grep), dict(grep)],
    )
    session = build(make_builder(project, factory), PARENT)
    events = await run(session, "go")
    assert child_events(events, ev.TurnDone)[0].reason == "max_tool_rounds"
    result = next(e for e in events if isinstance(e, ev.ToolSucceeded) and e.name == "task")
    assert "The agent stopped early: max_tool_rounds." in result.result
    assert len(made[CHILD].requests) == 2  # one tool round, then the limit
    await session.aclose()


def test_the_default_round_limit_comes_from_the_config(project: Path) -> None:
    from tests.session.subagent_support import flat_cost
    from wyckoff_cli.session.subagents import SessionChildFactory

    (project / ".wyckoff" / "config.toml").write_text("[agents]\nmax_rounds = 3\n", encoding="utf-8")
    _, factory = providers([], [])
    builder = make_builder(project, factory)
    session = build(builder, PARENT, mode="auto-edit")
    children = SessionChildFactory(builder, session, None, flat_cost)
    explore, finder = builder.agents().get("explore"), builder.agents().get("finder")
    assert explore is not None and finder is not None
    child = children.child(explore)
    assert child.runtime.settings.max_tool_rounds == 3
    assert child.runtime.policy.mode == "auto-edit" and child.model == PARENT
    assert children.child(finder).model == CHILD


async def test_user_hooks_hold_for_a_childs_calls(project: Path, isolated_environment: Path) -> None:
    config = isolated_environment / "config" / "config.toml"  # the user's file: its hooks run untrusted-free
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        '[[hooks.PreToolUse]]\nmatcher = "grep"\n'
        'hooks = [{ type = "command", command = "echo no grep for agents >&2; exit 2" }]\n',
        encoding="utf-8",
    )
    made, factory = providers(
        [{"tool_calls": [task_call("finder", "search")]}, {"text": "done"}],
        [{"tool_calls": [{"name": "grep", "args": {"pattern": "main"}}]}, {"text": "blocked"}],
    )
    session = build(make_builder(project, factory), PARENT)
    events = await run(session, "go")
    failed = child_events(events, ev.ToolFailed)
    assert failed and "no grep for agents" in failed[0].error
    await session.aclose()


async def test_a_childs_turn_end_runs_subagent_stop_and_the_parents_runs_stop(
    project: Path, tmp_path: Path
) -> None:
    from tests.runtime.hook_support import group, hook_command, inputs, write_user_hooks

    stop, stop_log = hook_command(tmp_path / "hooks", "stop")
    sub, sub_log = hook_command(tmp_path / "hooks", "subagent_stop")
    write_user_hooks({"Stop": [group(stop)], "SubagentStop": [group(sub)]})
    made, factory = providers(
        [{"tool_calls": [task_call("finder", "search")]}, {"text": "done"}],
        [{"text": "found it"}],
    )
    session = build(make_builder(project, factory), PARENT)
    await run(session, "go")
    await session.aclose()
    assert [entry["input"]["hook_event_name"] for entry in inputs(sub_log)] == ["SubagentStop"]
    assert [entry["input"]["hook_event_name"] for entry in inputs(stop_log)] == ["Stop"]
