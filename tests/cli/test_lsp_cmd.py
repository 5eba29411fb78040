"""`wyckoff lsp status [--json]` (headless, before any server runs) and `wyckoff lsp trust`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wyckoff_cli.cli.main import main


def _rows(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, object]]:
    return {row["name"]: row for row in map(json.loads, capsys.readouterr().out.splitlines())}


def test_status_lists_what_the_workspace_venv_holds(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "")
    server = workspace / ".venv" / "bin" / "basedpyright-langserver"
    server.parent.mkdir(parents=True)
    server.write_text("#!/bin/sh\n")
    server.chmod(0o755)
    assert main(["lsp", "status", "--json", "--cwd", str(workspace)]) == 0
    rows = _rows(capsys)
    assert rows["basedpyright"] == {
        "name": "basedpyright",
        "languages": [".py", ".pyi"],
        "state": "available",
        "command": str(server),
        "files_open": 0,
        "last_error": "",
    }
    assert rows["gopls"]["state"] == "not installed"
    assert main(["lsp", "status", "--cwd", str(workspace)]) == 0
    assert "basedpyright" in capsys.readouterr().out


def test_a_projects_server_command_is_blocked_until_trusted(
    workspace: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    (workspace / ".wyckoff" / "config.toml").write_text(
        '[lsp.servers.mine]\ncommand = "/bin/cat"\nlanguages = [".txt"]\n'
    )
    assert main(["lsp", "status", "--json", "--cwd", str(workspace)]) == 0
    row = _rows(capsys)["mine"]
    assert row["state"] == "blocked" and "not trusted" in str(row["last_error"])
    assert main(["lsp", "trust", "--cwd", str(workspace)]) == 2  # no terminal, no --yes
    capsys.readouterr()
    assert main(["lsp", "trust", "--yes", "--cwd", str(workspace)]) == 0
    assert "mine: /bin/cat" in capsys.readouterr().out
    assert main(["lsp", "status", "--json", "--cwd", str(workspace)]) == 0
    assert _rows(capsys)["mine"]["state"] == "available"
