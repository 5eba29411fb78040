"""Sub-agents in worktrees through the real builder and real git: `isolation: worktree`
(agent file and `task` argument), the parent's uncommitted state in the child's tree,
children changing files at once, the result's branch, files and stat, and the ways back:
`merge_worktree` (always asked, the diff shown; deny wins) and `/worktree merge NAME`."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.session.subagent_support import allow_all, build, make_builder, run, task_call
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime import worktrees as wt
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.commands import parse
from wyckoff_cli.session.worktree_requests import worktree_output

PARENT = "scripted:parent"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def agent_file(root: Path, name: str, model: str, isolation: bool = True) -> None:
    folder = root / ".wyckoff" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    extra = "\nisolation: worktree" if isolation else ""
    (folder / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: Fixes things.\ntools: [read_file, edit_file, write_file]\n"
        f"model: {model}{extra}\n---\nYou fix things.\n"
    )


@pytest.fixture
def project(workspace: Path) -> Path:
    git(workspace, "init", "-q", "-b", "main")
    git(workspace, "config", "user.name", "Test")
    git(workspace, "config", "user.email", "test@example.com")
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    agent_file(workspace, "fixer-a", "scripted:a")
    agent_file(workspace, "fixer-b", "scripted:b")
    agent_file(workspace, "plain", "scripted:a", isolation=False)
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "first")
    return workspace


def edit(new: str, path: str = "calc.py", old: str = "a - b") -> dict[str, Any]:
    return {"name": "edit_file", "args": {"path": path, "old": old, "new": new}}


def providers(rounds: dict[str, list[Any]]) -> tuple[dict[str, ScriptedProvider], Any]:
    made = {model: ScriptedProvider(list(script), model=model) for model, script in rounds.items()}
    return made, lambda model: made[model]


def task_results(events: list[ev.RuntimeEvent]) -> dict[str, ev.ToolSucceeded]:
    return {e.id: e for e in events if isinstance(e, ev.ToolSucceeded) and e.name == "task"}


async def test_two_children_change_the_same_file_at_once_each_in_its_worktree(project: Path) -> None:
    # the parent's uncommitted state: a changed line and an untracked file
    (project / "calc.py").write_text("def add(a, b):\n    return a - b  # parent\n")
    (project / "notes.txt").write_text("untracked\n")
    slow = {"delay": 0.05, "chunk_size": 1}
    made, factory = providers(
        {
            PARENT: [
                {
                    "tool_calls": [
                        task_call("fixer-a", "fix add", "fix add", call_id="t1"),
                        task_call("fixer-b", "fix add too", "fix add too", call_id="t2"),
                    ]
                },
                {"text": "both done"},
            ],
            "scripted:a": [
                {"tool_calls": [edit("a + b  # parent", old="a - b  # parent")]},
                dict(slow, text="fixed in a"),
            ],
            "scripted:b": [
                {"tool_calls": [edit("b + a  # parent", old="a - b  # parent")]},
                dict(slow, text="fixed in b"),
            ],
        }
    )
    session = build(make_builder(project, factory), PARENT, mode="auto-edit")
    task = session.registry.get("task")
    assert task is not None and task.concurrency_safe_for({"agent": "fixer-a"}) is True
    assert task.concurrency_safe_for({"agent": "plain"}) is False
    assert task.concurrency_safe_for({"agent": "plain", "isolation": "worktree"}) is True
    events = await run(session, "fix it twice")
    assert isinstance(events[-1], ev.TurnDone) and events[-1].reason == "completed"
    # they ran at the same time: their event streams overlap
    spans: dict[str, list[int]] = {}
    for index, event in enumerate(events):
        if isinstance(event, ev.SubagentEvent):
            spans.setdefault(event.parent_call_id, []).append(index)
    assert spans["t2"][0] < spans["t1"][-1] and spans["t1"][0] < spans["t2"][-1]
    # the parent's files are untouched
    assert (project / "calc.py").read_text().endswith("a - b  # parent\n")
    results = task_results(events)
    for call_id, expected in (("t1", "a + b  # parent"), ("t2", "b + a  # parent")):
        result = results[call_id]
        shown = result.display["worktree"]  # type: ignore[index]
        tree = Path(shown["path"])
        assert tree.parent == project / ".wyckoff" / "worktrees"
        assert (tree / "calc.py").read_text().endswith(expected + "\n")
        assert (tree / "notes.txt").read_text() == "untracked\n"  # the parent's untracked file came too
        # the result tells the branch, the files changed (only the child's) and a diff stat
        assert shown["files"] == ["calc.py"]
        assert f"branch wyckoff/{shown['name']}, 1 file changed: calc.py" in result.result
        assert "1 file changed, 1 insertion(+), 1 deletion(-)" in result.result
        assert f'merge_worktree with name "{shown["name"]}"' in result.result
    # the children's system prompts name their own worktree as the working directory
    assert "a git worktree of your own" in made["scripted:a"].requests[0].system_prompt
    await session.aclose()


async def test_merge_worktree_always_asks_with_the_diff_then_applies_or_reports_a_conflict(
    project: Path,
) -> None:
    made, factory = providers(
        {
            PARENT: [
                {
                    "tool_calls": [
                        task_call("fixer-a", "fix", call_id="t1"),
                        task_call("fixer-b", "fix", call_id="t2"),
                    ]
                },
                {"text": "children done"},
            ],
            "scripted:a": [{"tool_calls": [edit("a + b")]}, {"text": "a"}],
            "scripted:b": [{"tool_calls": [edit("b + a")]}, {"text": "b"}],
        }
    )
    session = build(make_builder(project, factory), PARENT, mode="yolo")
    events = await run(session, "go")
    names = {cid: r.display["worktree"]["name"] for cid, r in task_results(events).items()}  # type: ignore[index]
    asked: list[ev.ApprovalRequested] = []

    async def host(request: ev.ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.allow()

    merge_call = {"name": "merge_worktree", "args": {"name": names["t1"]}}
    made[PARENT].rounds += [{"tool_calls": [merge_call]}, {"text": "merged"}]
    events = await run(session, "merge the first", host)
    # asked even in yolo mode, with the diff in the dialog
    assert [r.name for r in asked] == ["merge_worktree"]
    assert asked[0].preview["kind"] == "diff"
    assert "-    return a - b\n+    return a + b" in asked[0].preview["diff"]
    assert (project / "calc.py").read_text().endswith("a + b\n")  # applied, as an uncommitted change
    assert git(project, "status", "--porcelain") == " M calc.py\n"
    # the second conflicts: refused with the file named, the tree as it was
    merge_call = {"name": "merge_worktree", "args": {"name": names["t2"]}}
    made[PARENT].rounds += [{"tool_calls": [merge_call]}, {"text": "conflict"}]
    events = await run(session, "merge the second", host)
    failed = next(e for e in events if isinstance(e, ev.ToolFailed))
    assert "conflicts with" in failed.error and "calc.py" in failed.error
    assert (project / "calc.py").read_text().endswith("a + b\n")
    assert git(project, "status", "--porcelain") == " M calc.py\n"
    await session.aclose()


async def test_a_deny_rule_refuses_merge_worktree_unasked(project: Path) -> None:
    made, factory = providers(
        {
            PARENT: [{"tool_calls": [{"name": "merge_worktree", "args": {"name": "x"}}]}, {"text": "no"}],
        }
    )
    builder = make_builder(project, factory)
    session = builder.build(model=PARENT, mode="yolo", recorder=None, allow=[])
    session.policy.deny.append("merge_worktree")
    asked: list[ev.ApprovalRequested] = []

    async def host(request: ev.ApprovalRequested) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision.allow()

    events = await run(session, "merge", host)
    assert asked == []
    assert any(isinstance(e, ev.ToolFailed) and "deny rule" in e.error for e in events)
    await session.aclose()


async def test_a_child_that_changes_nothing_leaves_no_worktree(project: Path) -> None:
    _made, factory = providers(
        {
            PARENT: [{"tool_calls": [task_call("plain", "look", call_id="t1")]}, {"text": "ok"}],
            "scripted:a": [{"text": "nothing to do"}],
        }
    )
    session = build(make_builder(project, factory), PARENT)
    made_call = task_call("plain", "look", call_id="t1")
    made_call["args"]["isolation"] = "worktree"
    _made[PARENT].rounds[0] = {"tool_calls": [made_call]}
    events = await run(session, "look")
    result = task_results(events)["t1"]
    assert "no changes; it was removed" in result.result
    assert wt.list_worktrees(project) == []
    assert "wyckoff/" not in git(project, "branch")
    await session.aclose()


async def test_isolation_outside_a_repository_is_a_clear_tool_error(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / ".wyckoff").mkdir(parents=True)
    agent_file(root, "fixer-a", "scripted:a")
    _made, factory = providers(
        {PARENT: [{"tool_calls": [task_call("fixer-a", "fix", call_id="t1")]}, {"text": "ok"}]}
    )
    session = build(make_builder(root, factory), PARENT)
    events = await run(session, "go")
    failed = next(e for e in events if isinstance(e, ev.ToolFailed))
    assert (
        "isolation: worktree is not possible here" in failed.error
        and "not in a git repository" in failed.error
    )
    await session.aclose()


async def test_max_parallel_one_runs_worktree_children_one_after_the_other(project: Path) -> None:
    config = project / ".wyckoff" / "config.toml"
    config.write_text("[agents]\nmax_parallel = 1\n")
    slow = {"delay": 0.02, "chunk_size": 1}
    _made, factory = providers(
        {
            PARENT: [
                {
                    "tool_calls": [
                        task_call("fixer-a", "a", call_id="t1"),
                        task_call("fixer-b", "b", call_id="t2"),
                    ]
                },
                {"text": "done"},
            ],
            "scripted:a": [dict(slow, text="first child")],
            "scripted:b": [dict(slow, text="second child")],
        }
    )
    session = build(make_builder(project, factory), PARENT)
    events = await run(session, "go")
    spans: dict[str, list[int]] = {}
    for index, event in enumerate(events):
        if isinstance(event, ev.SubagentEvent):
            spans.setdefault(event.parent_call_id, []).append(index)
    first, second = sorted(spans.values(), key=lambda s: s[0])
    assert first[-1] < second[0]  # no overlap
    await session.aclose()


async def test_slash_worktree_merges_and_lists(project: Path) -> None:
    _made, factory = providers(
        {
            PARENT: [{"tool_calls": [task_call("fixer-a", "fix", call_id="t1")]}, {"text": "ok"}],
            "scripted:a": [{"tool_calls": [edit("a + b")]}, {"text": "fixed"}],
        }
    )
    session = build(make_builder(project, factory), PARENT, mode="auto-edit")
    events = await run(session, "go")
    name = task_results(events)["t1"].display["worktree"]["name"]  # type: ignore[index]
    listing = await worktree_output(project, "")
    assert isinstance(listing, ev.CommandOutput) and listing.rows[0][:3] == [name, f"wyckoff/{name}", "agent"]
    request = parse(f"/worktree merge {name}")
    assert request == rq.Worktree(f"merge {name}")
    answer = await worktree_output(project, request.argument)  # type: ignore[union-attr]
    assert isinstance(answer, ev.Notice) and answer.level == "info" and "applied" in answer.message
    assert (project / "calc.py").read_text().endswith("a + b\n")
    again = await worktree_output(project, f"merge {name}")
    assert isinstance(again, ev.Notice) and "merged already" in again.message
    bad = await worktree_output(project, "merge")
    assert isinstance(bad, ev.Notice) and bad.level == "warning" and "/worktree takes" in bad.message
    missing = await worktree_output(project, "diff nope")
    assert isinstance(missing, ev.Notice) and "no worktree named 'nope'" in missing.message
    await session.aclose()


del allow_all
