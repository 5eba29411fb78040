"""`${CLAUDE_PLUGIN_ROOT}` in a plugin's hook command stays one word whatever the folder's
path holds (a space as in macOS's `Application Support`, quotes, `$`, a backquote), in every
way published hooks write it: bare, double-quoted, single-quoted, inside a longer word."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from wyckoff_cli.runtime.plugin_root import substitute_root

FORMS = [
    "${CLAUDE_PLUGIN_ROOT}/hooks/say.sh",
    '"${CLAUDE_PLUGIN_ROOT}/hooks/say.sh"',
    '"${CLAUDE_PLUGIN_ROOT}"/hooks/say.sh',
    "'${CLAUDE_PLUGIN_ROOT}/hooks/say.sh'",
    "sh ${CLAUDE_PLUGIN_ROOT}/hooks/say.sh",
    'bash "${CLAUDE_PLUGIN_ROOT}/hooks/say.sh" "${CLAUDE_PLUGIN_ROOT}/x"',
    "cd ${CLAUDE_PLUGIN_ROOT} && ./hooks/say.sh",
    'test -x ${CLAUDE_PLUGIN_ROOT}/hooks/say.sh && "${CLAUDE_PLUGIN_ROOT}"/hooks/say.sh',
    'echo \\"; ${CLAUDE_PLUGIN_ROOT}/hooks/say.sh',
]
FOLDERS = ["Application Support/wyckoff", "it's here", 'say "hi"', "cost $HOME `id`", "plain"]


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("command", FORMS)
def test_the_root_stays_one_word(tmp_path: Path, folder: str, command: str) -> None:
    root = tmp_path / folder
    script = root / "hooks" / "say.sh"
    script.parent.mkdir(parents=True)
    script.write_text('#!/bin/sh\necho "ran in $(basename "$(cd "$(dirname "$0")/.." && pwd)")"\n')
    script.chmod(0o755)
    done = subprocess.run(
        substitute_root(command, str(root)),
        shell=True,
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(f"ran in {root.name}")


def test_without_the_variable_the_command_is_unchanged() -> None:
    assert substitute_root("python3 $CLAUDE_PLUGIN_ROOT/x.py", "/a b") == "python3 $CLAUDE_PLUGIN_ROOT/x.py"
