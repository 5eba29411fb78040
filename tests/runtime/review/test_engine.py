"""The review's run: a many-file change split across parallel reviewers, the check
pass, and the routed check model falling back."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.review.support import (
    CHECKER_MARK,
    MODEL,
    REVIEWER_MARK,
    checker,
    configure,
    finding,
    git,
    make_repo,
    plant_bug,
    reviewer,
)
from tests.waiting import eventually
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message, ToolSpec
from wyckoff_cli.providers.base import ChatResponse, Chunk, LLMProvider
from wyckoff_cli.runtime.review.changes import ReviewTarget, collect_change
from wyckoff_cli.runtime.review.engine import ReviewRun, ReviewSettings
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.review import close_agents, review_agents
from wyckoff_cli.testing.fake_server import FakeServer


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


class CountingProvider:
    """The real provider, counting calls in flight; the first calls wait until `wanted`
    are in flight at once (so the test fails unless the reviewers really run in parallel)."""

    def __init__(self, inner: LLMProvider, wanted: int) -> None:
        self.inner, self.wanted = inner, wanted
        self.active = self.peak = 0

    @property
    def name(self) -> str:
        return self.inner.name

    async def chat_stream(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> AsyncIterator[Chunk]:
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            await eventually(lambda: self.peak >= self.wanted, what=f"{self.wanted} reviewers at once")
            async for chunk in self.inner.chat_stream(messages, tools, system_prompt):
                yield chunk
        finally:
            self.active -= 1

    async def chat(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec], system_prompt: str
    ) -> ChatResponse:
        return await self.inner.chat(messages, tools, system_prompt)


async def run_review(
    root: Path, settings: ReviewSettings, wrap: Any = None
) -> tuple[ReviewRun, list[ev.RuntimeEvent]]:
    builder = SessionBuilder(open_workspace(root), cwd=root)
    agents, _ = review_agents(builder, MODEL)
    if wrap is not None:
        agents.reviewer = wrap(agents.reviewer)
    run = ReviewRun(await collect_change(root, ReviewTarget()), agents, settings)
    try:
        events = [event async for event in run.events()]
    finally:
        await close_agents(agents)
    return run, events


async def test_a_many_file_change_is_split_across_parallel_reviewers(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = [f"pkg_{d}/mod_{n}.py" for d in "abc" for n in range(2)]
    root = make_repo(tmp_path / "repo", {name: "x = 1\n" for name in names})
    configure(server, monkeypatch, root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "config")
    for name in names:
        (root / name).write_text("x = 1\ny = x / 0\n")
    bug = finding(file="pkg_b/mod_1.py", start_line=2, end_line=2, title="division by zero at import")
    for d in "abc":
        found = [bug] if d == "b" else []
        server.script(*reviewer([REVIEWER_MARK, f"- pkg_{d}/mod_0.py"], *found))  # type: ignore[arg-type]
    server.script(*checker(bug["title"], True))
    counting: list[CountingProvider] = []

    def wrap(inner: LLMProvider) -> CountingProvider:
        counting.append(CountingProvider(inner, wanted=3))
        return counting[0]

    run, events = await run_review(root, ReviewSettings(max_group_files=2, max_parallel=3), wrap)
    result = run.result
    assert result is not None
    assert result.groups == 3 and counting[0].peak == 3
    assert [f.title for f in result.findings] == ["division by zero at import"]
    first_tasks = [json.dumps(b["messages"][0]) for b in server.bodies if len(b["messages"]) == 1]
    for d in "abc":  # each group's files went to exactly one reviewer
        assert (
            sum(
                f"pkg_{d}/mod_0.py (modified)" in task and f"pkg_{d}/mod_1.py" in task for task in first_tasks
            )
            == 1
        )
    purposes = [e.purpose for e in events if isinstance(e, ev.UsageReported)]
    assert purposes.count("review") == 4 and purposes.count("review_check") == 2
    assert server.pending == 0


async def test_a_failing_check_model_falls_back_to_the_reviewers_model(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "repo")
    configure(server, monkeypatch, root, '[routing]\nreview_check = "openai:gpt-4o-mini"\n')
    plant_bug(root)
    server.script(
        *reviewer(REVIEWER_MARK, finding()),
        {"when": CHECKER_MARK, "status": 400, "error_message": "no such model"},
        *checker(finding()["title"], True),
    )
    run, events = await run_review(root, ReviewSettings(max_parallel=1))
    assert run.result is not None
    assert [f.title for f in run.result.findings] == [finding()["title"]]
    assert run.result.check_model == MODEL and run.result.problems == []
    warnings = [e.message for e in events if isinstance(e, ev.Notice) and e.level == "warning"]
    assert len(warnings) == 1 and "using anthropic:claude-sonnet-4-5 for the check from now on" in warnings[0]
    assert [r.vendor for r in server.requests] == [
        "anthropic",
        "anthropic",
        "openai",
        "anthropic",
        "anthropic",
    ]


async def test_a_failing_reviewer_is_a_problem_of_the_result(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(tmp_path / "repo")
    configure(server, monkeypatch, root)
    plant_bug(root)
    server.script({"when": REVIEWER_MARK, "status": 401, "error_message": "bad key"})
    run, _ = await run_review(root, ReviewSettings(max_parallel=1))
    assert run.result is not None and run.result.findings == []
    assert len(run.result.problems) == 1 and "a reviewer of" in run.result.problems[0]
