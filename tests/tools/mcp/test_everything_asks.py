"""The reference "everything" MCP server (npm) asks Wyckoff for the model, for a form,
and for its roots: its `trigger-sampling-request`, `trigger-elicitation-request` (a form
of every field kind the spec has) and `get-roots-list` (which caches the roots until
`notifications/roots/list_changed`)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import stdio_spec
from tests.tools.mcp.test_everything import everything as everything  # the fixture
from tests.tools.mcp.test_server_asks import Person, RecordingSampler, context
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import ToolContext, ToolOutcome
from wyckoff_cli.tools.mcp.forms import defaults, form_fields
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture
async def started(start: Any, everything: Path, tmp_path: Path) -> Any:
    workspace = tmp_path / "main"
    workspace.mkdir()
    spec = stdio_spec("everything", command=shutil.which("node") or "node", args=(str(everything), "stdio"))
    running = start(spec, root=workspace)
    sampler = RecordingSampler()
    running.manager.use_model(sampler)
    await running.manager.wait_ready()
    assert running.manager.statuses()[0].state == "connected", running.manager.statuses()[0].reason
    running.sampler, running.workspace = sampler, workspace
    return running


async def run(started: Any, tool: str, args: dict[str, Any], ctx: ToolContext) -> str:
    found = started.registry.get(f"mcp__everything__{tool}")
    assert found is not None, sorted(started.registry.names())
    outcome = await found.run(args, ctx)
    return outcome.text if isinstance(outcome, ToolOutcome) else str(outcome)


async def test_its_sampling_request_runs_on_the_model(started: Any, tmp_path: Path) -> None:
    person = Person(ApprovalDecision.allow())
    text = await run(
        started,
        "trigger-sampling-request",
        {"prompt": "a haiku", "maxTokens": 20},
        context(tmp_path, ApprovalPolicy(), person),
    )
    assert "hello from the model" in text
    (request,) = person.requests()
    assert request.name == "McpSampling" and request.args["server"] == "everything"
    assert (
        request.args["system_prompt"] == "You are a helpful test server." and request.args["max_tokens"] == 20
    )
    (asked,) = started.sampler.requests
    assert asked.messages[0][0] == "user" and "a haiku" in asked.messages[0][1]


async def test_its_sampling_request_refused(started: Any, tmp_path: Path) -> None:
    person = Person(ApprovalDecision.deny())
    ctx = context(tmp_path, ApprovalPolicy(), person)
    with pytest.raises(ToolError, match="the user did not allow everything to use the model"):
        await run(started, "trigger-sampling-request", {"prompt": "a haiku"}, ctx)  # its error is the model's
    assert started.sampler.requests == []


async def test_its_form_is_read_and_answered(started: Any, tmp_path: Path) -> None:
    seen: list[Any] = []

    class Filler(Person):
        def put(self, event: Any) -> None:
            if getattr(event, "name", "") == "McpElicitation" and hasattr(event, "responder"):
                seen.append(event)
                fields = form_fields(event.args["requested_schema"])
                kinds = {f.name: f.kind for f in fields}
                assert (
                    kinds["name"] == "string"
                    and kinds["check"] == "boolean"
                    and kinds["integer"] == "integer"
                )
                assert (
                    kinds["untitledMultipleSelectEnum"] == "multi"
                    and kinds["titledSingleSelectEnum"] == "enum"
                )
                assert kinds["legacyTitledEnum"] == "enum" and kinds["titledMultipleSelectEnum"] == "multi"
                assert defaults(fields) is None  # `name` is required and has no default
                typed = {f.name: f.default for f in fields if f.default is not None}
                typed |= {"name": "Ada Lovelace", "check": True, "integer": "7"}
                self.answers.append(ApprovalDecision.edit({"action": "accept", "content": typed}))
            super().put(event)

    text = await run(
        started, "trigger-elicitation-request", {}, context(tmp_path, ApprovalPolicy(), Filler())
    )
    assert len(seen) == 1
    assert (
        "- Name: Ada Lovelace" in text
        and "- Agreed to terms: true" in text
        and "- Favorite Integer: 7" in text
    )


@pytest.mark.parametrize(
    ("answer", "said"), [({"action": "decline"}, "declined"), ({"action": "cancel"}, "cancel")]
)
async def test_its_form_declined_or_cancelled(
    started: Any, tmp_path: Path, answer: dict[str, str], said: str
) -> None:
    person = Person(ApprovalDecision.edit(answer))
    text = await run(started, "trigger-elicitation-request", {}, context(tmp_path, ApprovalPolicy(), person))
    assert said in text.lower()


async def test_roots_list_changed_reaches_it(started: Any, tmp_path: Path) -> None:
    workspace = started.workspace
    assert workspace.resolve().as_uri() in await run(
        started, "get-roots-list", {}, ToolContext(workspace=workspace)
    )
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    await started.manager.set_root(worktree)  # the server re-asks on list_changed (it caches otherwise)
    for _ in range(200):  # a condition with a deadline, not a fixed wait
        listed = await run(started, "get-roots-list", {}, ToolContext(workspace=worktree))
        if worktree.resolve().as_uri() in listed:
            break
        await asyncio.sleep(0.05)
    assert worktree.resolve().as_uri() in listed and workspace.resolve().as_uri() not in listed
