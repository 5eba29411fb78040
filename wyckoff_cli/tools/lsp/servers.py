"""Which language servers a workspace can use: the known ones found on PATH or in the
workspace's own virtualenv (`.venv/`, `venv/` — never the environment Wyckoff runs
from), adjusted or added by `[lsp.servers.NAME]`. Project-level server commands run
only once the project's `[lsp]` table is trusted (session/lsp.py).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


class ServerSettings(Protocol):
    """What `[lsp.servers.NAME]` says of a server (storage/lsp_config.py)."""

    @property
    def command(self) -> str | None: ...
    @property
    def args(self) -> list[str] | None: ...
    @property
    def languages(self) -> list[str] | None: ...
    @property
    def initialization_options(self) -> Mapping[str, Any]: ...
    @property
    def env(self) -> Mapping[str, str]: ...
    @property
    def enabled(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class _Unconfigured:
    command: str | None = None
    args: list[str] | None = None
    languages: list[str] | None = None
    initialization_options: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True


@dataclass(frozen=True, slots=True)
class KnownServer:
    name: str
    executables: tuple[str, ...]
    args: tuple[str, ...]
    languages: tuple[str, ...]
    install: str  # what a user runs to get it
    language_id: Mapping[str, str]  # extension → LSP languageId


_PY = {".py": "python", ".pyi": "python"}
_TS = {
    ".ts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".jsx": "javascriptreact",
    ".mjs": "javascript",
    ".cjs": "javascript",
}
_C = {".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp"}

# In order of preference: the first found serves a language.
KNOWN_SERVERS: tuple[KnownServer, ...] = (
    KnownServer(
        "basedpyright",
        ("basedpyright-langserver",),
        ("--stdio",),
        tuple(_PY),
        "pip install basedpyright",
        _PY,
    ),
    KnownServer("pyright", ("pyright-langserver",), ("--stdio",), tuple(_PY), "npm install -g pyright", _PY),
    KnownServer("pylsp", ("pylsp",), (), tuple(_PY), "pip install python-lsp-server", _PY),
    KnownServer(
        "typescript-language-server",
        ("typescript-language-server",),
        ("--stdio",),
        tuple(_TS),
        "npm install -g typescript-language-server typescript",
        _TS,
    ),
    KnownServer(
        "gopls", ("gopls",), (), (".go",), "go install golang.org/x/tools/gopls@latest", {".go": "go"}
    ),
    KnownServer(
        "rust-analyzer",
        ("rust-analyzer",),
        (),
        (".rs",),
        "rustup component add rust-analyzer",
        {".rs": "rust"},
    ),
    KnownServer("clangd", ("clangd",), (), tuple(_C), "install clangd (e.g. apt install clangd)", _C),
)
KNOWN_BY_NAME = {server.name: server for server in KNOWN_SERVERS}


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One server this workspace may run. `command` None: not installed; `blocked`:
    why it may not run (disabled, not trusted)."""

    name: str
    languages: tuple[str, ...]
    command: str | None
    args: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    initialization_options: Mapping[str, Any] = field(default_factory=dict)
    blocked: str = ""
    install: str = ""

    @property
    def runnable(self) -> bool:
        return self.command is not None and not self.blocked

    def language_id(self, path: Path) -> str:
        known = KNOWN_BY_NAME.get(self.name)
        suffix = path.suffix.lower()
        if known is not None and suffix in known.language_id:
            return known.language_id[suffix]
        return suffix.lstrip(".") or "plaintext"


def _own_prefixes() -> set[Path]:
    return {Path(p).resolve() for p in {sys.prefix, sys.base_prefix, sys.exec_prefix}}


def find_executable(name: str, workspace: Path, path_env: str | None = None) -> str | None:
    """`name` in the workspace's `.venv/bin` or `venv/bin`, else on PATH — skipping
    the bin folders of the environment Wyckoff itself runs from."""
    own = _own_prefixes()
    for venv in (".venv", "venv"):
        candidate = workspace / venv / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    search = path_env if path_env is not None else os.environ.get("PATH", "")
    for folder in search.split(os.pathsep):
        if not folder:
            continue
        bin_dir = Path(folder)
        try:
            resolved = bin_dir.resolve()
        except OSError:
            continue
        if resolved.parent in own or resolved in own:
            continue
        found = shutil.which(name, path=str(bin_dir))
        if found is not None:
            return found
    return None


def resolve_servers(
    workspace: Path,
    configured: Mapping[str, ServerSettings],
    *,
    untrusted: frozenset[str] = frozenset(),
    path_env: str | None = None,
) -> list[ServerSpec]:
    """Every known server and every configured one, in preference order (configured
    new ones first, then the known ones). `untrusted`: names whose command comes from
    an untrusted project file (they are listed, blocked)."""
    specs: list[ServerSpec] = []
    for name, conf in configured.items():
        if name in KNOWN_BY_NAME:
            continue
        if conf.command is None:
            blocked = "no `command` set"
            command = None
        else:
            command = find_executable(conf.command, workspace, path_env) or (
                conf.command if Path(conf.command).is_absolute() else None
            )
            blocked = ""
        specs.append(
            _spec(
                name,
                conf,
                command,
                tuple(conf.args or ()),
                tuple(conf.languages or ()),
                untrusted,
                blocked,
                "",
            )
        )
    for known in KNOWN_SERVERS:
        conf = configured.get(known.name) or _Unconfigured()
        if conf.command is not None:
            command = find_executable(conf.command, workspace, path_env) or (
                conf.command if Path(conf.command).is_absolute() else None
            )
        else:
            command = next(
                (c for exe in known.executables if (c := find_executable(exe, workspace, path_env))), None
            )
        args = tuple(conf.args) if conf.args is not None else known.args
        languages = tuple(conf.languages) if conf.languages is not None else known.languages
        specs.append(_spec(known.name, conf, command, args, languages, untrusted, "", known.install))
    return specs


def _spec(
    name: str,
    conf: ServerSettings,
    command: str | None,
    args: tuple[str, ...],
    languages: tuple[str, ...],
    untrusted: frozenset[str],
    blocked: str,
    install: str,
) -> ServerSpec:
    if not conf.enabled:
        blocked = "disabled in config (`enabled = false`)"
    elif name in untrusted:
        blocked = "its command comes from the project's config, which is not trusted (`wyckoff lsp trust`)"
    normalized = tuple(e.lower() if e.startswith(".") else "." + e.lower() for e in languages)
    return ServerSpec(
        name,
        normalized,
        command,
        args,
        dict(conf.env),
        dict(conf.initialization_options),
        blocked,
        install,
    )


def server_for(specs: list[ServerSpec], path: Path) -> ServerSpec | None:
    """The server that serves `path`: the first runnable one of its extension."""
    suffix = path.suffix.lower()
    return next((s for s in specs if suffix in s.languages and s.runnable), None)


def install_hint(specs: list[ServerSpec], path: Path) -> str:
    """What to install for `path`'s language ("" when no known server serves it)."""
    suffix = path.suffix.lower()
    hints = [
        f"{s.name} ({s.install})" for s in specs if suffix in s.languages and s.install and s.command is None
    ]
    return " or ".join(hints[:2])
