"""The approval policy as tables: mode × tool × arguments × rules → verdict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.permissions.policy import (
    PERMISSION_MODES,
    ApprovalPolicy,
    PermissionMode,
    invalid_rules,
    next_permission_mode,
)

TOOLS = {tool.name: tool for tool in default_registry()}


def verdict(
    root: Path,
    mode: PermissionMode,
    name: str,
    args: dict[str, Any],
    *,
    allow: list[str] | None = None,
    deny: list[str] | None = None,
    results_dir: Path | None = None,
) -> Any:
    policy = ApprovalPolicy(mode=mode, allow=allow or [], deny=deny or [])
    ctx = ToolContext(workspace=root, results_dir=results_dir)
    return policy.evaluate(TOOLS[name], args, ctx)


READ = ("read_file", {"path": "src/a.py"})
LIST = ("list_dir", {"path": "src"})
GREP = ("grep", {"pattern": "x"})
EDIT = ("edit_file", {"path": "src/a.py", "old": "a", "new": "b"})
WRITE = ("write_file", {"path": "docs/new.md", "content": "x"})
SHELL = ("run_shell", {"command": "pytest -q"})
TODO = ("todo_write", {"items": []})
TASK_OUT = ("task_output", {"task_id": "bg-1"})
TASK_STOP = ("task_stop", {"task_id": "bg-1"})

MODE_TABLE = [
    # mode, call, expected action
    ("default", READ, "allow"),
    ("default", LIST, "allow"),
    ("default", GREP, "allow"),
    ("default", EDIT, "ask"),
    ("default", WRITE, "ask"),
    ("default", SHELL, "ask"),
    ("default", TODO, "allow"),
    ("default", TASK_OUT, "allow"),
    ("default", TASK_STOP, "allow"),
    ("plan", READ, "allow"),
    ("plan", GREP, "allow"),
    ("plan", EDIT, "deny"),
    ("plan", WRITE, "deny"),
    ("plan", SHELL, "deny"),
    ("plan", TODO, "allow"),
    ("plan", TASK_OUT, "allow"),
    ("auto-edit", READ, "allow"),
    ("auto-edit", EDIT, "allow"),
    ("auto-edit", WRITE, "allow"),
    ("auto-edit", SHELL, "ask"),
    ("yolo", READ, "allow"),
    ("yolo", EDIT, "allow"),
    ("yolo", WRITE, "allow"),
    ("yolo", SHELL, "allow"),
]


@pytest.mark.parametrize(("mode", "call", "expected"), MODE_TABLE)
def test_modes(root: Path, mode: PermissionMode, call: tuple[str, dict[str, Any]], expected: str) -> None:
    assert verdict(root, mode, *call).action == expected


def test_plan_mode_tells_the_model(root: Path) -> None:
    result = verdict(root, "plan", *SHELL)
    assert "plan mode" in result.reason and "read-only" in result.reason


@pytest.mark.parametrize("mode", PERMISSION_MODES)
@pytest.mark.parametrize(
    "call",
    [
        ("read_file", {"path": "../elsewhere/secret.txt"}),
        ("read_file", {"path": "/etc/hostname"}),
        ("list_dir", {"path": "/"}),
        ("grep", {"pattern": "x", "path": "/etc"}),
        ("glob", {"pattern": "*", "path": ".."}),
        ("edit_file", {"path": "/tmp/x.py", "old": "a", "new": "b"}),
        ("write_file", {"path": "../out.txt", "content": "x"}),
        ("run_shell", {"command": "ls", "cwd": "/"}),
    ],
)
def test_outside_paths_ask_in_every_mode(root: Path, mode: PermissionMode, call: Any) -> None:
    name, args = call
    result = verdict(root, mode, name, args, allow=[name])
    if mode == "plan" and name in ("edit_file", "write_file", "run_shell"):
        assert result.action == "deny"
        return
    assert result.action == "ask"
    assert result.outside_paths, result
    assert result.rule is None  # approved once, never saved
    assert str(result.outside_paths[0]) in result.reason


def test_symlink_pointing_out_counts_as_outside(root: Path, outside: Path) -> None:
    (root / "link").symlink_to(outside)
    result = verdict(root, "yolo", "read_file", {"path": "link/secret.txt"})
    assert result.action == "ask"
    assert result.outside_paths == (outside / "secret.txt",)


def test_results_folder_is_readable_without_asking(root: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    result = verdict(root, "default", "read_file", {"path": str(results / "x.txt")}, results_dir=results)
    assert result.action == "allow"
    # ... but not writable.
    result = verdict(
        root, "yolo", "write_file", {"path": str(results / "x.txt"), "content": ""}, results_dir=results
    )
    assert result.action == "ask"


RULE_TABLE = [
    # mode, call, allow, deny, expected
    ("default", ("run_shell", {"command": "pytest -q tests"}), ["run_shell(pytest*)"], [], "allow"),
    ("default", ("run_shell", {"command": "pytest"}), ["run_shell(pytest*)"], [], "allow"),
    ("default", ("run_shell", {"command": "git status"}), ["run_shell(git status)"], [], "allow"),
    ("default", ("run_shell", {"command": "git status --short"}), ["run_shell(git status)"], [], "allow"),
    ("default", ("run_shell", {"command": "git   status"}), ["run_shell(git status)"], [], "allow"),
    ("default", ("run_shell", {"command": "git statusx"}), ["run_shell(git status)"], [], "ask"),
    ("default", ("run_shell", {"command": "git push"}), ["run_shell(git status)"], [], "ask"),
    ("default", ("run_shell", {"command": "npm run test:unit"}), ["run_shell(npm run test:*)"], [], "ask"),
    ("default", ("run_shell", {"command": "npm test -- -w"}), ["run_shell(npm test:*)"], [], "allow"),
    # compound commands: every part must be allowed
    ("default", ("run_shell", {"command": "git status && pytest"}), ["run_shell(git status)"], [], "ask"),
    (
        "default",
        ("run_shell", {"command": "git status && pytest -x"}),
        ["run_shell(git status)", "run_shell(pytest*)"],
        [],
        "allow",
    ),
    ("default", ("run_shell", {"command": "pytest; rm -rf build"}), ["run_shell(pytest*)"], [], "ask"),
    ("default", ("run_shell", {"command": "pytest | tee log"}), ["run_shell(pytest*)"], [], "ask"),
    ("default", ("run_shell", {"command": "pytest $(rm x)"}), ["run_shell(pytest*)"], [], "ask"),
    ("default", ("run_shell", {"command": "pytest `rm x`"}), ["run_shell(pytest*)"], [], "ask"),
    ("default", ("run_shell", {"command": "pytest 'a; b'"}), ["run_shell(pytest*)"], [], "allow"),
    ("default", ("run_shell", {"command": "pytest 'unclosed"}), ["run_shell(pytest*)"], [], "ask"),
    ("default", ("run_shell", {"command": "cd src && make"}), ["run_shell(cd src && make)"], [], "allow"),
    ("default", ("run_shell", {"command": "echo hi"}), ["run_shell"], [], "allow"),
    # deny wins over allow and every mode; any part of a compound command
    ("default", ("run_shell", {"command": "git push"}), ["run_shell"], ["run_shell(git push*)"], "deny"),
    ("yolo", ("run_shell", {"command": "ls && git push"}), [], ["run_shell(git push)"], "deny"),
    ("yolo", ("run_shell", {"command": "echo $(curl x)"}), [], ["run_shell(curl*)"], "deny"),
    ("yolo", ("read_file", {"path": ".env"}), [], ["read_file(.env)"], "deny"),
    ("yolo", ("read_file", {"path": "config/.env"}), [], ["read_file(**/.env)"], "deny"),
    ("auto-edit", ("edit_file", {"path": "src/a.py", "old": "a", "new": "b"}), [], ["edit_file"], "deny"),
    ("plan", ("read_file", {"path": "a"}), [], ["read_file"], "deny"),
    # path rules
    (
        "default",
        ("edit_file", {"path": "src/pkg/a.py", "old": "a", "new": "b"}),
        ["edit_file(src/**)"],
        [],
        "allow",
    ),
    (
        "default",
        ("edit_file", {"path": "tests/a.py", "old": "a", "new": "b"}),
        ["edit_file(src/**)"],
        [],
        "ask",
    ),
    (
        "default",
        ("edit_file", {"path": "./src/a.py", "old": "a", "new": "b"}),
        ["edit_file(src/*.py)"],
        [],
        "allow",
    ),
    (
        "default",
        ("edit_file", {"path": "src/x/a.py", "old": "a", "new": "b"}),
        ["edit_file(src/*.py)"],
        [],
        "ask",
    ),
    (
        "default",
        ("edit_file", {"path": "src/x/a.py", "old": "a", "new": "b"}),
        ["edit_file(src)"],
        [],
        "allow",
    ),
    (
        "default",
        ("write_file", {"path": "docs/a.md", "content": ""}),
        ["write_file(docs/*.{md,txt})"],
        [],
        "allow",
    ),
    ("default", ("write_file", {"path": "docs/a.md", "content": ""}), ["edit_file(docs/**)"], [], "ask"),
    # an allow rule never covers an outside path
    (
        "default",
        ("edit_file", {"path": "/tmp/a.py", "old": "a", "new": "b"}),
        ["edit_file(/tmp/**)"],
        [],
        "ask",
    ),
    ("default", ("read_file", {"path": "/etc/hostname"}), [], ["read_file(/etc/**)"], "deny"),
    # .git internals are never written by file tools
    ("yolo", ("write_file", {"path": ".git/config", "content": ""}), ["write_file"], [], "deny"),
    ("yolo", ("edit_file", {"path": "sub/.git/HEAD", "old": "a", "new": "b"}), [], [], "deny"),
    ("yolo", ("read_file", {"path": ".git/config"}), [], [], "allow"),
    ("yolo", ("write_file", {"path": ".gitignore", "content": ""}), [], [], "allow"),
]


@pytest.mark.parametrize(("mode", "call", "allow", "deny", "expected"), RULE_TABLE)
def test_rules(
    root: Path, mode: PermissionMode, call: Any, allow: list[str], deny: list[str], expected: str
) -> None:
    assert verdict(root, mode, *call, allow=allow, deny=deny).action == expected


DESTRUCTIVE = [
    "rm -rf /",
    "rm -rf ~",
    "sudo rm -rf /usr",
    "git push --force origin main",
    "git push -f",
    "ls && mkfs.ext4 /dev/sdb1",
    ":(){ :|:& };:",
    "dd if=/dev/zero of=/dev/sda",
    "bash -c 'rm -rf /'",
]


@pytest.mark.parametrize("command", DESTRUCTIVE)
def test_destructive_commands_ask_even_in_yolo_and_over_allow_rules(root: Path, command: str) -> None:
    result = verdict(root, "yolo", "run_shell", {"command": command}, allow=["run_shell"])
    assert result.action == "ask"
    assert "destructive" in result.reason
    assert result.rule is None


def test_deny_rule_beats_destructive_ask(root: Path) -> None:
    assert (
        verdict(root, "yolo", "run_shell", {"command": "rm -rf /"}, deny=["run_shell(rm*)"]).action == "deny"
    )


ALWAYS_TABLE = [
    ("run_shell", {"command": "git status --short"}, "run_shell(git status)"),
    ("run_shell", {"command": "npm run build"}, "run_shell(npm run build)"),
    ("run_shell", {"command": "pytest -q tests/test_a.py"}, "run_shell(pytest)"),
    ("run_shell", {"command": "python -c 'print(1)'"}, "run_shell(python -c 'print(1)')"),
    ("run_shell", {"command": "rm build/x.o"}, "run_shell(rm build/x.o)"),
    ("run_shell", {"command": "./scripts/check.sh --fast"}, "run_shell(./scripts/check.sh --fast)"),
    ("run_shell", {"command": "ls *.py"}, "run_shell(ls)"),
    ("run_shell", {"command": "rm *.o"}, "run_shell(rm \\*.o)"),
    ("run_shell", {"command": "cd src && make"}, "run_shell(cd src && make)"),
    ("edit_file", {"path": "src/app.py", "old": "a", "new": "b"}, "edit_file(src/app.py)"),
    ("write_file", {"path": "./docs/new file.md", "content": ""}, "write_file(docs/new file.md)"),
    ("write_file", {"path": "a[1].txt", "content": ""}, "write_file(a\\[1\\].txt)"),
]


@pytest.mark.parametrize(("name", "args", "rule"), ALWAYS_TABLE)
def test_always_saves_the_narrowest_rule(root: Path, name: str, args: dict[str, Any], rule: str) -> None:
    result = verdict(root, "default", name, args)
    assert result.action == "ask"
    assert result.rule == rule
    # The saved rule allows the same call next time.
    policy = ApprovalPolicy()
    policy.remember(rule)
    assert policy.evaluate(TOOLS[name], args, ToolContext(workspace=root)).action == "allow"


def test_remembered_prefix_rule_does_not_cover_other_commands(root: Path) -> None:
    policy = ApprovalPolicy()
    policy.remember("run_shell(git status)")
    ctx = ToolContext(workspace=root)
    assert policy.evaluate(TOOLS["run_shell"], {"command": "git status -s"}, ctx).action == "allow"
    assert policy.evaluate(TOOLS["run_shell"], {"command": "git stash"}, ctx).action == "ask"
    assert policy.evaluate(TOOLS["run_shell"], {"command": "git status; git push"}, ctx).action == "ask"


def test_remember_ignores_malformed_rules_and_duplicates() -> None:
    policy = ApprovalPolicy()
    policy.remember("run_shell(")
    policy.remember("edit_file(a.py)")
    policy.remember(" edit_file(a.py) ")
    assert policy.session_allow == ["edit_file(a.py)"]


def test_invalid_rules_are_reported() -> None:
    assert invalid_rules(["run_shell(pytest*)", "edit_file", "bad rule", "x()"]) == [
        "invalid rule 'bad rule': expected TOOL or TOOL(PATTERN), e.g. run_shell(pytest*) or edit_file(src/**)",
        "invalid rule 'x()': the pattern in parentheses is empty (write just x)",
    ]


def test_mode_cycle() -> None:
    cycle = [next_permission_mode(m) for m in PERMISSION_MODES]
    assert cycle == ["plan", "auto-edit", "auto", "yolo", "default"]
    assert next_permission_mode("nonsense") == "default"


def test_mode_can_change_during_a_session(root: Path) -> None:
    policy = ApprovalPolicy(mode="plan")
    ctx = ToolContext(workspace=root)
    assert policy.evaluate(TOOLS["run_shell"], {"command": "ls"}, ctx).action == "deny"
    policy.mode = "yolo"
    assert policy.evaluate(TOOLS["run_shell"], {"command": "ls"}, ctx).action == "allow"
