"""`wyckoff memory list|search|add|delete|clear` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wyckoff_cli.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["memory", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_add_list_search_delete(
    workspace: Path, isolated_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cwd = ["--cwd", str(workspace)]
    assert run(capsys, "add", "Integration tests need Postgres", *cwd) == (
        0,
        "saved #1 (project, fact)\n",
        "",
    )
    code, out, _ = run(
        capsys, "add", "Prefers short answers", "--kind", "preference", "--scope", "user", *cwd
    )
    assert (code, out) == (0, "saved #2 (user, preference)\n")
    code, out, _ = run(capsys, "add", "integration tests need postgres.", *cwd)
    assert out == "already remembered as #1: Integration tests need Postgres\n"
    assert (isolated_environment / "data" / "memory.db").exists()

    code, out, _ = run(capsys, "list", *cwd)
    assert code == 0
    assert "#2  preference" in out and "    Prefers short answers" in out
    assert f"project {workspace.resolve()}" in out

    code, out, _ = run(capsys, "list", "--json", *cwd)
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["id"], r["scope"], r["kind"]) for r in rows] == [
        (2, "user", "preference"),
        (1, "project", "fact"),
    ]

    code, out, _ = run(capsys, "search", "postgres", "tests", "--json", *cwd)
    assert [json.loads(line)["id"] for line in out.splitlines()] == [1]

    assert run(capsys, "delete", "1", *cwd)[1] == "deleted 1 memory\n"
    code, out, err = run(capsys, "delete", "1", *cwd)
    assert code == 1 and "not found" in err
    assert run(capsys, "search", "postgres", *cwd)[1] == "No matching memories.\n"


def test_project_memories_stay_in_their_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        (folder / ".wyckoff").mkdir(parents=True)
    run(capsys, "add", "Project A uses poetry", "--cwd", str(a))
    assert run(capsys, "list", "--cwd", str(b))[1] == "No memories.\n"
    assert "Project A uses poetry" in run(capsys, "list", "--scope", "everywhere", "--cwd", str(b))[1]


def test_clear_asks_unless_yes(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = ["--cwd", str(workspace)]
    run(capsys, "add", "one project fact", *cwd)
    run(capsys, "add", "one user fact", "--scope", "user", *cwd)
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    code, _, err = run(capsys, "clear", *cwd)
    assert code == 2 and "--yes" in err
    assert run(capsys, "clear", "--yes", *cwd)[1] == "deleted 1 memory\n"
    assert run(capsys, "clear", "--yes", *cwd)[1] == "nothing to clear\n"
    assert run(capsys, "clear", "--scope", "user", "-y", *cwd)[1] == "deleted 1 memory\n"


def test_invalid_input_is_a_usage_error(workspace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "add", "x" * 1200, "--cwd", str(workspace))
    assert code == 2 and "at most 1000 characters" in err
