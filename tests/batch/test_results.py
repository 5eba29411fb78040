"""results.jsonl: replaced whole on every result, one line per id, torn lines tolerated."""

from __future__ import annotations

import json
from pathlib import Path

from wyckoff_cli.batch.results import ResultsFile, TaskResult


def test_each_result_replaces_the_file_and_a_rerun_replaces_the_ids_line(tmp_path: Path) -> None:
    results = ResultsFile(tmp_path)
    results.add(TaskResult("a", "failed", "cannot clone x"))
    results.add(TaskResult("b", "done", "completed", patch_text="diff --git a/x b/x\n"))
    results.add(TaskResult("a", "done", "completed", patch_text=""))
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [(r["id"], r["status"]) for r in lines] == [("b", "done"), ("a", "done")]
    assert lines[0]["patch"] == str(tmp_path / "patches" / "b.diff")
    assert (tmp_path / "patches" / "b.diff").read_text() == "diff --git a/x b/x\n"
    assert "patch_text" not in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["patches", "results.jsonl"]  # no temp file left


def test_a_torn_or_foreign_line_is_left_out_and_named(tmp_path: Path) -> None:
    good = json.dumps(TaskResult("a", "done", "completed").to_dict())
    (tmp_path / "results.jsonl").write_text(f'{good}\n["x"]\n{{"id": "b", "sta')
    results = ResultsFile(tmp_path)
    results.load()
    assert list(results.records) == ["a"] and results.unreadable == [2, 3]


def test_which_ids_run_again(tmp_path: Path) -> None:
    results = ResultsFile(tmp_path)
    for status in ("done", "failed", "timeout", "budget", "interrupted"):
        results.add(TaskResult(status, status, "why"))
    assert [s for s in results.records if results.should_run(s, retry_failed=False)] == ["interrupted"]
    again = [s for s in results.records if results.should_run(s, retry_failed=True)]
    assert again == ["failed", "timeout", "budget", "interrupted"]
    assert results.should_run("never-seen", retry_failed=False)


def test_an_output_folder_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    import pytest

    from wyckoff_cli.storage.paths import StorageError

    results = ResultsFile(tmp_path / "missing")
    with pytest.raises(StorageError, match=r"cannot write .*results.jsonl: No such file or directory"):
        results.add(TaskResult("a", "done", "completed"))
