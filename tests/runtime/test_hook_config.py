"""Where hooks come from, and trust: project hooks run only once trusted, a changed
configuration asks again; Claude Code's settings.json works unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runtime.hook_support import group, hook_command, inputs, write_user_hooks
from tests.runtime.support import collect, make_runtime, make_tool
from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.runtime.hook_config import load_hooks, trust_files
from wyckoff_cli.runtime.user_hooks import UserHooks
from wyckoff_cli.storage.config import load_config
from wyckoff_cli.storage.trust import TrustStore, canonical_hash

SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}


def claude_settings(root: Path, command: str, name: str = "settings.json", **extra: object) -> Path:
    path = root / ".claude" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}
    path.write_text(json.dumps({"permissions": {"allow": []}, "hooks": hooks, **extra}, indent=2))
    return path


async def run_once(workspace: Path, hooks: UserHooks) -> None:
    tool = make_tool("run_shell", schema=SCHEMA)
    runtime, _ = make_runtime(
        [{"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "ls"}}]}, {"text": "ok"}],
        [tool],
        workspace,
        hooks=[hooks],
    )
    await collect(runtime)


async def test_project_hooks_run_only_once_trusted_and_a_change_asks_again(
    workspace: Path, tmp_path: Path
) -> None:
    command, log = hook_command(tmp_path / "h", "guard")
    path = claude_settings(workspace, command)
    found = load_hooks(workspace)
    (file,) = found.files
    assert file.state == "untrusted" and found.needing_trust() == [file]
    await run_once(workspace, UserHooks(found, project_dir=workspace))
    assert inputs(log) == []  # not trusted: not run

    trust_files(found.needing_trust())
    trusted = load_hooks(workspace)
    assert trusted.files[0].state == "trusted" and trusted.needing_trust() == []
    await run_once(workspace, UserHooks(trusted, project_dir=workspace))
    assert len(inputs(log)) == 1

    # another setting changes: still trusted; the hooks change: asked again
    claude_settings(workspace, command, theme="dark")
    assert load_hooks(workspace).files[0].state == "trusted"
    other, _ = hook_command(tmp_path / "h", "other")
    claude_settings(workspace, other)
    changed = load_hooks(workspace)
    assert changed.files[0].state == "changed" and changed.needing_trust()
    await run_once(workspace, UserHooks(changed, project_dir=workspace))
    assert len(inputs(log)) == 1
    assert path.exists()


async def test_trusted_for_one_run_runs_without_a_record(workspace: Path, tmp_path: Path) -> None:
    command, log = hook_command(tmp_path / "h", "guard")
    claude_settings(workspace, command, name="settings.local.json")
    found = load_hooks(workspace)
    found.trusted_for_run.update(f.path for f in found.files)
    assert found.state_of(found.files[0]) == "trusted for this run"
    await run_once(workspace, UserHooks(found, project_dir=workspace))
    assert len(inputs(log)) == 1
    assert TrustStore().records() == []


def test_the_users_own_hooks_need_no_trust(workspace: Path) -> None:
    write_user_hooks({"Stop": [group("echo hi")]})
    found = load_hooks(workspace)
    assert found.state_of(found.files[0]) == "user" and found.needing_trust() == []
    assert [s.event for s in found.runnable("Stop")] == ["Stop"]


def test_project_toml_hooks_need_trust(workspace: Path) -> None:
    (workspace / ".wyckoff").mkdir(exist_ok=True)
    (workspace / ".wyckoff" / "config.toml").write_text(
        '[[hooks.PostToolUse]]\nmatcher = "edit_file"\nhooks = [{ type = "command", command = "ruff format" }]\n'
    )
    found = load_hooks(workspace)
    (file,) = found.files
    assert file.source == "project config" and file.state == "untrusted"
    assert file.specs[0].matcher == "edit_file" and file.specs[0].timeout == 60


def test_unsupported_claude_entries_are_skipped_and_listed(workspace: Path) -> None:
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {
                "hooks": {
                    "PostToolUseFailure": [{"hooks": [{"type": "command", "command": "x"}]}],
                    "Stop": [
                        {
                            "hooks": [
                                {"type": "webhook", "prompt": "check"},
                                {"type": "command", "command": "y"},
                            ]
                        },
                        {"hooks": [{"type": "command", "command": "z", "timeout": "soon"}]},
                    ],
                }
            }
        )
    )
    found = load_hooks(workspace)
    assert [s.command for s in found.specs] == ["y", "z"]
    assert found.specs[1].timeout == 60
    problems = "\n".join(found.problems)
    assert "PostToolUseFailure" in problems and "'webhook'" in problems and "timeout" in problems


def test_broken_settings_json_is_a_listed_problem_not_a_crash(workspace: Path) -> None:
    path = workspace / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{ not json")
    found = load_hooks(workspace)
    assert found.files == [] and "invalid JSON" in found.problems[0]


@pytest.mark.parametrize(
    ("toml", "line", "words"),
    [
        ("[[hooks.PreToolUse]]\nmatcher = 3\n", 2, "must be a string"),
        ('[[hooks.PreToolUse]]\nhooks = [{ command = "x", timeout = "long" }]\n', 2, "must be a number"),
        ('[[hooks.PreToolUse]]\nhooks = [{ type = "http", command = "x" }]\n', 2, "must be one of 'command'"),
        ('[[hooks.BeforeTool]]\nmatcher = ""\n', 1, "unknown key 'hooks.BeforeTool'"),
    ],
)
def test_hook_config_errors_name_file_and_line(workspace: Path, toml: str, line: int, words: str) -> None:
    path = workspace / ".wyckoff" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(toml)
    with pytest.raises(ConfigError) as caught:
        load_config(workspace)
    assert f"{path}, line {line}:" in caught.value.message and words in caught.value.message


def test_trust_store_states(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    target = tmp_path / "settings.json"
    digest = canonical_hash({"b": 1, "a": [1, 2]})
    assert digest == canonical_hash({"a": [1, 2], "b": 1})  # key order does not matter
    assert store.state(target, "hooks", digest) == "untrusted"
    store.trust(target, "hooks", digest)
    assert store.state(target, "hooks", digest) == "trusted"
    assert store.state(target, "mcp", digest) == "untrusted"  # kinds are separate
    assert store.state(target, "hooks", canonical_hash({"a": 2})) == "changed"
    assert (tmp_path / "trust.json").stat().st_mode & 0o777 == 0o600
    assert store.revoke(target, "hooks") and store.state(target, "hooks", digest) == "untrusted"


def test_an_unreadable_trust_file_trusts_nothing(tmp_path: Path) -> None:
    (tmp_path / "trust.json").write_text("garbage")
    assert TrustStore(tmp_path / "trust.json").state(tmp_path, "hooks", "x") == "untrusted"


async def test_the_claude_code_hook_file_in_extending_md_works_unchanged(workspace: Path) -> None:
    import re

    from tests.runtime.test_user_hooks import shell

    docs = (Path(__file__).resolve().parents[2] / "docs" / "EXTENDING.md").read_text()
    section = docs[docs.index("### A Claude Code hook file that works unchanged") :]
    settings = re.search(r"```json\n(.*?)```", section, re.S)
    script = re.search(r"```sh\n(.*?)```", section, re.S)
    assert settings is not None and script is not None
    (workspace / ".claude" / "hooks").mkdir(parents=True)
    (workspace / ".claude" / "settings.json").write_text(settings.group(1))
    hook = workspace / ".claude" / "hooks" / "no-force-push.sh"
    hook.write_text(script.group(1))
    hook.chmod(0o755)
    found = load_hooks(workspace)
    trust_files(found.needing_trust())
    hooks = UserHooks(load_hooks(workspace), project_dir=workspace)
    ran: list[str] = []
    rounds = [
        {"tool_calls": [{"id": "c1", "name": "run_shell", "args": {"command": "git push --force origin"}}]},
        {"tool_calls": [{"id": "c2", "name": "run_shell", "args": {"command": "git push origin"}}]},
        {"text": "ok"},
    ]

    async def allow(_request: object) -> object:
        from wyckoff_cli.core.approval import ApprovalDecision

        return ApprovalDecision.allow()

    runtime, _ = make_runtime(rounds, [shell(ran)], workspace, hooks=[hooks], approver=allow)
    _, messages = await collect(runtime)
    assert ran == ["git push origin"]
    refused = next(m for m in messages if m.role == "tool")
    assert "Force pushes are not allowed" in refused.text
