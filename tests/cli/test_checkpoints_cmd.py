"""`wyckoff checkpoints`: list, diff, restore and prune, after real headless runs."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runtime.checkpoints.conftest import dot_git_state, git
from wyckoff_cli.cli.main import main


@pytest.fixture(autouse=True)
def restore_root_logger() -> Iterator[None]:
    """`main()` installs the log file handler once per process; take it away again so
    later tests get their own (tests/cli/test_logs.py checks its own file)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            handler.close()
    root.handlers, root.level = handlers, level


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app.py").write_text("x = 1\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def headless(tmp_path: Path, repo: Path, name: str, rounds: list[dict[str, object]], *more: str) -> None:
    script = tmp_path / f"{name}.json"
    script.write_text(json.dumps({"rounds": rounds}))
    args = [
        "run",
        "--model",
        f"scripted:{script}",
        "--cwd",
        str(repo),
        "--permission-mode",
        "yolo",
        *more,
        name,
    ]
    assert main(args) == 0


def tool(name: str, **args: object) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "args": args}]}


def lines(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.fixture
def session(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    headless(tmp_path, repo, "first", [tool("write_file", path="new.txt", content="new\n"), {"text": "ok"}])
    headless(
        tmp_path,
        repo,
        "second",
        [tool("run_shell", command="rm app.py && echo s > s.txt"), {"text": "ok"}],
        "-c",
    )
    monkeypatch.chdir(repo)
    capsys.readouterr()
    assert main(["checkpoints", "list", "--json"]) == 0
    return str(lines(capsys)[0]["session"])


def test_list_json_is_one_object_per_line_oldest_first(
    session: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["checkpoints", "list", "--json"]) == 0
    rows = lines(capsys)
    assert len(rows) == 2
    assert [set(r) >= {"id", "session", "message_id", "created", "files"} for r in rows] == [True, True]
    assert rows[0]["created"] < rows[1]["created"] and rows[1]["files"] == ["new.txt"]
    assert {r["session"] for r in rows} == {session}
    assert main(["checkpoints", "list", "--session", session[:12]]) == 0
    out = capsys.readouterr().out
    assert "write_file" in out and "run_shell" in out and "“first”" in out
    assert "Disk use:" in out and "KiB" in out


def test_diff_of_a_checkpoint_and_of_a_session(session: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["checkpoints", "list", "--json"]) == 0
    first, second = (str(r["id"]) for r in lines(capsys))
    assert main(["checkpoints", "diff", second]) == 0
    out = capsys.readouterr().out
    assert "-x = 1" in out and "+s" in out and "new.txt" not in out
    assert main(["checkpoints", "diff", "--session", session]) == 0
    out = capsys.readouterr().out
    assert "+new" in out and "-x = 1" in out and "\x1b[" not in out  # no colours when not a terminal
    assert main(["checkpoints", "diff"]) == 2
    assert "give a CHECKPOINT or --session" in capsys.readouterr().err


def test_restore_previews_without_yes_and_exits_1(
    repo: Path, session: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["checkpoints", "list", "--json"]) == 0
    first = str(lines(capsys)[0]["id"])
    state = sorted(p.name for p in repo.iterdir())
    assert main(["checkpoints", "restore", first]) == 1
    captured = capsys.readouterr()
    assert "deleted     new.txt" in captured.out and "re-created  app.py" in captured.out
    assert "deleted     s.txt" in captured.out
    assert "Run again with --yes" in captured.err
    assert sorted(p.name for p in repo.iterdir()) == state


def test_restore_code_yes_and_undo_it(repo: Path, session: str, capsys: pytest.CaptureFixture[str]) -> None:
    git_state = dot_git_state(repo)
    assert main(["checkpoints", "list", "--json"]) == 0
    first = str(lines(capsys)[0]["id"])
    assert main(["checkpoints", "restore", first, "--code", "--yes"]) == 0
    out = capsys.readouterr().out
    assert (repo / "app.py").read_text() == "x = 1\n"
    assert not (repo / "new.txt").exists() and not (repo / "s.txt").exists()
    saved = out.split("saved as checkpoint ")[1].split()[0]
    assert main(["checkpoints", "restore", saved, "--yes"]) == 0  # the restore undone
    assert (repo / "new.txt").exists() and (repo / "s.txt").exists() and not (repo / "app.py").exists()
    assert dot_git_state(repo) == git_state


def test_restore_conversation_rewinds_the_saved_session(
    repo: Path, session: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["checkpoints", "list", "--json"]) == 0
    second = str(lines(capsys)[1]["id"])
    assert main(["checkpoints", "restore", second, "--conversation", "--yes"]) == 0
    assert "Conversation rewound" in capsys.readouterr().out
    assert (repo / "s.txt").exists()  # the code was left alone
    from wyckoff_cli.storage.sessions import SessionStore

    history = SessionStore().load(session).history
    assert [m.text for m in history if m.role == "user"] == ["first"]


def test_unknown_checkpoints_and_bad_options_are_clear_errors(
    session: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["checkpoints", "restore", "ffffffff", "--yes"]) == 2
    assert "no checkpoint 'ffffffff'" in capsys.readouterr().err
    assert main(["checkpoints", "prune", "--keep-days", "-1"]) == 2
    assert "--keep-days must be 0 or more" in capsys.readouterr().err


def test_prune_removes_everything_older_than_keep_days(
    session: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["checkpoints", "prune", "--keep-days", "0"]) == 0
    assert "Removed 2 checkpoints" in capsys.readouterr().out
    assert main(["checkpoints", "list", "--json"]) == 0
    assert capsys.readouterr().out == ""


def test_no_checkpoints_without_a_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["checkpoints", "list"]) == 0
    assert "No checkpoints in this workspace." in capsys.readouterr().out


def test_sessions_show_marks_the_rewind(repo: Path, session: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["checkpoints", "list", "--json"]) == 0
    second = str(lines(capsys)[1]["id"])
    assert main(["checkpoints", "restore", second, "--conversation", "--yes"]) == 0
    capsys.readouterr()
    assert main(["sessions", "show", session]) == 0
    assert "rewound: the last 4 messages were dropped" in capsys.readouterr().out
