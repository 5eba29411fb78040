"""A marketplace and a plugin written from Claude Code's plugin contract (plugin.json,
commands/, agents/, skills/, hooks/hooks.json with ${CLAUDE_PLUGIN_ROOT}, .mcp.json),
and ways to serve it: a local folder, a bare git repository (file:// or `git daemon`
on 127.0.0.1) and a .tar.gz archive over HTTP on 127.0.0.1."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import socket
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.runtime.test_claude_hooks import BASH_VALIDATOR

PLUGIN = "guard-rails"
MARKET = "team-tools"

# The MCP Python SDK's own example server (its README's "A server in 15 lines").
SDK_EXAMPLE_SERVER = '''\
from mcp.server import MCPServer

mcp = MCPServer("Demo")


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@mcp.resource("greeting://{name}")
def greeting(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


if __name__ == "__main__":
    mcp.run()
'''

COMMAND = """\
---
description: Review the staged changes for security problems
argument-hint: [focus]
allowed-tools: Bash(git diff:*), Read
---
Review the staged changes. Focus: $ARGUMENTS
"""

NESTED_COMMAND = """\
---
description: Write a commit message
---
Write a commit message for the staged changes.
"""

AGENT = """\
---
name: security-reviewer
description: Reviews a change for injection, secrets and unsafe file handling. Use after edits.
tools: Read, Grep, Glob
---
You are a security reviewer. Report findings with file and line.
"""

SKILL = """\
---
name: changelog-entry
description: Writes a Keep a Changelog entry under Unreleased for the change just made.
---
Add one line under `## [Unreleased]` naming the issue.
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def make_plugin(folder: Path, name: str = PLUGIN, version: str = "1.2.0", **manifest: Any) -> Path:
    """A full plugin in `folder`: a validator hook (exit 2 blocks grep), two commands, an
    agent, a skill and the SDK's example MCP server."""
    data = {
        "name": name,
        "version": version,
        "description": "Guard rails for the team: a grep validator, a reviewer, a changelog skill",
        "author": {"name": "Platform Team", "email": "platform@example.com"},
        **manifest,
    }
    write(folder / ".claude-plugin" / "plugin.json", json.dumps(data, indent=2))
    write(folder / "commands" / "review.md", COMMAND)
    write(folder / "commands" / "git" / "commit.md", NESTED_COMMAND)
    write(folder / "agents" / "security-reviewer.md", AGENT)
    write(folder / "skills" / "changelog-entry" / "SKILL.md", SKILL)
    write(folder / "hooks" / "bash_command_validator.py", BASH_VALIDATOR)
    hook = {
        "type": "command",
        "command": f'{sys.executable} "${{CLAUDE_PLUGIN_ROOT}}"/hooks/bash_command_validator.py',
    }
    hooks = {"description": "rg, not grep", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    write(folder / "hooks" / "hooks.json", json.dumps(hooks, indent=2))
    write(folder / "servers" / "demo.py", SDK_EXAMPLE_SERVER)
    servers = {
        "mcpServers": {"demo": {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/servers/demo.py"]}}
    }
    write(folder / ".mcp.json", json.dumps(servers, indent=2))
    return folder


def make_marketplace(root: Path, name: str = MARKET, plugins: list[dict[str, Any]] | None = None) -> Path:
    """A marketplace folder listing `guard-rails` at ./plugins/guard-rails (made here)."""
    if plugins is None:
        make_plugin(root / "plugins" / PLUGIN)
        plugins = [
            {
                "name": PLUGIN,
                "source": f"./plugins/{PLUGIN}",
                "description": "Guard rails",
                "version": "1.2.0",
            }
        ]
    data = {
        "name": name,
        "owner": {"name": "Platform Team", "email": "platform@example.com"},
        "plugins": plugins,
    }
    write(root / ".claude-plugin" / "marketplace.json", json.dumps(data, indent=2))
    return root


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout


def bare_repository(source: Path, bare: Path) -> Path:
    """`source` committed and pushed into the bare repository `bare`."""
    git("init", "-q", cwd=source)
    git("add", "-A", cwd=source)
    git("commit", "-q", "-m", "first", cwd=source)
    git("init", "-q", "--bare", str(bare))
    git("push", "-q", str(bare), "HEAD:refs/heads/main", cwd=source)
    git("symbolic-ref", "HEAD", "refs/heads/main", cwd=bare)
    return bare


def commit_all(source: Path, bare: Path, message: str) -> None:
    git("add", "-A", cwd=source)
    git("commit", "-q", "-m", message, cwd=source)
    git("push", "-q", str(bare), "HEAD:refs/heads/main", cwd=source)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """`git daemon` serving the bare repositories under `base` on 127.0.0.1; yields git://…"""
    port = free_port()
    process = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--export-all",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={base}",
            str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        from tests.waiting import until_sync

        def listening() -> bool:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0

        until_sync(listening, what="git daemon listening on 127.0.0.1")
        yield f"git://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)


def tar_gz(folder: Path, top: str = "market-main") -> bytes:
    """`folder` as a .tar.gz wrapped in one top folder, as a forge's archive is."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(folder, arcname=top)
    return buffer.getvalue()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextmanager
def serve_files(files: dict[str, bytes]) -> Iterator[str]:
    """An HTTP server on 127.0.0.1 answering GET /NAME with `files[NAME]` (404 otherwise)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = files.get(self.path.lstrip("/"))
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
