"""The review's own tools, called directly: the checks a report passes before it counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.review.support import finding, make_repo, plant_bug
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.runtime.review.changes import ReviewTarget, collect_change
from wyckoff_cli.runtime.review.tools import MAX_FINDINGS, FindingCollector, Verdict, verdict_tools
from wyckoff_cli.tools.base import ToolContext


async def collector(tmp_path: Path) -> FindingCollector:
    root = make_repo(tmp_path / "repo")
    plant_bug(root)
    return FindingCollector(await collect_change(root, ReviewTarget()))


async def test_a_reviewer_may_report_at_most_the_cap(tmp_path: Path) -> None:
    reports = await collector(tmp_path)
    for n in range(MAX_FINDINGS):
        await reports.add(finding(title=f"problem {n}"))
    with pytest.raises(ToolError, match="already: report only the most important"):
        await reports.add(finding(title="one more"))


async def test_the_same_finding_twice_is_refused(tmp_path: Path) -> None:
    reports = await collector(tmp_path)
    await reports.add(finding())
    with pytest.raises(ToolError, match="reported already"):
        await reports.add(finding(title="  average   divides by len - 1 "))  # the same title, spaced
    assert len(reports.findings) == 1


async def test_a_verdict_is_given_once(tmp_path: Path) -> None:
    verdict = Verdict()
    confirm, reject = verdict_tools(verdict)
    context = ToolContext(workspace=tmp_path)
    assert await confirm.run({"reason": "line 3 divides by len - 1"}, context) == "Verdict recorded."
    with pytest.raises(ToolError, match="given already"):
        await reject.run({"reason": "changed my mind"}, context)
    assert verdict.confirmed is True and verdict.reason == "line 3 divides by len - 1"
    assert confirm.completes_run and reject.completes_run
