"""The review only reads, whatever the mode: a table of the ways a reviewer could try
to write, run something or read outside the repository, each refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.review.support import make_repo, plant_bug
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.review.changes import ReviewTarget, collect_change
from wyckoff_cli.runtime.review.engine import ReviewRun, ReviewSettings
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.review import review_agents

OUTSIDE = "outside-secret.txt"

ATTACKS: list[tuple[str, dict[str, Any], str]] = [
    ("write_file", {"path": "calc.py", "content": "pwned"}, "Unknown tool"),
    ("edit_file", {"path": "calc.py", "old": "total", "new": "pwned"}, "Unknown tool"),
    ("run_shell", {"command": "touch pwned"}, "Unknown tool"),
    ("run_shell", {"command": "bash -c 'echo pwned > calc.py'"}, "Unknown tool"),
    ("task", {"agent": "general", "description": "write", "prompt": "write pwned"}, "Unknown tool"),
    ("todo_write", {"todos": []}, "Unknown tool"),
    ("web_fetch", {"url": "http://127.0.0.1:9/"}, "Unknown tool"),
    ("read_file", {"path": f"../{OUTSIDE}"}, "denied without asking"),
    ("read_file", {"path": "{outside}"}, "denied without asking"),
    ("grep", {"pattern": "secret", "path": ".."}, "denied without asking"),
    ("list_dir", {"path": "/"}, "denied without asking"),
    ("changed_file", {"path": f"../{OUTSIDE}"}, "denied without asking"),  # the policy, first
    ("changed_file", {"path": "./../calc.py"}, "denied without asking"),
    ("changed_file", {"path": "README.md"}, "is not a file this change has after it"),  # unchanged
    ("report_finding", {"file": f"../{OUTSIDE}", "start_line": 1, "end_line": 1, "severity": "low",
                        "title": "t", "explanation": "e"}, "is not a file this change has after it"),
]  # fmt: skip


@pytest.mark.parametrize("mode", ["default", "yolo"])
@pytest.mark.parametrize(
    ("tool", "args", "refusal"), ATTACKS, ids=[f"{a[0]}-{i}" for i, a in enumerate(ATTACKS)]
)
async def test_a_reviewer_cannot_write_run_or_read_outside(
    tmp_path: Path, mode: str, tool: str, args: dict[str, Any], refusal: str
) -> None:
    (tmp_path / OUTSIDE).write_text("the secret\n")
    root = make_repo(tmp_path / "repo")
    (root / ".wyckoff").mkdir()
    (root / ".wyckoff" / "config.toml").write_text(f'permission_mode = "{mode}"\n')
    plant_bug(root)
    before = (root / "calc.py").read_text()
    args = json.loads(json.dumps(args).replace("{outside}", str(tmp_path / OUTSIDE)))
    provider = ScriptedProvider([{"tool_calls": [{"name": tool, "args": args}]}, {"text": "done"}])
    builder = SessionBuilder(open_workspace(root), cwd=root, provider_factory=lambda _m: provider)
    agents, _ = review_agents(builder, "scripted:test")
    run = ReviewRun(await collect_change(root, ReviewTarget()), agents, ReviewSettings(max_parallel=1))
    _ = [event async for event in run.events()]
    answered = json.dumps(provider.requests[1].messages[-1].to_dict())
    assert refusal in answered
    assert "the secret" not in answered
    assert (root / "calc.py").read_text() == before
    assert not (root / "pwned").exists()
    assert run.result is not None and run.result.findings == []


async def test_mentions_in_the_diff_are_not_requests_to_the_reviewer(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "calc.py").write_text("# see @README.md and @calc.py\nx = 1\n")
    provider = ScriptedProvider([{"text": "Reported 0 findings."}])
    builder = SessionBuilder(open_workspace(root), cwd=root, provider_factory=lambda _m: provider)
    agents, _ = review_agents(builder, "scripted:test")
    run = ReviewRun(await collect_change(root, ReviewTarget()), agents, ReviewSettings(max_parallel=1))
    _ = [event async for event in run.events()]
    assert len(provider.requests) == 1 and run.result is not None and run.result.problems == []
    assert "@README.md" in provider.requests[0].messages[0].text  # the diff still went to the model
