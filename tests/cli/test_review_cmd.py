"""`wyckoff review` end to end: real git repositories, the real Anthropic SDK against the
fake server, every format and exit status."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.runtime.review.support import (
    MODEL,
    REVIEWER_MARK,
    checker,
    configure,
    finding,
    git,
    make_repo,
    plant_bug,
    planted_bug_answers,
    reviewer,
)
from wyckoff_cli.cli.main import main
from wyckoff_cli.runtime.review.formats import json_schema
from wyckoff_cli.testing.fake_server import FakeServer

SARIF_SCHEMA = Path(__file__).parents[1] / "runtime" / "review" / "sarif-schema-2.1.0.json"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


@pytest.fixture
def repo(tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_repo(tmp_path / "repo")
    configure(server, monkeypatch, root)
    git(root, "add", ".wyckoff")
    git(root, "commit", "-q", "-m", "config")
    return root


def review(root: Path, *args: str) -> int:
    return main(["review", "--cwd", str(root), "--max-parallel", "1", *args])


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body.get("tools", [])}


def test_a_planted_bug_is_found_confirmed_and_fails_the_run(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    plant_bug(repo)
    server.script(*planted_bug_answers(confirm=True))
    assert review(repo) == 1
    out, err = capsys.readouterr()
    assert "1 finding (1 high)" in out
    assert "HIGH   calc.py:3  average divides by len - 1" in out
    assert "average([2, 4]) returns 6" in out
    assert "+    return total / len(xs)" in out  # the suggested patch
    assert "Reviewing 1 file (uncommitted changes) with 1 reviewer" in err
    reviewer_body = server.bodies[0]
    assert "calc.py" in json.dumps(reviewer_body["messages"][0])  # the diff is in the task
    assert "-    return sum(xs) / len(xs)" in json.dumps(reviewer_body["messages"][0])
    assert server.pending == 0


def test_a_finding_the_check_rejects_is_dropped(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    plant_bug(repo)
    wrong = finding(
        start_line=7, end_line=7, severity="medium", title="label may crash", explanation="f-strings"
    )
    server.script(
        *reviewer(REVIEWER_MARK, finding(), wrong),
        *checker(finding()["title"], True),
        *checker("label may crash", False, "an f-string of any value works"),
    )
    assert review(repo, "--format", "json") == 1
    report = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator(json_schema()).validate(report)
    assert [f["title"] for f in report["findings"]] == ["average divides by len - 1"]
    assert report["reported"] == 2 and report["rejected"] == 1
    assert report["findings"][0]["confirmation"] == "the code shows it"
    assert set(report["usage"]) == {"review", "review_check"}
    assert report["usage"]["review"]["calls"] == 2 and report["usage"]["review_check"]["calls"] == 4
    assert report["cost_usd"] > 0


def test_a_finding_the_check_never_decides_is_dropped(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    plant_bug(repo)
    server.script(
        *reviewer(REVIEWER_MARK, finding()),
        {"when": "reported this finding", "text": "It looks plausible."},  # no verdict call
    )
    assert review(repo, "--format", "json") == 0
    report = json.loads(capsys.readouterr().out)
    assert report["findings"] == [] and report["rejected"] == 1


@pytest.mark.parametrize(
    ("bad", "complaint"),
    [
        ({"file": "nowhere.py"}, "nowhere.py is not a file this change has after it"),
        ({"start_line": 40, "end_line": 41}, "calc.py has 7 lines after the change"),
        ({"start_line": 3, "end_line": 2}, "end_line 2 is before start_line 3"),
        ({"severity": "critical"}, "invalid arguments for report_finding"),
        ({"title": ""}, "invalid arguments for report_finding"),
        ({"suggested_patch": "just use len(xs)"}, "suggested_patch must be a unified diff"),
        ({"file": "README.md"}, "README.md is not a file this change has after it"),
        ({"file": "../calc.py"}, "../calc.py is not a file this change has after it"),
    ],
)
def test_a_bad_report_goes_back_to_the_model_as_a_tool_error(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str], bad: dict[str, Any], complaint: str
) -> None:
    plant_bug(repo)
    server.script(
        {"when": REVIEWER_MARK, "tool_calls": [{"name": "report_finding", "args": finding(**bad)}]},
        *reviewer(REVIEWER_MARK, finding()),
        *checker(finding()["title"], True),
    )
    assert review(repo, "--format", "json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["reported"] == 1 and len(report["findings"]) == 1
    second = json.dumps(server.bodies[1]["messages"])
    assert complaint in second


def test_the_reviewers_have_only_read_tools_even_in_yolo(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(tmp_path / "repo")
    configure(server, monkeypatch, root, 'permission_mode = "yolo"\n')
    plant_bug(root)
    server.script(
        {
            "when": REVIEWER_MARK,
            "tool_calls": [{"name": "write_file", "args": {"path": "calc.py", "content": "x"}}],
        },
        {"when": REVIEWER_MARK, "tool_calls": [{"name": "run_shell", "args": {"command": "touch pwned"}}]},
        *reviewer(REVIEWER_MARK),
    )
    assert review(root) == 0
    assert (root / "calc.py").read_text().startswith("def average(xs):\n    total")
    assert not (root / "pwned").exists()
    for body in server.bodies:
        assert tool_names(body) <= {"read_file", "list_dir", "glob", "grep", "changed_file", "report_finding"}
    assert "Unknown tool" in json.dumps(server.bodies[1]["messages"])


@pytest.mark.parametrize(("fail_on", "code"), [("high", 0), ("medium", 1), ("low", 1)])
def test_fail_on_sets_the_exit_status(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str], fail_on: str, code: int
) -> None:
    plant_bug(repo)
    medium = finding(severity="medium")
    server.script(*reviewer(REVIEWER_MARK, medium), *checker(medium["title"], True))
    assert review(repo, "--fail-on", fail_on) == code


def test_base_and_commit_review_the_committed_change(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    plant_bug(repo, commit=True)
    (repo / "calc.py").write_text("changed again in the work tree, not reviewed\n")
    for args in (["--base", "main"], ["--commit", "HEAD"]):
        server.script(*planted_bug_answers(confirm=True))
        assert review(repo, *args, "--format", "markdown") == 1
        out = capsys.readouterr().out
        assert "🔴 High `calc.py:3` average divides by len - 1" in out
    check = json.dumps(server.bodies[-1]["messages"])
    assert "total / (len(xs) - 1)" in check  # changed_file read the commit, not the work tree
    assert "not reviewed" not in check


def test_sarif_output_is_valid_sarif_2_1_0(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    plant_bug(repo)
    server.script(*planted_bug_answers(confirm=True))
    out = tmp_path / "review.sarif"
    assert review(repo, "--format", "sarif", "--output", str(out)) == 1
    assert capsys.readouterr().out == ""
    sarif = json.loads(out.read_text())
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).validate(sarif)
    result = sarif["runs"][0]["results"][0]
    assert result["ruleId"] == "wyckoff-review/high" and result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "endLine": 3}


def test_nothing_to_review_exits_0(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert review(repo, "--format", "json") == 0
    out, err = capsys.readouterr()
    assert "nothing to review (uncommitted changes are empty)" in err
    jsonschema.Draft202012Validator(json_schema()).validate(json.loads(out))
    assert server.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--base", "no-such-branch"], "'no-such-branch' is not a commit"),
        (["--commit=--upload-pack=touch"], "is not a commit"),
        (["--commit", "0123456789abcdef0123456789abcdef01234567"], "is not a commit"),
    ],
)
def test_a_bad_ref_is_a_usage_error(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert review(repo, *args) == 2
    assert message in capsys.readouterr().err
    assert server.requests == []


def test_outside_a_repository_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", "--cwd", str(tmp_path)]) == 2
    assert "is not in a git repository" in capsys.readouterr().err


def test_untracked_files_are_reviewed_too(
    repo: Path, server: FakeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "new.py").write_text("import os\nos.system(input())\n")
    server.script(*reviewer(REVIEWER_MARK))
    assert review(repo, "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["files"] == ["new.py"]
    assert "+os.system(input())" in json.dumps(server.bodies[0]["messages"])


def test_the_check_pass_goes_to_the_routed_small_model(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(tmp_path / "repo")
    configure(server, monkeypatch, root, '[routing]\nsmall = "openai:gpt-4o-mini"\n')
    plant_bug(root)
    server.script(*planted_bug_answers(confirm=True))
    assert review(root, "--format", "json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["model"] == MODEL and report["check_model"].endswith("gpt-4o-mini")
    vendors = [request.vendor for request in server.requests]
    assert vendors[:2] == ["anthropic", "anthropic"] and set(vendors[2:]) == {"openai"}


def test_an_unknown_model_or_a_missing_key_is_a_usage_error_before_any_call(
    repo: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plant_bug(repo)
    assert review(repo, "--model", "nosuch:model") == 2
    assert "unknown model 'nosuch:model'" in capsys.readouterr().err
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert review(repo) == 2
    assert "no API key for anthropic:claude-sonnet-4-5" in capsys.readouterr().err
    assert server.requests == []
