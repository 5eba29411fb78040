"""`wyckoff run --worktree` end to end: real git, real `wyckoff run` processes with the
real OpenAI SDK against the loopback fake server, then `wyckoff worktree` on them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wyckoff_cli.testing.fake_server import FakeServer


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.com")
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root


def wyckoff(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", *args],
        cwd=cwd,
        env=env or dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )


def edit(new: str) -> dict[str, object]:
    return {"name": "edit_file", "args": {"path": "calc.py", "old": "a - b", "new": new}}


def start_session(repo: Path, server: FakeServer, name: str) -> subprocess.Popen[str]:
    env = dict(os.environ, OPENAI_BASE_URL=server.openai_url, OPENAI_API_KEY="fake-key")
    argv = [sys.executable, "-m", "wyckoff_cli", "run", "--worktree", name, "--model", "openai:gpt-5"]
    argv += ["--permission-mode", "auto-edit", f"fix add() ({name})"]
    return subprocess.Popen(
        argv, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_two_sessions_edit_the_same_file_then_merge_reports_the_conflict(repo: Path) -> None:
    with FakeServer() as first, FakeServer() as second:
        first.script({"tool_calls": [edit("a + b")]}, {"text": "I changed calc.py to add."})
        second.script({"tool_calls": [edit("b + a")]}, {"text": "I changed calc.py to add, b first."})
        runs = [start_session(repo, first, "one"), start_session(repo, second, "two")]  # at the same time
        outputs = [run.communicate(timeout=120) for run in runs]
    for run, (_out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err
    for name, (_out, err) in zip(("one", "two"), outputs, strict=True):
        assert f"worktree {name} kept: wyckoff/{name}, 1 file changed" in err
        assert f"merge: wyckoff worktree merge {name}" in err
    # the main tree is unchanged, and clean
    assert (repo / "calc.py").read_text().endswith("a - b\n")
    assert git(repo, "status", "--porcelain") == ""
    # each worktree holds its own change
    assert (repo / ".wyckoff/worktrees/one/calc.py").read_text().endswith("a + b\n")
    assert (repo / ".wyckoff/worktrees/two/calc.py").read_text().endswith("b + a\n")

    listed = json.loads(wyckoff(["worktree", "list", "--json"], repo).stdout)
    assert [(w["name"], w["branch"], w["uncommitted"], w["state"]) for w in listed] == [
        ("one", "wyckoff/one", True, "idle"),
        ("two", "wyckoff/two", True, "idle"),
    ]
    assert all(w["session_id"] for w in listed)  # the session that ran there
    shown = wyckoff(["worktree", "diff", "two"], repo)
    assert "-    return a - b\n+    return b + a" in shown.stdout

    merged = wyckoff(["worktree", "merge", "one"], repo)
    assert merged.returncode == 0, merged.stderr
    assert "wyckoff/one (1 file) merged into" in merged.stdout
    assert (repo / "calc.py").read_text().endswith("a + b\n")
    # the merge commit's message comes from the session's first prompt
    assert "fix add() (one)" in git(repo, "log", "-1", "--format=%B", "HEAD^2")
    head = git(repo, "rev-parse", "HEAD")

    conflict = wyckoff(["worktree", "merge", "two"], repo)
    assert conflict.returncode == 1
    assert "conflicts with" in conflict.stderr and "calc.py" in conflict.stderr
    assert "Traceback" not in conflict.stderr and len(conflict.stderr.strip().splitlines()) == 1
    # the user's tree is exactly as before: same commit, no conflict markers, nothing staged
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "calc.py").read_text().endswith("a + b\n")
    # both branches hold their change (two's leftovers were committed by the merge)
    assert "a + b" in git(repo, "show", "wyckoff/one:calc.py")
    assert "b + a" in git(repo, "show", "wyckoff/two:calc.py")

    refused = wyckoff(["worktree", "remove", "two"], repo)
    assert refused.returncode == 1 and "not merged" in refused.stderr
    assert wyckoff(["worktree", "remove", "one"], repo).returncode == 0
    assert wyckoff(["worktree", "remove", "two", "--force"], repo).returncode == 0
    assert not (repo / ".wyckoff/worktrees/two").exists()
    assert "wyckoff/" not in git(repo, "branch")


def test_a_session_that_changes_nothing_leaves_no_worktree(repo: Path) -> None:
    with FakeServer() as server:
        server.script({"text": "Nothing to change."})
        env = dict(os.environ, OPENAI_BASE_URL=server.openai_url, OPENAI_API_KEY="fake-key")
        done = wyckoff(["run", "--model", "openai:gpt-5", "look", "--worktree"], repo, env)
    assert done.returncode == 0, done.stderr
    assert "working in worktree" in done.stderr and "kept" not in done.stderr
    assert list((repo / ".wyckoff/worktrees").iterdir()) == []
    assert "wyckoff/" not in git(repo, "branch")
    assert git(repo, "status", "--porcelain") == ""


def test_the_session_runs_in_the_worktree(repo: Path) -> None:
    """The tools' workspace root is the worktree: a shell command's folder, and the
    session's record of where it ran."""
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "run_shell", "args": {"command": "pwd > where.txt"}}]},
            {"text": "Wrote where.txt."},
        )
        env = dict(os.environ, OPENAI_BASE_URL=server.openai_url, OPENAI_API_KEY="fake-key")
        argv = ["run", "--worktree", "here", "--model", "openai:gpt-5", "--permission-mode", "yolo"]
        done = wyckoff([*argv, "--output-format", "json", "where am I?"], repo, env)
    assert done.returncode == 0, done.stderr
    tree = repo / ".wyckoff/worktrees/here"
    assert (tree / "where.txt").read_text().strip() == str(tree)
    assert not (repo / "where.txt").exists()
    session_id = json.loads(done.stdout)["session_id"]
    listed = json.loads(wyckoff(["worktree", "list", "--json"], repo).stdout)
    assert listed[0]["session_id"] == session_id
    sessions = json.loads(wyckoff(["sessions", "list", "--json", "--all-projects"], repo).stdout)
    assert any(s["id"] == session_id and s["project_root"] == str(tree) for s in sessions)


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ("plain", ["--worktree", "x"], "is not in a git repository"),
        ("unborn", ["--worktree", "x"], "no commits yet"),
        ("detached", ["--worktree", "x"], "HEAD is detached"),
        ("repo", ["--worktree", "bad name"], "is not a valid worktree name"),
        ("repo", ["--worktree", "-x"], "unrecognized arguments: -x"),
        ("repo", ["--worktree", "a..b"], "is not a valid worktree name"),
        ("repo", ["--worktree", "x.lock"], "is not a valid worktree name"),
        ("taken", ["--worktree", "taken"], "exists already"),
        ("branch", ["--worktree", "taken"], "the branch wyckoff/taken exists already"),
        ("repo", ["--worktree", "x", "--continue"], "does not go with --continue"),
    ],
)
def test_bad_input_is_one_clear_line(
    tmp_path: Path, repo: Path, setup: str, args: list[str], message: str
) -> None:
    folder = repo
    if setup == "plain":
        folder = tmp_path / "plain"
        folder.mkdir()
    elif setup == "unborn":
        folder = tmp_path / "unborn"
        folder.mkdir()
        git(folder, "init", "-q")
    elif setup == "detached":
        git(repo, "checkout", "-q", "--detach")
    elif setup == "taken":
        (repo / ".wyckoff/worktrees/taken").mkdir(parents=True)
    elif setup == "branch":
        git(repo, "branch", "wyckoff/taken")
    done = wyckoff(["run", *args, "--model", "scripted:none", "hi"], folder)
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_dirty_main_tree_gets_a_notice(repo: Path, tmp_path: Path) -> None:
    (repo / "calc.py").write_text("changed\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rounds": [{"text": "ok"}]}))
    done = wyckoff(["run", "--worktree", "d", "--model", f"scripted:{script}", "hi"], repo)
    assert done.returncode == 0, done.stderr
    assert "uncommitted changes: they are not in the worktree" in done.stderr


def test_worktree_commands_report_bad_input(repo: Path, tmp_path: Path) -> None:
    for args, message in [
        (["worktree", "diff", "nope"], "no worktree named 'nope'"),
        (["worktree", "merge", "nope"], "no worktree named 'nope'"),
        (["worktree", "remove", "nope"], "no worktree named 'nope'"),
    ]:
        done = wyckoff(args, repo)
        assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    done = wyckoff(["worktree", "list"], plain)
    assert done.returncode == 1 and "is not in a git repository" in done.stderr


def test_the_sandbox_writes_only_the_worktree(repo: Path, tmp_path: Path) -> None:
    """The sandbox's writable root is the worktree: the main tree and the worktree's git
    folder (in the main `.git`) are read-only to the session's commands. (The system temp
    folder is writable in the sandbox, so the session's is moved beside the repository.)"""
    from wyckoff_cli.tools.permissions.sandbox import probe

    why_not = probe()
    if why_not is not None:
        pytest.skip(f"the sandbox cannot start here: {why_not}")
    escape = repo / "escape.txt"
    command = (
        f"python3 -c \"import pathlib; pathlib.Path('{escape}').write_text('x')\"; "
        "git add -A; git commit -qm sneaky; echo done > ok.txt"
    )
    with FakeServer() as server:
        server.script(
            {"tool_calls": [{"name": "run_shell", "args": {"command": command}}]}, {"text": "Tried."}
        )
        temp = tmp_path / "session-temp"
        temp.mkdir()
        env = dict(os.environ, OPENAI_BASE_URL=server.openai_url, OPENAI_API_KEY="fake-key", TMPDIR=str(temp))
        argv = ["run", "--worktree", "boxed", "--model", "openai:gpt-5", "--permission-mode", "yolo"]
        done = wyckoff([*argv, "try to escape"], repo, env)
    assert done.returncode == 0, done.stderr
    tree = repo / ".wyckoff/worktrees/boxed"
    assert (tree / "ok.txt").read_text() == "done\n"  # the worktree is writable
    assert not escape.exists()  # the main tree is not
    assert git(repo, "rev-list", "--count", "wyckoff/boxed") == git(repo, "rev-list", "--count", "main")


def test_chat_runs_the_app_in_the_worktree_and_says_how_to_merge(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from wyckoff_cli.cli import chat_cmd
    from wyckoff_cli.cli.main import main

    seen: list[Path] = []

    def app(args: object, start: Path) -> int:  # the app's part, after the worktree is made
        seen.append(start)
        (start / "calc.py").write_text("changed in the app\n")
        return 0

    monkeypatch.setattr(chat_cmd, "_run_app", app)
    (repo / "sub").mkdir()
    (repo / "sub" / "keep.txt").write_text("x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "sub")
    assert main(["chat", "--worktree", "app", str(repo / "sub")]) == 0
    assert seen == [repo / ".wyckoff/worktrees/app/sub"]  # the same subfolder, in the worktree
    err = capsys.readouterr().err
    assert "worktree app kept: wyckoff/app, 1 file changed; review: wyckoff worktree diff app" in err
    assert (repo / "calc.py").read_text().endswith("a - b\n")


def test_a_session_that_fails_to_start_removes_its_worktree(repo: Path, tmp_path: Path) -> None:
    done = wyckoff(["run", "--worktree", "broken", "--model", "nosuchvendor:model", "hi"], repo)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert not (repo / ".wyckoff/worktrees/broken").exists()
    assert "wyckoff/broken" not in git(repo, "branch")


def test_headless_slash_worktree_lists_and_merges(repo: Path, tmp_path: Path) -> None:
    from wyckoff_cli.runtime import worktrees as wt

    made = wt.create_worktree(repo, "side")
    (made.path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    listed = wyckoff(["run", "/worktree"], repo)
    assert listed.returncode == 0, listed.stderr
    assert "side" in listed.stdout and "wyckoff/side" in listed.stdout
    merged = wyckoff(["run", "/worktree merge side"], repo)
    assert merged.returncode == 0, merged.stderr
    assert (repo / "calc.py").read_text().endswith("a + b\n")


def test_worktree_list_and_prune_after_kill_9(repo: Path) -> None:
    from wyckoff_cli.runtime import worktrees as wt

    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        made = wt.create_worktree(repo, "crashed")
        made.claim(holder.pid)
        (made.path / "calc.py").write_text("half done\n")
        listed = wyckoff(["worktree", "list"], repo)
        assert listed.returncode == 0
        header, row = listed.stdout.splitlines()
        assert header.split() == ["NAME", "BRANCH", "BASE", "STATE", "CHANGES", "SESSION"]
        assert row.startswith("crashed") and f"in use (pid {holder.pid})" in row and "uncommitted" in row
        assert wyckoff(["worktree", "prune"], repo).stdout.startswith("nothing to prune")
        holder.kill()
        holder.wait()
        pruned = wyckoff(["worktree", "prune"], repo)
        assert pruned.returncode == 0, pruned.stderr
        assert pruned.stdout.splitlines() == [
            f"crashed: its session (pid {holder.pid}) is gone",
            "removed worktree crashed; its work is kept on the branch wyckoff/crashed",
        ]
        assert "half done" in git(repo, "show", "wyckoff/crashed:calc.py")
        assert wyckoff(["worktree", "list"], repo).stdout.startswith("no worktrees")
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
