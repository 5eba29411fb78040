"""The task file: every way a line can be wrong names its line and the rest still parse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wyckoff_cli.batch.tasks import DEFAULT_TIMEOUT_S, BadLine, Task, parse_line, read_tasks
from wyckoff_cli.core.errors import UsageError

GOOD = {"id": "a", "repo": "repo", "prompt": "do it"}


@pytest.mark.parametrize(
    ("line", "task_id", "reason"),
    [
        ("{", "line-4", "line 4: not JSON: Expecting property name enclosed in double quotes (column 2)"),
        ("[1, 2]", "line-4", "line 4: expected a JSON object, got list"),
        ('"text"', "line-4", "line 4: expected a JSON object, got str"),
        (json.dumps({"repo": "r", "prompt": "p"}), "line-4", "line 4: missing 'id'"),
        (json.dumps({**GOOD, "repo": None}), "a", "line 4: missing 'repo'"),
        (json.dumps({**GOOD, "prompt": ""}), "a", 'line 4: prompt must be a non-empty string, got ""'),
        (json.dumps({**GOOD, "prompt": "   "}), "a", "line 4: prompt is empty"),
        (json.dumps({**GOOD, "id": 7}), "line-4", "line 4: id must be a non-empty string, got 7"),
        (json.dumps({**GOOD, "id": "a/b"}), "line-4", "line 4: id 'a/b' must be"),
        (json.dumps({**GOOD, "id": ".."}), "line-4", "line 4: id '..' must be"),
        (json.dumps({**GOOD, "id": "-rf"}), "line-4", "line 4: id '-rf' must be"),
        (json.dumps({**GOOD, "id": "x" * 129}), "line-4", "line 4: id 'xxxx"),
        (json.dumps({**GOOD, "timeout_s": 0}), "a", "line 4: timeout_s must be a positive number, got 0"),
        (
            json.dumps({**GOOD, "timeout_s": True}),
            "a",
            "line 4: timeout_s must be a positive number, got true",
        ),
        (
            json.dumps({**GOOD, "max_budget_usd": "1"}),
            "a",
            'line 4: max_budget_usd must be a positive number, got "1"',
        ),
        (json.dumps({**GOOD, "setup": "make"}), "a", "line 4: setup must be a list of command strings"),
        (json.dumps({**GOOD, "setup": ["make", ""]}), "a", "line 4: setup must be a list of command strings"),
        (json.dumps({**GOOD, "permission_mode": "god"}), "a", "line 4: permission_mode 'god' is not one of"),
        (json.dumps({**GOOD, "tset": "pytest"}), "a", "line 4: unknown field(s) tset (known:"),
    ],
)
def test_a_bad_line_names_its_number_and_why(tmp_path: Path, line: str, task_id: str, reason: str) -> None:
    parsed = parse_line(line, 4, tmp_path)
    assert isinstance(parsed, BadLine)
    assert parsed.id == task_id and parsed.line == 4
    assert parsed.reason.startswith(reason)


def test_a_good_line_gets_defaults_and_an_absolute_repo(tmp_path: Path) -> None:
    parsed = parse_line(json.dumps(GOOD), 1, tmp_path)
    assert parsed == Task(id="a", repo=str((tmp_path / "repo").resolve()), prompt="do it", line=1)
    assert parsed.timeout_s == DEFAULT_TIMEOUT_S and parsed.setup == ()
    assert Task.from_dict(parsed.to_dict()) == parsed


@pytest.mark.parametrize(
    "repo", ["https://example.invalid/r.git", "git@example.invalid:team/r.git", "file:///srv/r", "ssh://h/r"]
)
def test_urls_stay_as_they_are(tmp_path: Path, repo: str) -> None:
    parsed = parse_line(json.dumps({**GOOD, "repo": repo}), 1, tmp_path)
    assert isinstance(parsed, Task) and parsed.repo == repo


def test_the_file_keeps_line_numbers_across_blank_lines_and_flags_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(GOOD) + "\n\n" + "oops\n" + json.dumps(GOOD) + "\n")
    items = read_tasks(path)
    assert [type(i).__name__ for i in items] == ["Task", "BadLine", "BadLine"]
    assert items[1].reason.startswith("line 3: not JSON")  # type: ignore[union-attr]
    assert items[2] == BadLine("line-4", 4, "line 4: duplicate id 'a' (first on line 1)")


def test_a_missing_or_unreadable_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no task file"):
        read_tasks(tmp_path / "none.jsonl")
    (tmp_path / "binary.jsonl").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="cannot read the task file"):
        read_tasks(tmp_path / "binary.jsonl")
