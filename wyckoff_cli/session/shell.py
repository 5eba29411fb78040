"""The session's shell: sandbox and environment settings from `[shell]`, the start-up
notice, and the check that every permission rule names a tool that exists.

Called by the SessionBuilder (builder.py) and the commands that start sessions.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from wyckoff_cli.core.errors import ConfigError, WyckoffError
from wyckoff_cli.tools.permissions.domains import parse_allowed_domains
from wyckoff_cli.tools.permissions.policy import known_tool_hint, unknown_tool_rules
from wyckoff_cli.tools.permissions.sandbox import (
    SANDBOX_MODES,
    SandboxMode,
    ShellSettings,
    resolve_git_dirs,
    sandbox_status,
)
from wyckoff_cli.tools.permissions.sandbox_mounts import MountPoints

if TYPE_CHECKING:
    from wyckoff_cli.storage.config import Config
    from wyckoff_cli.tools.registry import ToolRegistry

# Keys a project's own `.wyckoff/config.toml` may not set: they would loosen the
# sandbox for everyone who opens the project (a cloned repository could ship them).
LOOSENING_KEYS = (
    "sandbox", "network", "writable_roots", "env_keep", "allow_unix_sockets", "auto_allow", "allowed_domains",
)  # fmt: skip


def shell_settings(config: Config, root: Path, sandbox: str | None = None) -> ShellSettings:
    """`[shell]` from the user config (the project file may only tighten it), `sandbox`
    (`--sandbox`) overriding the mode; a sandbox that cannot start here is off, with
    the reason in `notice`."""
    from wyckoff_cli.storage import paths
    from wyckoff_cli.storage.config import read_toml

    shell = config.shell
    mode: str = shell.sandbox
    network, roots, keep = shell.network, list(shell.writable_roots), list(shell.env_keep)
    sockets, auto_allow = list(shell.allow_unix_sockets), shell.auto_allow
    domains = list(shell.allowed_domains)
    notes: list[str] = []
    project = read_toml(paths.project_config_file(root)) or {}
    project_shell = project.get("shell", {}) if isinstance(project.get("shell"), dict) else {}
    ignored = [key for key in LOOSENING_KEYS if key in project_shell]
    if ignored:
        user = read_toml(paths.config_file()) or {}
        user_shell = user.get("shell", {}) if isinstance(user.get("shell"), dict) else {}
        mode = user_shell.get("sandbox", "workspace-write") if "sandbox" in ignored else mode
        if project_shell.get("sandbox") == "read-only":
            mode = "read-only"  # tightening is fine
        network = bool(user_shell.get("network", False)) if "network" in ignored else network
        roots = list(user_shell.get("writable_roots", [])) if "writable_roots" in ignored else roots
        keep = list(user_shell.get("env_keep", [])) if "env_keep" in ignored else keep
        if "allow_unix_sockets" in ignored:
            sockets = list(user_shell.get("allow_unix_sockets", []))
        auto_allow = bool(user_shell.get("auto_allow", False)) if "auto_allow" in ignored else auto_allow
        if "allowed_domains" in ignored:
            domains = list(user_shell.get("allowed_domains", []))
        notes.append(
            f"the project's .wyckoff/config.toml may not loosen [shell] ({', '.join(ignored)} ignored)"
        )
    if sandbox is not None:
        if sandbox not in SANDBOX_MODES:
            raise ConfigError(f"--sandbox must be one of {', '.join(SANDBOX_MODES)}, got {sandbox!r}")
        mode = sandbox
    required = _required_sandbox()
    if required and mode == "off":
        notes.append(f'[shell] sandbox = "off" is overridden: {required}')
        mode = "workspace-write"
    effective, notice = sandbox_status(cast(SandboxMode, mode))
    if required and effective == "off":
        notice = f"shell commands are refused: {required}, and {notice.removeprefix('shell sandbox off: ')}"
        notice = notice.split(". Commands run with your rights")[0]
    hidden = tuple(p for p in (paths.config_dir(), paths.data_dir(), paths.cache_dir()))
    return ShellSettings(
        sandbox=effective,
        network=network,
        writable_roots=tuple(Path(r).expanduser() for r in roots),
        hidden=hidden,
        env_keep=tuple(keep),
        env_remove=tuple(shell.env_remove),
        notice="; ".join([*notes, notice] if notice else notes),
        allow_unix_sockets=tuple(Path(s).expanduser() for s in sockets),
        auto_allow=auto_allow,
        git_dirs=resolve_git_dirs(root),  # once, from Wyckoff's side, at session start
        mounts=MountPoints(paths.cache_dir() / "sandbox"),
        allowed_domains=parse_allowed_domains(domains) if domains else None,
        required_by=required,
    )


def _required_sandbox() -> str:
    """The managed policy's note when it requires the sandbox, else ""."""
    from wyckoff_cli.storage.managed import load_managed

    managed = load_managed()
    return managed.sandbox_note if managed is not None and managed.sandbox_required else ""


def shell_notice(registry: ToolRegistry) -> str:
    """The one-line start-up notice about the shell sandbox ("" when it is on)."""
    settings = registry_shell(registry)
    return settings.notice if settings is not None else ""


def registry_shell(registry: ToolRegistry) -> ShellSettings | None:
    """The settings the registry's `run_shell` runs under."""
    tool = registry.get("run_shell")
    settings = tool.extra.get("shell") if tool is not None else None
    return settings if isinstance(settings, ShellSettings) else None


def shell_of(session: Any, builder: Any) -> ShellSettings | None:
    """The shell settings `session` (a built `Session`) runs under, or before it is built,
    those `builder` (its `SessionBuilder`) would use; None when they cannot be read."""
    if session is not None:
        return registry_shell(session.registry)
    try:
        settings: ShellSettings = builder.shell()
    except WyckoffError:
        return None
    return settings


def auto_allow_line(settings: ShellSettings | None, mode: str) -> str:
    """`/permissions`' line on sandbox auto-allow."""
    auto = sandbox_auto_allow(settings, mode)
    if not auto:
        return "Sandbox auto-allow: off ([shell] auto_allow = true, or the auto mode, turns it on)"
    return f"Sandbox auto-allow: {'on' if auto == 'sandbox auto-allow' else auto} (mode {mode})"


def sandbox_auto_allow(settings: ShellSettings | None, mode: str) -> str:
    """How sandbox auto-allow stands for the status bar and `/permissions`: "" when
    it is off, else a few words (on, or asked for but the sandbox is off)."""
    if settings is None or mode not in ("default", "auto-edit", "auto"):
        return ""
    if mode != "auto" and not settings.auto_allow:
        return ""
    if not settings.sandboxed:
        return "sandbox off: commands ask"
    if settings.network:
        return "sandbox has the network: commands ask"
    return "sandbox auto-allow"


def session_tool_names() -> list[str]:
    """The tools a session has before MCP servers start: the built-ins, the
    context's own (`remember`) and what rules name for MCP servers' requests
    (`McpSampling`, `McpElicitation`)."""
    from wyckoff_cli.tools.builtin import default_registry
    from wyckoff_cli.tools.mcp.server_asks import PSEUDO_TOOLS

    return [*default_registry().names(), "remember", *PSEUDO_TOOLS]


def protected_roots() -> tuple[Path, ...]:
    from wyckoff_cli.storage.paths import config_dir

    return (config_dir(),)


def check_rule_tools(files: Iterable[Path], rules: Iterable[str], known: Iterable[str]) -> None:
    """Raise `ConfigError` for a rule naming a tool that does not exist, naming the
    file and line it comes from (or `--allow`)."""
    known = list(known)
    unknown = unknown_tool_rules(rules, known)
    if not unknown:
        return
    rule = unknown[0]
    where = "--allow"
    for path in reversed(list(files)):
        line = _line_of(path, rule)
        if line is not None:
            where = f"{path}, line {line}"
            break
    raise ConfigError(
        f"{where}: the rule {rule!r} names a tool that does not exist. Known tools: {known_tool_hint(known)}"
    )


def _line_of(path: Path, rule: str) -> int | None:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for number, line in enumerate(lines, 1):
        if rule in line:
            return number
    return None
