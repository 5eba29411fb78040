"""Managed settings: a system-wide file an admin controls, whose keys win.

`/etc/wyckoff/managed.toml` on Linux, `/Library/Application Support/Wyckoff/managed.toml`
on macOS (`MANAGED_PATH`; nothing else moves it: no environment variable, no flag, no
user or project setting, and the tests replace this module attribute). Keys:

- `deny = ["run_shell(curl:*)", "Read(./.env)"]`: deny rules added to every session's,
  which nothing allows past;
- `allowed_models = ["anthropic:*", "openai:gpt-5*"]`: shell-style patterns a session's
  model must match (`provider:model`); another model is refused, naming this file;
- `disable_yolo = true`: yolo mode decides as the default mode does, and says so;
- `allow_hooks = false`: no user hook runs (user, project or Claude Code files);
- `allow_plugins = false`: no plugin is installed or used (storage/plugins.py);
- `mcp_allowlist = ["github", "internal-*"]`: the only MCP servers that start (config,
  `.mcp.json` or an ACP client's); the others are listed as not started, naming this file;
- `sandbox = "required"`: shell commands never run unsandboxed: `[shell] sandbox = "off"`
  and `--sandbox off` are overridden, `unsandboxed: true` is refused, and where the
  sandbox cannot start every command is refused (session/shell.py, sandbox.py).

A key Wyckoff does not know (a misspelt one) or a wrong value is an error naming the file, so a policy is never half applied without a
word: the session does not start until the admin's file is one Wyckoff can honour.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, TypeVar

from wyckoff_cli.core.errors import ConfigError

if sys.platform == "darwin":
    MANAGED_PATH = Path("/Library/Application Support/Wyckoff/managed.toml")
else:
    MANAGED_PATH = Path("/etc/wyckoff/managed.toml")

_LISTS = ("deny", "allowed_models", "mcp_allowlist")
_FLAGS = ("disable_yolo", "allow_hooks", "allow_plugins")
SANDBOX_VALUES = ("required",)
T = TypeVar("T")


@dataclass(frozen=True)
class ManagedPolicy:
    path: Path
    deny: tuple[str, ...] = ()
    allowed_models: tuple[str, ...] | None = None  # None: any model
    disable_yolo: bool = False
    allow_hooks: bool = True
    allow_plugins: bool = True
    mcp_allowlist: tuple[str, ...] | None = None  # None: any MCP server
    sandbox_required: bool = False
    keys: dict[str, Any] = field(default_factory=dict)  # as written, for `config show --origin`

    def model_problem(self, model: str) -> str | None:
        """Why `model` may not be used, or None."""
        if self.allowed_models is None or any(fnmatchcase(model, p) for p in self.allowed_models):
            return None
        allowed = ", ".join(self.allowed_models) or "none"
        return (
            f"the model {model} is not allowed by the managed policy {self.path} (allowed_models: {allowed})"
        )

    def mcp_problem(self, server: str) -> str | None:
        """Why the MCP server `server` may not start, or None."""
        if self.mcp_allowlist is None or any(fnmatchcase(server, p) for p in self.mcp_allowlist):
            return None
        return f"[mcp] {server} is not started: it is not in mcp_allowlist of the managed policy {self.path}"

    @property
    def sandbox_note(self) -> str:
        return f'the managed policy {self.path} requires the sandbox (sandbox = "required")'

    @property
    def yolo_note(self) -> str:
        return f"yolo mode is disabled by the managed policy {self.path}"


def load_managed() -> ManagedPolicy | None:
    """The managed policy at `MANAGED_PATH`, None when there is none; a file that cannot
    be read or honoured is a `ConfigError` naming it."""
    path = MANAGED_PATH
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: the managed policy cannot be read ({exc.strerror})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: the managed policy is not valid TOML: {exc}") from None
    for key, value in data.items():
        if key in _LISTS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{path}: the managed policy key {key!r} must be a list of strings")
        elif key == "sandbox":
            if value not in SANDBOX_VALUES:
                raise ConfigError(
                    f"{path}: the managed policy key 'sandbox' must be \"required\", got {value!r}"
                )
        elif key in _FLAGS:
            if not isinstance(value, bool):
                raise ConfigError(f"{path}: the managed policy key {key!r} must be true or false")
        else:
            known = ", ".join((*_LISTS, *_FLAGS, "sandbox"))
            raise ConfigError(f"{path}: unknown managed policy key {key!r} (known: {known})")
    models = data.get("allowed_models")
    servers = data.get("mcp_allowlist")
    return ManagedPolicy(
        path,
        deny=tuple(data.get("deny", [])),
        allowed_models=tuple(models) if models is not None else None,
        disable_yolo=data.get("disable_yolo", False),
        allow_hooks=data.get("allow_hooks", True),
        allow_plugins=data.get("allow_plugins", True),
        mcp_allowlist=tuple(servers) if servers is not None else None,
        sandbox_required=data.get("sandbox") == "required",
        keys=dict(data),
    )


def allowed_servers(specs: list[T], problems: list[str], name: Callable[[T], str]) -> list[T]:
    """`specs` without the MCP servers the managed policy does not allow (each listed
    in `problems`)."""
    managed = load_managed()
    if managed is None:
        return specs
    kept: list[T] = []
    for spec in specs:
        problem = managed.mcp_problem(name(spec))
        if problem is None:
            kept.append(spec)
        else:
            problems.append(problem)
    return kept
