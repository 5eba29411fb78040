"""`.mcp.json`, `[mcp_servers.NAME]` and `${VAR}` expansion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.storage.config import load_config
from wyckoff_cli.tools.mcp.config import (
    ExpansionError,
    expand,
    expand_server,
    load_mcp_config,
    parse_project_json,
)

CLAUDE = {
    "mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@mcp/files", "${HOME}"], "env": {"TOKEN": "${GH_TOKEN}"}},
        "web": {
            "type": "http",
            "url": "https://mcp.example/mcp",
            "headers": {"Authorization": "Bearer ${KEY}"},
        },
        "old": {"type": "sse", "url": "https://mcp.example/sse"},
        "vs": {"type": "streamable-http", "url": "http://localhost:1/mcp"},
        "quiet": {
            "command": "srv",
            "enabled": False,
            "disabled_tools": ["rm"],
            "tool_timeout": 5,
            "oauth": {},
        },
    }
}


def test_claude_code_format(tmp_path: Path) -> None:
    servers = {s.name: s for s in parse_project_json(json.dumps(CLAUDE), tmp_path / ".mcp.json")}
    assert servers["files"].transport == "stdio" and servers["files"].args == ("-y", "@mcp/files", "${HOME}")
    assert servers["web"].transport == "http" and servers["web"].headers == {"Authorization": "Bearer ${KEY}"}
    assert servers["old"].transport == "sse"
    assert servers["vs"].transport == "http"
    quiet = servers["quiet"]
    assert (quiet.enabled, quiet.disabled_tools, quiet.tool_timeout, quiet.startup_timeout) == (
        False,
        ("rm",),
        5.0,
        10.0,
    )
    assert all(s.scope == "project" for s in servers.values())


def test_vs_code_servers_key(tmp_path: Path) -> None:
    text = json.dumps({"servers": {"a": {"type": "stdio", "command": "srv"}}, "inputs": []})
    (server,) = parse_project_json(text, tmp_path / ".mcp.json")
    assert (server.name, server.command) == ("a", "srv")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"mcpServers": {', "line 1: invalid JSON"),
        ("[]", "expected a JSON object"),
        ('{"mcpServers": []}', "`mcpServers` must be an object"),
        ('{"mcpServers": {\n  "a": {"command": 5}}}', "line 2: server 'a': command must be a string, got 5"),
        ('{"mcpServers": {"a": {"command": "x", "args": "y"}}}', "args must be a list of strings"),
        ('{"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}', "env must be an object of strings"),
        ('{"mcpServers": {"a": {"type": "ws", "url": "x"}}}', "type must be 'stdio', 'http' or 'sse'"),
        ('{"mcpServers": {"a": {"type": "http"}}}', "needs `url`"),
        ('{"mcpServers": {"a": {}}}', "type must be"),
        ('{"mcpServers": {"a": {"command": "x", "tool_timeout": 0}}}', "positive number"),
        ('{"mcpServers": {"a": {"command": "x", "enabled": "yes"}}}', "enabled must be true or false"),
        ('{"mcpServers": {"a": "npx srv"}}', "server 'a' must be an object"),
    ],
)
def test_bad_project_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / ".mcp.json"
    with pytest.raises(
        ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
    ) as info:
        parse_project_json(text, path)
    assert str(path) in info.value.message


def test_user_tables_and_precedence(tmp_path: Path, isolated_environment: Path) -> None:
    user = isolated_environment / "config" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(
        '[mcp_servers.files]\ncommand = "mine"\nstartup_timeout = 3\n\n[mcp_servers.web]\nurl = "http://x/mcp"\n'
    )
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".mcp.json").write_text(json.dumps(CLAUDE))
    config = load_mcp_config(root, load_config(root).config)
    files = config.get("files")
    assert files is not None and (files.scope, files.command, files.startup_timeout) == ("user", "mine", 3.0)
    web = config.get("web")
    assert web is not None and web.scope == "user" and web.transport == "http"  # url: http by default
    assert [s.name for s in config.project_servers()] == ["old", "vs", "quiet"]
    assert config.project_file == root / ".mcp.json"


def test_user_table_errors_name_the_file_and_line(isolated_environment: Path) -> None:
    user = isolated_environment / "config" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('model = "anthropic:x"\n\n[mcp_servers.files]\ncommand = "srv"\ntool_timeout = "long"\n')
    with pytest.raises(
        ConfigError, match=r"config.toml, line 5: mcp_servers.files.tool_timeout must be a number"
    ):
        load_config(None)
    user.write_text('[mcp_servers.files]\ncomand = "srv"\n')
    with pytest.raises(ConfigError, match="unknown key 'mcp_servers.files.comand'"):
        load_config(None)


def test_expansion() -> None:
    env = {"HOME": "/home/me", "EMPTY": ""}
    assert expand("${HOME}/x", env) == "/home/me/x"
    assert expand("${MISSING:-fallback}", env) == "fallback"
    assert expand("${EMPTY:-d}", env) == "d"
    assert expand("${EMPTY}", env) == ""
    assert expand("$HOME and ${ not a var", env) == "$HOME and ${ not a var"
    with pytest.raises(ExpansionError, match="MISSING is not set"):
        expand("${MISSING}", env)


def test_expand_server_expands_every_string(tmp_path: Path) -> None:
    (spec, *_rest) = parse_project_json(json.dumps(CLAUDE), tmp_path / ".mcp.json")
    out = expand_server(spec, {"HOME": "/h", "GH_TOKEN": "t"})
    assert out.args == ("-y", "@mcp/files", "/h") and out.env == {"TOKEN": "t"}
    assert spec.args[-1] == "${HOME}"  # the configured (shown, hashed) text is unchanged


def test_servers_in_a_project_config_file_are_ignored(tmp_path: Path, isolated_environment: Path) -> None:
    root = tmp_path / "cloned"
    (root / ".wyckoff").mkdir(parents=True)
    (root / ".wyckoff" / "config.toml").write_text(
        '[mcp_servers.evil]\ncommand = "curl"\nargs = ["evil.example"]\n'
    )
    user = isolated_environment / "config" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[mcp_servers.mine]\ncommand = "srv"\n')
    config = load_mcp_config(root, load_config(root).config)
    assert [s.name for s in config.servers] == ["mine"]
    (problem,) = config.problems
    assert "[mcp_servers] (evil) is ignored" in problem and ".mcp.json" in problem


def test_servers_from_an_acp_client() -> None:
    from acp import schema

    from wyckoff_cli.session.mcp import client_servers

    specs, problems = client_servers(
        [
            schema.McpServerStdio(
                name="a", command="srv", args=["-v"], env=[schema.EnvVariable(name="K", value="v")]
            ),
            schema.HttpMcpServer(
                type="http",
                name="b",
                url="http://127.0.0.1:1/mcp",
                headers=[schema.HttpHeader(name="X", value="1")],
            ),
            schema.SseMcpServer(type="sse", name="c", url="http://127.0.0.1:1/sse", headers=[]),
        ]
    )
    assert [(s.name, s.transport, s.scope) for s in specs] == [
        ("a", "stdio", "user"),
        ("b", "http", "user"),
        ("c", "sse", "user"),
    ]
    assert specs[0].args == ("-v",) and specs[0].env == {"K": "v"} and specs[1].headers == {"X": "1"}
    assert problems == []
