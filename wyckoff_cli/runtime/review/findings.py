"""What a review finds: findings, their severities, and the review's result.

A finding names a file (relative to the repository root), a line range in the file
as it is after the change, a severity (`high`, `medium`, `low`), a title, an
explanation and optionally a suggested patch (a unified diff). `ReviewResult.to_dict`
is the JSON form documented in docs/REVIEW.md and checked by `review.schema.json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["high", "medium", "low"]
SEVERITIES: tuple[Severity, ...] = ("high", "medium", "low")
RANK: dict[str, int] = {"low": 1, "medium": 2, "high": 3}
JSON_VERSION = 1


@dataclass(frozen=True, slots=True)
class Finding:
    file: str
    start_line: int
    end_line: int
    severity: Severity
    title: str
    explanation: str
    suggested_patch: str | None = None
    confirmation: str = ""  # why the check pass confirmed it

    def at_or_above(self, threshold: Severity) -> bool:
        return RANK[self.severity] >= RANK[threshold]

    @property
    def lines(self) -> str:
        if self.start_line == self.end_line:
            return f"{self.start_line}"
        return f"{self.start_line}-{self.end_line}"

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "file": self.file,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "severity": self.severity,
            "title": self.title,
            "explanation": self.explanation,
            "confirmation": self.confirmation,
        }
        if self.suggested_patch:
            data["suggested_patch"] = self.suggested_patch
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        severity = str(data["severity"])
        if severity not in SEVERITIES:
            raise ValueError(f"unknown severity {severity!r}")
        return cls(
            file=str(data["file"]),
            start_line=int(data["start_line"]),
            end_line=int(data["end_line"]),
            severity=severity,
            title=str(data["title"]),
            explanation=str(data["explanation"]),
            suggested_patch=data.get("suggested_patch") or None,
            confirmation=str(data.get("confirmation", "")),
        )


@dataclass(frozen=True, slots=True)
class UsageTotals:
    """One purpose's model calls: `review` (the reviewers) or `review_check`."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
        }


@dataclass
class ReviewResult:
    """The review of one change: the confirmed findings and what it took."""

    target: str  # e.g. "uncommitted changes", "changes since main", "commit 1a2b3c4"
    files: list[str]
    findings: list[Finding] = field(default_factory=list)
    reported: int = 0  # findings the reviewers reported, before the check
    rejected: int = 0  # findings the check rejected or could not confirm
    groups: int = 0  # reviewer sub-agents run
    model: str = ""
    check_model: str = ""
    usage: dict[str, UsageTotals] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # a reviewer or checker that failed

    def at_or_above(self, threshold: Severity) -> list[Finding]:
        return [finding for finding in self.findings if finding.at_or_above(threshold)]

    @property
    def cost_usd(self) -> float | None:
        costs = [totals.cost_usd for totals in self.usage.values()]
        if any(cost is None for cost in costs):
            return None
        return sum(cost for cost in costs if cost is not None)

    def counts(self) -> dict[str, int]:
        return {severity: sum(f.severity == severity for f in self.findings) for severity in SEVERITIES}

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": JSON_VERSION,
            "target": self.target,
            "files": list(self.files),
            "model": self.model,
            "check_model": self.check_model,
            "findings": [finding.to_dict() for finding in self.findings],
            "counts": self.counts(),
            "reported": self.reported,
            "rejected": self.rejected,
            "groups": self.groups,
            "usage": {purpose: totals.to_dict() for purpose, totals in self.usage.items()},
            "cost_usd": self.cost_usd,
            "problems": list(self.problems),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReviewResult:
        usage = {
            purpose: UsageTotals(
                int(totals.get("calls", 0)),
                int(totals.get("input_tokens", 0)),
                int(totals.get("output_tokens", 0)),
                totals.get("cost_usd"),
            )
            for purpose, totals in dict(data.get("usage", {})).items()
        }
        return cls(
            target=str(data["target"]),
            files=[str(name) for name in data.get("files", [])],
            findings=[Finding.from_dict(item) for item in data.get("findings", [])],
            reported=int(data.get("reported", 0)),
            rejected=int(data.get("rejected", 0)),
            groups=int(data.get("groups", 0)),
            model=str(data.get("model", "")),
            check_model=str(data.get("check_model", "")),
            usage=usage,
            problems=[str(p) for p in data.get("problems", [])],
        )
