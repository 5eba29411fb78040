"""What the review's sub-agents are told: their system prompts and each one's task."""

from __future__ import annotations

from wyckoff_cli.runtime.review.changes import Change
from wyckoff_cli.runtime.review.findings import Finding
from wyckoff_cli.runtime.review.groups import FileGroup

REVIEWER_PROMPT = """\
You review a code change for real defects: bugs, crashes, wrong results, security holes, data \
loss, races, broken error handling, and changes that break their callers. You only read: you \
cannot change files or run commands.

Read the diff you are given, then the changed files as they are after the change (changed_file) \
and whatever other code you need to be sure (read_file, grep, glob, list_dir). For each real \
problem call report_finding once, with the lines as they are after the change; add a \
suggested_patch (a unified diff) where a fix is clear. Do not report style, naming, missing \
tests or comments, or anything you could not confirm in the code: every finding is checked \
against the code, and a wrong one costs trust. When you are done, answer with one line saying \
how many findings you reported."""

CHECKER_PROMPT = """\
You check one finding of a code review against the code. Be sceptical: the finding is real \
only if the code at the lines it names has the problem as it explains, and nothing elsewhere \
prevents it. Read the file as it is after the change (changed_file) and the code it depends on \
(read_file, grep, glob, list_dir). Then call confirm_finding or reject_finding with the reason, \
taken from the code. Only one of those two calls ends your work."""


def reviewer_task(change: Change, group: FileGroup) -> str:
    total = len(change.files)
    listed = "\n".join(f"- {f.path} ({f.status})" for f in group.files)
    part = (
        f"{len(group.files)} of the {total} changed files"
        if len(group.files) < total
        else "every changed file"
    )
    return (
        f"Review the {change.target.describe()} of this repository. Your part: {part}:\n{listed}\n\n"
        f"The diff:\n```diff\n{group.diff}```"
    )


def checker_task(change: Change, finding: Finding) -> str:
    diff = change.file(finding.file)
    patch = f"\nSuggested patch:\n```diff\n{finding.suggested_patch}\n```" if finding.suggested_patch else ""
    shown = f"\n\nThe diff of {finding.file}:\n```diff\n{diff.text}```" if diff is not None else ""
    return (
        f"A reviewer of the {change.target.describe()} reported this finding.\n\n"
        f"File: {finding.file}\nLines: {finding.lines} (after the change)\n"
        f"Severity: {finding.severity}\nTitle: {finding.title}\nExplanation: {finding.explanation}"
        f"{patch}{shown}\n\nIs it real? Check it against the code, then confirm or reject it."
    )
