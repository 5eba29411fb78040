"""The GitHub Action's work (action.yml): review a pull request, write SARIF, comment.

    python scripts/github_review.py [--base SHA] [--fail-on high|medium|low] [--model M]
        [--sarif FILE] [--no-comment] [--wyckoff "COMMAND"]

1. Runs `wyckoff review --base BASE --format json` in the current folder (the checked
   out pull request). BASE is `--base`, else the event's `pull_request.base.sha`
   (`GITHUB_EVENT_PATH`).
2. Writes the findings as SARIF 2.1.0 to `--sarif` (default `wyckoff-review.sarif`) for
   `github/codeql-action/upload-sarif`, and the Markdown summary to
   `GITHUB_STEP_SUMMARY` when it is set.
3. Posts the summary as a comment on the pull request through the REST API
   (`GITHUB_API_URL`, `GITHUB_REPOSITORY`, `GITHUB_TOKEN`); a later run edits its own
   earlier comment (found by a hidden marker) instead of adding another.

Exit status: the review's (1 when a finding is at or above `--fail-on`, 0 otherwise),
2 when the review could not run or a GitHub call failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

MARKER = "<!-- wyckoff-review -->"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Review a pull request with Wyckoff (the GitHub Action's step)."
    )
    parser.add_argument("--base", help="the base commit (default: the pull request's base.sha)")
    parser.add_argument("--fail-on", choices=("high", "medium", "low"), default="low")
    parser.add_argument("--model", help="the reviewers' model")
    parser.add_argument("--sarif", type=Path, default=Path("wyckoff-review.sarif"))
    parser.add_argument("--no-comment", action="store_true", help="do not comment on the pull request")
    parser.add_argument("--wyckoff", default="wyckoff", help="the command that runs Wyckoff")
    args = parser.parse_args(argv)
    event = _event()
    pull = event.get("pull_request") or {}
    base = args.base or (pull.get("base") or {}).get("sha")
    if not base:
        print("github_review: no base commit: pass --base or run on a pull_request event", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        report_file = Path(folder) / "review.json"
        command = [*shlex.split(args.wyckoff), "review", "--base", base, "--format", "json"]
        command += ["--fail-on", args.fail_on, "--output", str(report_file)]
        if args.model:
            command += ["--model", args.model]
        code = subprocess.run(command, check=False).returncode
        if code not in (0, 1) or not report_file.is_file():
            print(f"github_review: the review did not run (exit {code})", file=sys.stderr)
            return 2
        report = json.loads(report_file.read_text(encoding="utf-8"))
    from wyckoff_cli.runtime.review.findings import ReviewResult
    from wyckoff_cli.runtime.review.formats import markdown_report, sarif_report

    result = ReviewResult.from_dict(report)
    args.sarif.write_text(json.dumps(sarif_report(result), indent=2) + "\n", encoding="utf-8")
    summary = markdown_report(result)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as handle:
            handle.write(summary)
    number = pull.get("number")
    if not args.no_comment and number is not None:
        try:
            _comment(int(number), f"{MARKER}\n{summary}")
        except (OSError, KeyError, ValueError) as exc:
            print(f"github_review: could not comment on the pull request: {exc}", file=sys.stderr)
            return 2
    return code


def _event() -> dict[str, Any]:
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path:
        return {}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _comment(number: int, body: str) -> None:
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    repo = os.environ["GITHUB_REPOSITORY"]
    comments = _call("GET", f"{api}/repos/{repo}/issues/{number}/comments?per_page=100")
    earlier = (
        next((c for c in comments if MARKER in str(c.get("body", ""))), None)
        if isinstance(comments, list)
        else None
    )
    if earlier is not None:
        _call("PATCH", f"{api}/repos/{repo}/issues/comments/{earlier['id']}", {"body": body})
    else:
        _call("POST", f"{api}/repos/{repo}/issues/{number}/comments", {"body": body})


def _call(method: str, url: str, payload: dict[str, Any] | None = None) -> Any:
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Accept", "application/vnd.github+json")
    request.add_header("Authorization", f"Bearer {os.environ['GITHUB_TOKEN']}")
    request.add_header("X-GitHub-Api-Version", "2022-11-28")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        raise OSError(f"{method} {url}: HTTP {exc.code} {exc.reason}") from None
    return json.loads(text) if text else None


if __name__ == "__main__":
    raise SystemExit(main())
