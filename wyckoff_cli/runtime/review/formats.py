"""A review's result as text, Markdown, JSON (docs/REVIEW.md, `review.schema.json`) or
SARIF 2.1.0 (for code-scanning uploads: one rule per severity, one result per finding)."""

from __future__ import annotations

import hashlib
import json
import textwrap
from importlib import resources
from typing import Any

from wyckoff_cli import __version__
from wyckoff_cli.runtime.review.findings import SEVERITIES, Finding, ReviewResult

FORMATS = ("text", "markdown", "json", "sarif")
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SARIF_LEVEL = {"high": "error", "medium": "warning", "low": "note"}
RULE_PREFIX = "wyckoff-review"


def render(result: ReviewResult, form: str) -> str:
    if form == "text":
        return text_report(result)
    if form == "markdown":
        return markdown_report(result)
    if form == "json":
        return json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if form == "sarif":
        return json.dumps(sarif_report(result), indent=2, ensure_ascii=False) + "\n"
    raise ValueError(f"unknown review format {form!r} (one of {', '.join(FORMATS)})")


def json_schema() -> dict[str, Any]:
    """The JSON Schema of `--format json` (shipped beside this module)."""
    text = resources.files("wyckoff_cli.runtime.review").joinpath("review.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def summary_line(result: ReviewResult) -> str:
    files = f"{len(result.files)} file{'s' * (len(result.files) != 1)}"
    count = len(result.findings)
    found = f"{count} finding{'s' * (count != 1)}"
    counts = result.counts()
    parts = [f"{counts[s]} {s}" for s in SEVERITIES if counts[s]]
    detail = f" ({', '.join(parts)})" if parts else ""
    dropped = f"; {result.rejected} not confirmed by the check, dropped" if result.rejected else ""
    return f"Review of the {result.target}: {files}, {found}{detail}{dropped}."


def _cost(result: ReviewResult) -> str:
    cost = result.cost_usd
    calls = sum(t.calls for t in result.usage.values())
    spent = f"${cost:.4f}" if cost is not None else "cost unknown"
    return f"{calls} model call{'s' * (calls != 1)}, {spent}"


def text_report(result: ReviewResult) -> str:
    lines = [summary_line(result)]
    for finding in result.findings:
        lines += ["", f"{finding.severity.upper():<6} {finding.file}:{finding.lines}  {finding.title}"]
        lines += textwrap.wrap(finding.explanation, 90, initial_indent="       ", subsequent_indent="       ")
        if finding.suggested_patch:
            lines += [
                "       Suggested patch:",
                *("         " + line for line in finding.suggested_patch.splitlines()),
            ]
    lines += ["", *(f"Problem: {p}" for p in result.problems), f"({_cost(result)})"]
    return "\n".join(lines) + "\n"


def markdown_report(result: ReviewResult) -> str:
    lines = ["## Wyckoff review", "", summary_line(result)]
    for finding in result.findings:
        lines += [
            "",
            f"### {_badge(finding)} `{finding.file}:{finding.lines}` {finding.title}",
            "",
            finding.explanation,
        ]
        if finding.suggested_patch:
            lines += [
                "",
                "<details><summary>Suggested patch</summary>",
                "",
                "```diff",
                finding.suggested_patch,
                "```",
                "",
                "</details>",
            ]
    if result.problems:
        lines += ["", *(f"- Problem: {p}" for p in result.problems)]
    lines += [
        "",
        f"<sub>{result.groups} reviewer(s) on {result.model}, check on {result.check_model}; {_cost(result)}.</sub>",
    ]
    return "\n".join(lines) + "\n"


def _badge(finding: Finding) -> str:
    return {"high": "🔴 High", "medium": "🟠 Medium", "low": "🟡 Low"}[finding.severity]


def sarif_report(result: ReviewResult) -> dict[str, Any]:
    rules = [
        {
            "id": f"{RULE_PREFIX}/{severity}",
            "name": f"Review{severity.capitalize()}",
            "shortDescription": {"text": f"A {severity}-severity problem found by Wyckoff's review"},
            "defaultConfiguration": {"level": SARIF_LEVEL[severity]},
        }
        for severity in SEVERITIES
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "Wyckoff",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "automationDetails": {"id": "wyckoff-review/"},
                "results": [_sarif_result(f) for f in result.findings],
                "properties": {
                    "target": result.target,
                    "reported": result.reported,
                    "rejected": result.rejected,
                },
            }
        ],
    }


def _sarif_result(finding: Finding) -> dict[str, Any]:
    fingerprint = hashlib.sha256(f"{finding.file}\0{finding.title}".encode()).hexdigest()[:32]
    text = f"{finding.title}\n\n{finding.explanation}"
    properties: dict[str, Any] = {"severity": finding.severity, "confirmation": finding.confirmation}
    if finding.suggested_patch:
        properties["suggestedPatch"] = finding.suggested_patch
    return {
        "ruleId": f"{RULE_PREFIX}/{finding.severity}",
        "ruleIndex": SEVERITIES.index(finding.severity),
        "level": SARIF_LEVEL[finding.severity],
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": finding.file, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": finding.start_line, "endLine": finding.end_line},
                }
            }
        ],
        "partialFingerprints": {"wyckoffFinding/v1": fingerprint},
        "properties": properties,
    }
