"""`wyckoff mcp list|get|add|remove|trust|untrust` against real stdio servers."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import DEMO
from wyckoff_cli.cli.main import main
from wyckoff_cli.storage import paths
from wyckoff_cli.tools.mcp.trust import TrustStore

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def project(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(workspace)
    return workspace


def test_add_list_get_remove(project: Path, capsys: Any) -> None:
    assert main(["mcp", "add", "demo", "--", sys.executable, str(DEMO), "stdio"]) == 0
    assert main(["mcp", "add", "gone", "--", str(project / "missing-program")]) == 0
    assert (
        main(["mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp", "--header", "X-A=1", "--scope", "user"])
        == 0
    )
    data = json.loads((project / ".mcp.json").read_text())
    assert data["mcpServers"]["demo"] == {"command": sys.executable, "args": [str(DEMO), "stdio"]}
    user = tomllib.loads(paths.config_file().read_text())
    assert user["mcp_servers"]["web"] == {
        "type": "http",
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"X-A": "1"},
    }
    assert TrustStore().project_trusted(project / ".mcp.json")  # written by the user: trusted
    capsys.readouterr()

    assert main(["mcp", "list", "--json", "--timeout", "20"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["demo"]["state"] == "connected" and rows["demo"]["tools"] >= 9
    assert rows["gone"]["state"] == "failed" and "command not found" in rows["gone"]["reason"]
    assert rows["web"]["state"] == "failed" and rows["web"]["scope"] == "user"

    assert main(["mcp", "list"]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split() == ["server", "scope", "transport", "state", "tools", "runs"]
    assert "↳ command not found" in table

    assert main(["mcp", "get", "demo"]) == 0
    out = capsys.readouterr().out
    assert "mcp__demo__echo  [read-only]" in out and "mcp__demo__add  [asks]" in out
    assert "@demo:demo://readme" in out and "/mcp__demo__review" in out and "trusted:    yes" in out

    assert main(["mcp", "remove", "gone"]) == 0
    assert main(["mcp", "remove", "web"]) == 0
    assert "gone" not in json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert "web" not in tomllib.loads(paths.config_file().read_text()).get("mcp_servers", {})
    assert TrustStore().project_trusted(project / ".mcp.json")


def test_errors_are_one_line(project: Path, capsys: Any) -> None:
    assert main(["mcp", "add", "bad name", "--", "x"]) == 2
    assert main(["mcp", "add", "x"]) == 2
    with pytest.raises(SystemExit) as stopped:  # argparse's own usage error
        main(["mcp", "add", "x", "--url", "http://a", "--", "cmd"])
    assert stopped.value.code == 2
    assert main(["mcp", "remove", "nothing"]) == 2
    assert main(["mcp", "get", "nothing"]) == 2
    (project / ".mcp.json").write_text('{"mcpServers": {"a": {"command": 1}}}')
    assert main(["mcp", "list"]) == 2
    err = capsys.readouterr().err
    assert "invalid server name 'bad name'" in err
    assert "no MCP server 'nothing'" in err
    assert f"{project / '.mcp.json'}, line 1: server 'a': command must be a string" in err
    assert "Traceback" not in err


def test_trust_a_cloned_project(project: Path, capsys: Any) -> None:
    entry = {"command": sys.executable, "args": [str(DEMO), "stdio"], "startup_timeout": 20}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": entry}}))
    assert main(["mcp", "list", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["state"] == "needs_trust"
    assert main(["mcp", "trust"]) == 0
    out = capsys.readouterr().out
    assert f"proj: {sys.executable} {DEMO} stdio" in out and "tool(s) trusted" in out
    assert main(["mcp", "list", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["state"] == "connected"

    assert main(["mcp", "untrust"]) == 0  # forgets it: the servers ask again
    assert f"No longer trusted: {project / '.mcp.json'}" in capsys.readouterr().out
    assert not TrustStore().project_trusted(project / ".mcp.json")
    assert main(["mcp", "list", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["state"] == "needs_trust"
    assert main(["mcp", "untrust"]) == 0
    assert "Nothing was trusted here" in capsys.readouterr().out


def test_login_refuses_stdio_servers(project: Path, capsys: Any) -> None:
    assert main(["mcp", "add", "demo", "--", sys.executable, str(DEMO), "stdio"]) == 0
    assert main(["mcp", "login", "demo"]) == 2
    assert "a stdio server" in capsys.readouterr().err


def test_get_names_a_prompt_by_the_command_the_app_accepts(project: Path, capsys: Any) -> None:
    assert main(["mcp", "add", "my.demo", "--", sys.executable, str(DEMO), "stdio"]) == 0
    capsys.readouterr()
    assert main(["mcp", "get", "my.demo"]) == 0
    out = capsys.readouterr().out
    assert "/mcp__my_demo__review" in out  # sanitised as the app's slash command is
    assert "/mcp__my.demo__" not in out
