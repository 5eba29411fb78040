"""The tools of a review's sub-agents, beside the read-only file tools.

- `changed_file`: a changed file as it is after the change, with line numbers (read
  through git for `--base` / `--commit`, from the work tree for `--uncommitted`);
- `report_finding` (reviewers): one finding, checked against its schema and against
  the change — the file must be one the change touches and still has, the lines must
  exist in it — so a bad report goes back to the model as a tool error it can fix;
- `confirm_finding` / `reject_finding` (checkers): the verdict on one finding; either
  ends the checker's run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.runtime.review.changes import Change
from wyckoff_cli.runtime.review.findings import SEVERITIES, Finding, Severity
from wyckoff_cli.tools.base import Tool, ToolContext

REPORT_FINDING = "report_finding"
CONFIRM_FINDING = "confirm_finding"
REJECT_FINDING = "reject_finding"
CHANGED_FILE = "changed_file"
MAX_TITLE = 120
MAX_SHOWN_LINES = 2000
MAX_FINDINGS = 50  # per reviewer: more is noise, not review

FINDING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file": {"type": "string", "minLength": 1, "description": "path relative to the repository root"},
        "start_line": {"type": "integer", "minimum": 1, "description": "first line, after the change"},
        "end_line": {"type": "integer", "minimum": 1, "description": "last line (= start_line for one)"},
        "severity": {
            "type": "string",
            "enum": list(SEVERITIES),
            "description": "high: breaks behaviour, loses data or opens a hole; medium: a real bug in "
            "a less common path; low: a minor but real defect",
        },
        "title": {"type": "string", "minLength": 1, "maxLength": MAX_TITLE},
        "explanation": {
            "type": "string",
            "minLength": 1,
            "description": "what is wrong, why, and when it shows: concrete, from the code",
        },
        "suggested_patch": {
            "type": "string",
            "description": "optional: a unified diff (--- a/FILE, +++ b/FILE, @@ hunks) that fixes it",
        },
    },
    "required": ["file", "start_line", "end_line", "severity", "title", "explanation"],
    "additionalProperties": False,
}

_VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "minLength": 1, "description": "what in the code decides it"}
    },
    "required": ["reason"],
    "additionalProperties": False,
}


def changed_file_tool(change: Change) -> Tool:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        path = str(args["path"]).removeprefix("./")
        diff = change.file(path)
        if diff is None or not diff.reviewable:
            names = ", ".join(f.path for f in change.files if f.reviewable)
            raise ToolError(f"{path} is not a file this change has after it. Changed files: {names}.")
        text = await change.read_after(path)
        if text is None:
            raise ToolError(f"{path} cannot be read as text after the change.")
        lines = text.splitlines()
        start = int(args.get("start_line") or 1)
        end = min(int(args.get("end_line") or len(lines)), start + MAX_SHOWN_LINES - 1, len(lines))
        if start > max(len(lines), 1):
            raise ToolError(f"{path} has {len(lines)} lines; start_line {start} is past its end.")
        shown = "\n".join(f"{n:>6}\t{lines[n - 1]}" for n in range(start, end + 1))
        more = f"\n[lines {end + 1}-{len(lines)} not shown]" if end < len(lines) else ""
        return f"{path} after the change ({len(lines)} lines):\n{shown}{more}"

    return Tool(
        name=CHANGED_FILE,
        description=(
            "Read a file this change touches as it is AFTER the change, with line numbers. "
            "Line numbers in findings refer to this version."
        ),
        parameters={
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "a changed file, relative to the repository root"},
                "start_line": {"type": "integer", "minimum": 1},
                "end_line": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
        run=run,
        concurrency_safe=True,
        kind="read",
        path_args=("path",),
    )


@dataclass
class FindingCollector:
    """The findings one reviewer reported, checked as they come."""

    change: Change
    findings: list[Finding] = field(default_factory=list)

    async def add(self, args: dict[str, Any]) -> Finding:
        path = str(args["file"]).removeprefix("./")
        diff = self.change.file(path)
        if diff is None or not diff.reviewable:
            names = ", ".join(f.path for f in self.change.files if f.reviewable)
            raise ToolError(
                f"{path} is not a file this change has after it; report findings on the changed "
                f"files only: {names}."
            )
        if len(self.findings) >= MAX_FINDINGS:
            raise ToolError(f"You reported {MAX_FINDINGS} findings already: report only the most important.")
        patch = str(args.get("suggested_patch") or "").strip()
        if patch and not ("@@" in patch and ("\n+" in patch or "\n-" in patch)):
            raise ToolError(
                "suggested_patch must be a unified diff (--- a/FILE, +++ b/FILE, @@ hunks with - and + "
                "lines); leave it out when you have no patch."
            )
        start, end = int(args["start_line"]), int(args["end_line"])
        if end < start:
            raise ToolError(f"end_line {end} is before start_line {start}.")
        text = await self.change.read_after(path)
        count = len(text.splitlines()) if text is not None else 0
        if end > count:
            raise ToolError(
                f"{path} has {count} lines after the change; lines {start}-{end} do not exist. "
                "Read it with changed_file and give the lines as they are after the change."
            )
        finding = Finding(
            file=path,
            start_line=start,
            end_line=end,
            severity=cast(Severity, args["severity"]),
            title=" ".join(str(args["title"]).split()),
            explanation=str(args["explanation"]).strip(),
            suggested_patch=patch or None,
        )
        if any(_same(finding, other) for other in self.findings):
            raise ToolError("This finding is reported already.")
        self.findings.append(finding)
        return finding


def _same(one: Finding, other: Finding) -> bool:
    return (one.file, one.start_line, one.end_line, one.title) == (
        other.file,
        other.start_line,
        other.end_line,
        other.title,
    )


def report_finding_tool(collector: FindingCollector) -> Tool:
    async def run(args: dict[str, Any], ctx: ToolContext) -> str:
        finding = await collector.add(args)
        return f"Recorded finding {len(collector.findings)}: {finding.file}:{finding.lines} {finding.title}"

    return Tool(
        name=REPORT_FINDING,
        description=(
            "Report one problem you found in the change: a real defect in the changed code, "
            "with the file, the lines (after the change), a severity, a short title and an "
            "explanation; add a suggested_patch where you can. Call it once per problem. "
            "Do not report style preferences or guesses you could not check in the code."
        ),
        parameters=FINDING_SCHEMA,
        run=run,
        kind="read",  # it changes nothing outside the review
    )


@dataclass
class Verdict:
    confirmed: bool | None = None  # None: no verdict was given
    reason: str = ""


def verdict_tools(verdict: Verdict) -> list[Tool]:
    def make(name: str, confirmed: bool, description: str) -> Tool:
        async def run(args: dict[str, Any], ctx: ToolContext) -> str:
            if verdict.confirmed is not None:
                raise ToolError("The verdict is given already.")
            verdict.confirmed, verdict.reason = confirmed, str(args["reason"]).strip()
            return "Verdict recorded."

        return Tool(
            name=name,
            description=description,
            parameters=_VERDICT_SCHEMA,
            run=run,
            kind="read",
            completes_run=True,
        )

    return [
        make(
            CONFIRM_FINDING,
            True,
            "The finding is real: the code at those lines has the problem as explained. "
            "Give the reason from the code.",
        ),
        make(
            REJECT_FINDING,
            False,
            "The finding is wrong, not at those lines, already handled elsewhere, or cannot be "
            "shown from the code. Give the reason.",
        ),
    ]
