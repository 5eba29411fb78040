"""The start-up trust question names the plugins a project's settings file enables."""

from __future__ import annotations

import json
from pathlib import Path

from wyckoff_cli.runtime.hook_config import load_hooks
from wyckoff_cli.tui.screens.trust import describe_files


def test_the_trust_question_lists_the_plugins_a_settings_file_enables(workspace: Path) -> None:
    settings = workspace / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"enabledPlugins": {"guard-rails@team-tools": True, "other@x": False}}))
    (file,) = load_hooks(workspace).needing_trust()
    text = describe_files([file]).plain
    assert f"{settings}\n" in text and "  enables plugin: guard-rails@team-tools\n" in text
    assert "other@x" not in text  # disabling needs no trust
