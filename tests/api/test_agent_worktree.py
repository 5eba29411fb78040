"""`Agent(worktree=NAME)` (issue 32, with issue 29's worktrees): the turns run in a git
worktree of the workspace, made on the first turn and reused after; the CLI's
end-of-session rule. Real git, the real OpenAI SDK against the fake server."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from wyckoff_cli import Agent, ApprovalDecision
from wyckoff_cli.api import UsageError, WyckoffError
from wyckoff_cli.testing.fake_server import FakeServer

MODEL = "openai:gpt-4.1"
GIT = ["git", "-c", "user.email=test@example.com", "-c", "user.name=Test"]


def write(path: str, content: str = "x\n") -> dict[str, object]:
    return {"tool_calls": [{"name": "write_file", "args": {"path": path, "content": content}}]}


def allow(request: object) -> ApprovalDecision:
    return ApprovalDecision.allow()


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    with FakeServer() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        yield fake


@pytest.fixture
def repo(workspace: Path) -> Path:
    (workspace / "app.py").write_text("print('hi')\n")
    subprocess.run([*GIT, "init", "-q", "-b", "main"], cwd=workspace, check=True)
    subprocess.run([*GIT, "add", "app.py"], cwd=workspace, check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "start"], cwd=workspace, check=True)
    return workspace


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def test_turns_run_in_the_worktree_made_on_the_first_and_reused_after(server: FakeServer, repo: Path) -> None:
    server.script(write("out.txt"), {"text": "Wrote it."}, write("more.txt", "y\n"), {"text": "And more."})
    agent = Agent(MODEL, workspace=repo, worktree="feature", on_approval=allow)
    first = agent.run_sync("write out.txt")
    folder = repo / ".wyckoff" / "worktrees" / "feature"
    assert (first.worktree, first.branch, first.worktree_kept) == ("feature", "wyckoff/feature", True)
    assert first.files_changed == ["out.txt"] and first.ok
    assert (folder / "out.txt").read_text() == "x\n"
    assert not (repo / "out.txt").exists() and git(repo, "status", "--porcelain") == ""
    assert git(repo, "branch", "--show-current") == "main"

    second = agent.run_sync("write more.txt")
    assert second.session_id == first.session_id and second.files_changed == ["more.txt"]
    assert (folder / "out.txt").exists() and (folder / "more.txt").read_text() == "y\n"  # the same worktree
    assert git(folder, "branch", "--show-current") == "wyckoff/feature"
    record = json.loads((repo / ".wyckoff" / "worktrees" / "feature.json").read_text())
    assert record["session_id"] == first.session_id and record["pid"] is None  # released after the turn
    listed = subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "worktree", "list", "--json"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    assert [w["name"] for w in json.loads(listed.stdout)] == ["feature"]


def test_a_turn_that_changes_nothing_removes_the_worktree_and_its_branch(
    server: FakeServer, repo: Path
) -> None:
    server.script({"text": "Nothing to do."})
    result = Agent(MODEL, workspace=repo, worktree="idle").run_sync("look around")
    assert (result.worktree, result.branch, result.worktree_kept) == ("idle", "wyckoff/idle", False)
    assert not (repo / ".wyckoff" / "worktrees" / "idle").exists()
    assert git(repo, "branch", "--list", "wyckoff/idle") == ""


def test_an_existing_worktree_of_the_cli_is_reused(server: FakeServer, repo: Path) -> None:
    from wyckoff_cli.runtime.worktrees import create_worktree

    made = create_worktree(repo, "shared")
    (made.path / "left.txt").write_text("from before\n")
    read = {"tool_calls": [{"name": "read_file", "args": {"path": "left.txt"}}]}
    server.script(read, {"text": "I see left.txt."})
    result = Agent(MODEL, workspace=repo, worktree="shared").run_sync("what is in left.txt?")
    assert result.worktree_kept and (made.path / "left.txt").exists()
    answered = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert "from before" in json.dumps(answered)  # the tools' root is the existing worktree


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bad name!", "not a valid"),
        ("../escape", "not a valid"),
        ("-dash", "not a valid"),
    ],
)
def test_a_bad_name_is_a_one_line_error_before_any_request(
    server: FakeServer, repo: Path, name: str, message: str
) -> None:
    with pytest.raises(WyckoffError, match=message):
        Agent(MODEL, workspace=repo, worktree=name).run_sync("hi")
    assert server.requests == []


@pytest.mark.parametrize("name", ["", "   "])
def test_an_empty_name_is_refused_at_construction(name: str) -> None:
    with pytest.raises(UsageError, match="worktree must be a name"):
        Agent(MODEL, worktree=name)


def test_outside_a_repository_it_says_so(server: FakeServer, workspace: Path) -> None:
    with pytest.raises(WyckoffError, match="is not in a git repository"):
        Agent(MODEL, workspace=workspace, worktree="x").run_sync("hi")
    assert server.requests == []


def test_a_worktree_another_live_session_uses_is_refused(server: FakeServer, repo: Path) -> None:
    from wyckoff_cli.runtime.worktrees import create_worktree

    made = create_worktree(repo, "busy")
    other = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        made.claim(pid=other.pid)
        with pytest.raises(UsageError, match=f"in use by another session \\(process {other.pid}\\)"):
            Agent(MODEL, workspace=repo, worktree="busy").run_sync("hi")
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait()
    assert server.requests == []


def test_a_session_that_fails_to_open_removes_the_worktree_it_made(server: FakeServer, repo: Path) -> None:
    with pytest.raises(WyckoffError):
        Agent("nosuchvendor:model", workspace=repo, worktree="broken").run_sync("hi")
    assert not (repo / ".wyckoff" / "worktrees" / "broken").exists()
    assert git(repo, "branch", "--list", "wyckoff/broken") == ""
    assert server.requests == []


def test_a_failed_model_call_ends_the_turn_and_the_rule_still_applies(server: FakeServer, repo: Path) -> None:
    server.script({"status": 400, "error_message": "bad request"})
    result = Agent(MODEL, workspace=repo, worktree="failing").run_sync("hi")
    assert result.reason == "error" and not result.worktree_kept
    assert not (repo / ".wyckoff" / "worktrees" / "failing").exists()
