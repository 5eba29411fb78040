"""The review's reports: JSON against the shipped schema, SARIF against the OASIS SARIF
2.1.0 schema, and the text and Markdown forms."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from wyckoff_cli.runtime.review.findings import Finding, ReviewResult, UsageTotals
from wyckoff_cli.runtime.review.formats import json_schema, render, sarif_report

SARIF_SCHEMA = json.loads((Path(__file__).parent / "sarif-schema-2.1.0.json").read_text())


def result(*findings: Finding, cost: float | None = 0.01) -> ReviewResult:
    return ReviewResult(
        "changes since main",
        ["a.py", "b/c.py"],
        list(findings),
        reported=len(findings) + 1,
        rejected=1,
        groups=2,
        model="anthropic:claude-sonnet-4-5",
        check_model="anthropic:claude-haiku-4-5",
        usage={"review": UsageTotals(3, 900, 90, cost), "review_check": UsageTotals(2, 400, 20, 0.002)},
    )


FINDINGS = (
    Finding(
        "a.py",
        3,
        5,
        "high",
        "SQL built from input",
        "The query joins request text.",
        "--- a/a.py\n+++ b/a.py\n",
    ),
    Finding(
        "b/c.py",
        10,
        10,
        "low",
        "Off by one in the loop",
        "It skips the last item.",
        confirmation="range(n - 1)",
    ),
    Finding("b/c.py", 1, 1, "medium", "Unclosed file", "open() without a with block."),
)


def test_the_json_schema_is_a_valid_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(json_schema())


@pytest.mark.parametrize("findings", [(), FINDINGS, FINDINGS[:1]])
@pytest.mark.parametrize("cost", [0.01, None])
def test_json_is_valid_against_its_schema_and_reads_back(
    findings: tuple[Finding, ...], cost: float | None
) -> None:
    report = json.loads(render(result(*findings, cost=cost), "json"))
    jsonschema.Draft202012Validator(json_schema()).validate(report)
    again = ReviewResult.from_dict(report)
    assert again.to_dict() == report
    assert report["cost_usd"] == (None if cost is None else pytest.approx(cost + 0.002))


@pytest.mark.parametrize("findings", [(), FINDINGS])
def test_sarif_is_valid_sarif_2_1_0(findings: tuple[Finding, ...]) -> None:
    sarif = sarif_report(result(*findings))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    run = sarif["runs"][0]
    assert sarif["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "Wyckoff"
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    for item in run["results"]:
        assert rules[item["ruleIndex"]] == item["ruleId"]
    assert [r["level"] for r in run["results"]] == ["error", "note", "warning"][: len(findings)]


def test_a_changed_finding_keeps_its_fingerprint_when_only_its_lines_move() -> None:
    moved = Finding("a.py", 30, 32, "high", "SQL built from input", "Moved down.")
    first, second = (sarif_report(result(f))["runs"][0]["results"][0] for f in (FINDINGS[0], moved))
    assert first["partialFingerprints"] == second["partialFingerprints"]


def test_text_and_markdown_name_every_finding_and_what_was_dropped() -> None:
    text = render(result(*FINDINGS), "text")
    assert text.startswith("Review of the changes since main: 2 files, 3 findings (1 high, 1 medium, 1 low)")
    assert "1 not confirmed by the check, dropped" in text
    assert "HIGH   a.py:3-5  SQL built from input" in text and "LOW    b/c.py:10  Off by one" in text
    markdown = render(result(*FINDINGS), "markdown")
    assert "### 🔴 High `a.py:3-5` SQL built from input" in markdown
    assert "```diff\n--- a/a.py\n+++ b/a.py" in markdown
    assert "2 reviewer(s) on anthropic:claude-sonnet-4-5, check on anthropic:claude-haiku-4-5" in markdown


def test_an_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown review format 'xml'"):
        render(result(), "xml")
