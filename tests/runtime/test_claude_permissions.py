"""`.claude/settings.json` permissions in Claude Code's rule syntax: deny and ask apply at
once, allow only after the file is trusted (the hooks' trust); what is not used is
listed. The rules are checked against attack forms of the commands they name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.session.subagent_support import build, make_builder
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.runtime.hook_config import load_hooks, trust_files
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.permissions.policy import ApprovalPolicy

TOOLS = {tool.name: tool for tool in default_registry()}
PERMISSIONS = {
    "allow": ["Bash(npm run test:*)", "Read(docs/**)"],
    "ask": ["Bash(git push:*)"],
    "deny": ["Bash(curl:*)", "Read(./.env)"],
}


def settings(root: Path, data: dict[str, Any], name: str = "settings.json") -> Path:
    path = root / ".claude" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def test_deny_and_ask_apply_untrusted_allow_waits_for_trust(workspace: Path) -> None:
    settings(workspace, {"permissions": PERMISSIONS})
    found = load_hooks(workspace)
    now = found.claude_permissions()
    assert now.deny == PERMISSIONS["deny"] and now.ask == PERMISSIONS["ask"] and now.allow == []
    (waiting,) = found.needing_trust()
    assert waiting.grants == ("allow Bash(npm run test:*)", "allow Read(docs/**)")
    trust_files([waiting])
    assert load_hooks(workspace).claude_permissions().allow == PERMISSIONS["allow"]


def test_a_changed_allow_list_asks_for_trust_again_but_other_edits_do_not(workspace: Path) -> None:
    path = settings(workspace, {"permissions": PERMISSIONS})
    trust_files(load_hooks(workspace).needing_trust())
    settings(workspace, {"permissions": {**PERMISSIONS, "deny": ["Bash(rm:*)"]}})
    assert load_hooks(workspace).needing_trust() == []  # a deny only narrows
    settings(workspace, {"permissions": {**PERMISSIONS, "allow": ["Bash"]}})
    (again,) = load_hooks(workspace).needing_trust()
    assert again.path == path and again.state == "changed"
    assert load_hooks(workspace).claude_permissions().allow == []


def test_settings_local_and_hooks_share_the_trust(workspace: Path) -> None:
    hooks = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}
    settings(workspace, {"hooks": hooks, "permissions": {"allow": ["Bash(make:*)"]}}, "settings.local.json")
    found = load_hooks(workspace)
    (file,) = found.needing_trust()
    assert [s.command for s in file.specs] == ["true"] and file.grants == ("allow Bash(make:*)",)
    trust_files([file])
    found = load_hooks(workspace)
    assert found.runnable("PreToolUse") and found.claude_permissions().allow == ["Bash(make:*)"]


def test_unused_keys_and_bad_rules_are_listed_once(workspace: Path) -> None:
    data = {
        "model": "opus",
        "env": {"A": "1"},
        "permissions": {
            "allow": ["Bash(ok:*)", "Bash("],
            "deny": "Bash(rm:*)",
            "additionalDirectories": ["../lib"],
            "defaultMode": "acceptEdits",
            "disableBypassPermissionsMode": "disable",
        },
    }
    settings(workspace, data)
    found = load_hooks(workspace)
    problems = "\n".join(found.problems)
    assert problems.count("settings Wyckoff does not use: env, model") == 1
    assert "permissions.allow: invalid rule 'Bash('" in problems
    assert "permissions.deny must be a list of strings" in problems
    assert "permissions.additionalDirectories: ../lib is not a folder; skipped" in problems
    assert "defaultMode" not in problems  # a Claude Code mode name: applied once trusted
    assert "permissions keys Wyckoff does not use: disableBypassPermissionsMode" in problems
    trust_files(found.needing_trust())
    assert load_hooks(workspace).claude_permissions().allow == ["Bash(ok:*)"]
    assert load_hooks(workspace).claude_permissions().default_mode == "auto-edit"


def test_the_session_policy_merges_them_and_deny_wins(workspace: Path) -> None:
    settings(workspace, {"permissions": {"allow": ["Bash(git:*)"], "deny": ["Bash(git push:*)"]}})
    trust_files(load_hooks(workspace).needing_trust())
    builder = make_builder(workspace, lambda model: ScriptedProvider([{"text": "ok"}]))
    policy = build(builder, "scripted").policy
    assert "Bash(git:*)" in policy.allow and "Bash(git push:*)" in policy.deny
    ctx = ToolContext(workspace=workspace)
    assert policy.evaluate(TOOLS["run_shell"], {"command": "git status"}, ctx).action == "allow"
    assert policy.evaluate(TOOLS["run_shell"], {"command": "git push origin"}, ctx).action == "deny"


# Each form runs `git push`; an ask rule asks about every one, in every mode.
PUSH_FORMS = [
    "git push",
    "git push --force origin main",
    "cd sub && git push",
    "true; git push",
    "FOO=1 git push",
    "command git push",
    "bash -c 'git push'",
    'sh -c "git push origin"',
    "echo $(git push)",
    "'git' push",
    "/usr/bin/git push",
    "env git push",
]


@pytest.mark.parametrize("command", PUSH_FORMS)
@pytest.mark.parametrize("mode", ["default", "auto-edit", "yolo"])
def test_an_ask_rule_asks_about_every_form_in_every_mode(workspace: Path, command: str, mode: Any) -> None:
    policy = ApprovalPolicy(mode=mode, allow=["Bash"], ask=["Bash(git push:*)"])
    verdict = policy.evaluate(TOOLS["run_shell"], {"command": command}, ToolContext(workspace=workspace))
    assert verdict.action == "ask", verdict.reason


def test_an_ask_rule_leaves_other_commands_alone(workspace: Path) -> None:
    policy = ApprovalPolicy(mode="default", allow=["Bash(git:*)"], ask=["Bash(git push:*)"])
    verdict = policy.evaluate(TOOLS["run_shell"], {"command": "git status"}, ToolContext(workspace=workspace))
    assert verdict.action == "allow"
