"""The GitHub Action's script, run as the action runs it: a real pull-request repository,
the model on the fake server, and a fake GitHub REST API on 127.0.0.1 that records what
it is sent."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.runtime.review.support import configure, git, make_repo, plant_bug, planted_bug_answers
from wyckoff_cli.testing.fake_server import FakeServer

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "github_review.py"
SARIF_SCHEMA = ROOT / "tests" / "runtime" / "review" / "sarif-schema-2.1.0.json"


class FakeGitHub:
    """Answers the issue-comment endpoints and records every request."""

    def __init__(self, existing: list[dict[str, Any]] | None = None) -> None:
        self.received: list[tuple[str, str, dict[str, str], Any]] = []
        self.existing = existing or []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _answer(self, status: int, data: Any) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _record(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                outer.received.append((self.command, self.path, dict(self.headers), body))
                return body

            def do_GET(self) -> None:
                self._record()
                self._answer(200, outer.existing)

            def do_POST(self) -> None:
                body = self._record()
                self._answer(201, {"id": 7, "body": body["body"]})

            def do_PATCH(self) -> None:
                body = self._record()
                self._answer(200, {"id": 5, "body": body["body"]})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeGitHub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


@pytest.fixture
def pull_request(tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A checked-out pull request (branch `feature` over `main`) and its event file."""
    root = make_repo(tmp_path / "repo")
    configure(server, monkeypatch, root)
    git(root, "add", ".wyckoff")
    git(root, "commit", "-qm", "config")
    base = git(root, "rev-parse", "HEAD")
    plant_bug(root, commit=True)
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 42, "base": {"sha": base}}}))
    return root, event


def run_script(root: Path, event: Path, github: FakeGitHub, *args: str, summary: Path | None = None) -> int:
    env_args = {
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "octo/demo",
        "GITHUB_TOKEN": "ghs_test",
        "GITHUB_API_URL": github.url,
    }
    if summary is not None:
        env_args["GITHUB_STEP_SUMMARY"] = str(summary)
    import os

    env = {**os.environ, **env_args}
    wyckoff = f"{sys.executable} -m wyckoff_cli"
    command = [sys.executable, str(SCRIPT), "--wyckoff", wyckoff, *args]
    return subprocess.run(command, cwd=root, env=env, check=False, timeout=300).returncode


def test_the_action_reviews_the_pull_request_writes_sarif_and_comments(
    pull_request: tuple[Path, Path], server: FakeServer, tmp_path: Path
) -> None:
    root, event = pull_request
    server.script(*planted_bug_answers(confirm=True))
    summary = tmp_path / "summary.md"
    with FakeGitHub() as github:
        code = run_script(root, event, github, "--fail-on", "high", summary=summary)
    assert code == 1
    sarif = json.loads((root / "wyckoff-review.sarif").read_text())
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(sarif)
    assert (
        sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        == "calc.py"
    )
    assert [(method, path) for method, path, _, _ in github.received] == [
        ("GET", "/repos/octo/demo/issues/42/comments?per_page=100"),
        ("POST", "/repos/octo/demo/issues/42/comments"),
    ]
    _, _, headers, body = github.received[1]
    assert headers["Authorization"] == "Bearer ghs_test"
    assert body["body"].startswith("<!-- wyckoff-review -->\n## Wyckoff review")
    assert "`calc.py:3` average divides by len - 1" in body["body"]
    assert "average divides by len - 1" in summary.read_text()
    assert "changes since" in json.dumps(server.bodies[0])  # reviewed with --base


def test_a_second_run_edits_its_earlier_comment(pull_request: tuple[Path, Path], server: FakeServer) -> None:
    root, event = pull_request
    server.script(*planted_bug_answers(confirm=False))
    existing = [{"id": 3, "body": "LGTM"}, {"id": 5, "body": "<!-- wyckoff-review -->\nold"}]
    with FakeGitHub(existing) as github:
        assert run_script(root, event, github) == 0  # the check rejected the only finding
    method, path, _, body = github.received[-1]
    assert (method, path) == ("PATCH", "/repos/octo/demo/issues/comments/5")
    assert "0 findings" in body["body"]


def test_a_review_that_cannot_run_exits_2_without_commenting(
    pull_request: tuple[Path, Path], server: FakeServer
) -> None:
    root, event = pull_request
    with FakeGitHub() as github:
        assert run_script(root, event, github, "--base", "no-such-ref") == 2
    assert github.received == [] and server.requests == []


def test_the_action_is_composite_and_runs_the_tested_script() -> None:
    text = (ROOT / "action.yml").read_text()
    assert "using: composite" in text
    assert 'python "${{ github.action_path }}/scripts/github_review.py"' in text
    assert "uses: github/codeql-action/upload-sarif@v3" in text
    assert "sarif_file: wyckoff-review.sarif" in text
    assert "--sarif wyckoff-review.sarif" in text  # what the script writes is what is uploaded
