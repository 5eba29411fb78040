"""Where user hooks come from, and whether they may run.

Sources, all in Claude Code's shape (event → matcher groups → commands):
- the user's `config.toml` (`[[hooks.PreToolUse]]` …) and Claude Code's user settings
  (`~/.claude/settings.json`, unless `[compat] claude_home = false`): the user's own,
  always run;
- the project's `.wyckoff/config.toml`, `.claude/settings.json` and
  `.claude/settings.local.json` (the `hooks` key): a cloned repository's files, so
  they run only once the user trusted that file's hook configuration (storage/trust.py,
  kind `hooks`, the hash of the file's `hooks` section: other edits do not ask again,
  a changed hook configuration does).

A `.claude/settings.json` hook is a `command`, an `http` hook (the URL must match the
user's own `[hooks] allowed_urls`), a `prompt` hook (the session's model decides) or an
`agent` hook (a read-only sub-agent decides). Events or hook types Wyckoff does not have (e.g.
`PostToolUseFailure`, `"type": "prompt"`) are skipped and listed as problems
(`wyckoff hooks list` shows them), never an error that stops the session. The TOML
files are typed configuration: a wrong key there is an error naming file and line
(storage/config.py), raised when the workspace is opened.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from wyckoff_cli.core.claude_names import CLAUDE_TOOLS, WYCKOFF_TO_CLAUDE
from wyckoff_cli.runtime.claude_permissions import ClaudePermissions, read_permissions
from wyckoff_cli.runtime.plugin_root import substitute_root
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.claude_home import claude_user_dir
from wyckoff_cli.storage.config import build, read_toml
from wyckoff_cli.storage.config_extensions import HookMatcher, HooksConfig
from wyckoff_cli.storage.managed import load_managed
from wyckoff_cli.storage.plugins import SETTINGS_KIND, active_plugins, enabled_plugins_of
from wyckoff_cli.storage.trust import TrustState, TrustStore, canonical_hash

HOOK_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
    "PermissionRequest",
)
TRUST_KIND = "hooks"
STATUS_LINE = (
    "StatusLine"  # a settings file's `statusLine` command: trusted with its hooks, never a hook event
)
DEFAULT_TIMEOUT = 60.0

# Claude Code's tool names → Wyckoff's (one table: core/claude_names.py), so a matcher
# written for Claude Code selects the same tools here (`Bash` matches run_shell).
CLAUDE_TOOL_NAMES = CLAUDE_TOOLS
CLAUDE_NAME_OF = WYCKOFF_TO_CLAUDE


@dataclass(frozen=True, slots=True)
class HookSpec:
    event: str
    matcher: str
    command: str
    timeout: float
    file: Path
    source: str  # "user config", "project config", ".claude/settings.json", …
    project: bool  # from the project's files: needs trust
    claude: bool = False  # from a Claude Code file: gets Claude Code's names (runtime/claude_payload.py)
    kind: str = "command"  # "http" (`command` is the URL), "prompt" / "agent" (`command`: the prompt)
    headers: tuple[tuple[str, str], ...] = ()  # http: header name and value ($VAR from env_vars)
    env_vars: tuple[str, ...] = ()  # http: the variables header values may name
    plugin_root: str = ""  # a plugin's hook: its folder, as $CLAUDE_PLUGIN_ROOT

    def matches(self, value: str | None) -> bool:
        """Whether this hook runs for `value` (a tool name, a SessionStart source, a
        PreCompact trigger). Empty or `*` matches everything; otherwise the matcher is
        a regular expression matched against the whole value, or, for a tool, against
        Claude Code's name of it too."""
        if self.matcher in ("", "*") or value is None:
            return True
        candidates = [value]
        if value in CLAUDE_NAME_OF:
            candidates.append(CLAUDE_NAME_OF[value])
        try:
            pattern = re.compile(self.matcher)
        except re.error:
            return self.matcher in candidates
        return any(pattern.fullmatch(c) for c in candidates)


@dataclass
class HookFile:
    """One file's hooks and their trust."""

    path: Path
    source: str
    project: bool
    specs: list[HookSpec]
    digest: str
    state: TrustState | None = None  # None: the user's own file (no trust needed)
    permissions: ClaudePermissions | None = None  # what a Claude Code settings file widens
    plugins_digest: str = ""  # a project settings file's `enabledPlugins` (trust kind `plugins`)
    enables: tuple[str, ...] = ()  # the plugins it enables (NAME@MARKET), once trusted

    @property
    def grants(self) -> tuple[str, ...]:
        return self.permissions.grants() if self.permissions is not None else ()

    @property
    def runnable(self) -> bool:
        return self.state is None or self.state == "trusted"


@dataclass
class HookSet:
    root: Path
    files: list[HookFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    trusted_for_run: set[Path] = field(default_factory=set)  # trusted without a record
    allowed_urls: list[str] = field(default_factory=list)  # http hooks' URLs: the user's config only
    claude_deny: list[str] = field(default_factory=list)  # Claude Code settings' deny rules: always
    claude_ask: list[str] = field(default_factory=list)  # and ask rules: always (they only narrow)

    @property
    def specs(self) -> list[HookSpec]:
        return [spec for f in self.files for spec in f.specs]

    def runnable(self, event: str) -> list[HookSpec]:
        return [
            spec
            for f in self.files
            if f.runnable or f.path in self.trusted_for_run
            for spec in f.specs
            if spec.event == event
        ]

    def claude_permissions(self) -> ClaudePermissions:
        """The Claude Code settings' rules that apply now: deny and ask from every file,
        allow from the files trusted (or the user's own)."""
        merged = ClaudePermissions(deny=list(self.claude_deny), ask=list(self.claude_ask))
        for file in self.files:  # user files first: a project's local settings come last and win
            if file.permissions is not None and (file.runnable or file.path in self.trusted_for_run):
                merged.allow += file.permissions.allow
                merged.directories += file.permissions.directories
                merged.default_mode = file.permissions.default_mode or merged.default_mode
        return merged

    def needing_trust(self) -> list[HookFile]:
        """The project files whose hook configuration is not trusted (new or changed)."""
        return [f for f in self.files if not f.runnable and f.path not in self.trusted_for_run]

    def state_of(self, file: HookFile) -> str:
        if file.state is None:
            return "user"
        if file.path in self.trusted_for_run and file.state != "trusted":
            return "trusted for this run"
        return file.state


def load_hooks(root: Path, store: TrustStore | None = None, *, trust_settings: bool = False) -> HookSet:
    """Every hook the user and this project configure, with the project files' trust
    (`trust_settings`: the project's `enabledPlugins` count for this run)."""
    store = store or TrustStore()
    found = HookSet(root)
    managed = load_managed()
    if managed is not None and not managed.allow_hooks:
        found.problems.append(
            f"hooks are turned off by the managed policy {managed.path} (allow_hooks = false)"
        )
        return found
    user = paths.config_file()
    _add_toml(found, user, "user config", project=False, store=store)
    claude = claude_user_dir()
    if claude is not None:  # Claude Code's user settings: the user's own, no trust needed
        _add_claude(found, claude / "settings.json", "~/.claude/settings.json", store, project=False)
    _add_toml(found, paths.project_config_file(root), "project config", project=True, store=store)
    for name in ("settings.json", "settings.local.json"):
        _add_claude(found, root / ".claude" / name, f".claude/{name}", store)
    # installed plugins: trusted at install (storage/plugins.py)
    for plugin in active_plugins(root, trust_settings=trust_settings):
        if plugin.hooks_file is not None and plugin.hooks:
            source = f"plugin {plugin.name}"
            before = len(found.files)
            _add_claude_data(found, plugin.hooks_file, source, store, {"hooks": plugin.hooks}, project=True)
            for file in found.files[before:]:
                file.specs = [_in_plugin(spec, str(plugin.root)) for spec in file.specs]
    return found


def _in_plugin(spec: HookSpec, root: str) -> HookSpec:
    """A plugin's hook: its folder as `$CLAUDE_PLUGIN_ROOT`, and `${CLAUDE_PLUGIN_ROOT}` in a
    command replaced, quoted for its place (runtime/plugin_root.py)."""
    command = substitute_root(spec.command, root) if spec.kind == "command" else spec.command
    return replace(spec, command=command, plugin_root=root)


def trust_files(files: list[HookFile], store: TrustStore | None = None) -> None:
    """Record that the user trusted these files' hook configurations as they are now."""
    store = store or TrustStore()
    for file in files:
        store.trust(file.path, TRUST_KIND, file.digest)
        if file.plugins_digest:
            store.trust(file.path, SETTINGS_KIND, file.plugins_digest)
        file.state = "trusted"


def _add_toml(found: HookSet, path: Path, source: str, *, project: bool, store: TrustStore) -> None:
    try:
        data = read_toml(path)
    except Exception as exc:  # reported by load_config with file and line already
        found.problems.append(str(getattr(exc, "message", exc)))
        return
    if not data or not data.get("hooks"):
        return
    hooks = data["hooks"]
    try:
        config: HooksConfig = build(HooksConfig, hooks, path, "hooks.")
    except Exception as exc:
        found.problems.append(str(getattr(exc, "message", exc)))
        return
    if not project:
        found.allowed_urls = list(config.allowed_urls)
    specs = [
        HookSpec(event, group.matcher, command.command, command.timeout, path, source, project)
        for event in HOOK_EVENTS
        for group in getattr(config, event)
        for command in _commands(group)
    ]
    _add_file(found, path, source, project, specs, hooks, store)


def _commands(group: HookMatcher) -> list[Any]:
    return [c for c in group.hooks if c.command.strip()]


def _add_claude(found: HookSet, path: Path, source: str, store: TrustStore, *, project: bool = True) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return
    except OSError as exc:
        found.problems.append(f"{path}: cannot read it ({exc.strerror})")
        return
    try:
        data = json.loads(text)
    except ValueError as exc:
        found.problems.append(f"{path}: invalid JSON: {exc}")
        return
    if not isinstance(data, dict):
        found.problems.append(f"{path}: a settings file must be a JSON object")
        return
    _add_claude_data(found, path, source, store, data, project=project)


def _add_claude_data(
    found: HookSet, path: Path, source: str, store: TrustStore, data: dict[str, Any], *, project: bool
) -> None:
    permissions = read_permissions(data, str(path), found.problems)
    if permissions is not None:  # what narrows applies untrusted; what widens waits for trust
        found.claude_deny += permissions.deny
        found.claude_ask += permissions.ask
        for folder in permissions.directories:
            if not resolve_directory(folder, found.root).is_dir():
                found.problems.append(
                    f"{path}: permissions.additionalDirectories: {folder} is not a folder; skipped"
                )
    hooks = data.get("hooks") or {}
    if not isinstance(hooks, dict):
        found.problems.append(f"{path}: `hooks` must be an object of events")
        hooks = {}
    specs: list[HookSpec] = []
    for event, groups in hooks.items():
        if event not in HOOK_EVENTS:
            found.problems.append(f"{path}: the hook event {event!r} is not supported here; skipped")
            continue
        if not isinstance(groups, list):
            found.problems.append(f"{path}: hooks.{event} must be a list of matcher groups")
            continue
        for number, group in enumerate(groups):
            where = f"{path}: hooks.{event}[{number}]"
            if not isinstance(group, dict) or not isinstance(group.get("hooks", []), list):
                found.problems.append(f"{where} must be an object with a `hooks` list")
                continue
            matcher = group.get("matcher", "")
            if not isinstance(matcher, str):
                found.problems.append(f"{where}.matcher must be a string")
                continue
            for index, hook in enumerate(group.get("hooks", [])):
                spec = _claude_hook(hook, f"{where}.hooks[{index}]", event, matcher, path, source, found)
                if spec is not None:
                    specs.append(spec)
    status_line = _status_line(data.get("statusLine"), path, source, found)
    if status_line is not None:
        specs.append(status_line)
    if not project:
        specs = [replace(spec, project=False) for spec in specs]
    widening = permissions.widening if permissions is not None else {}
    raw: Any = {"hooks": hooks, "permissions": widening} if widening else hooks  # one trust for both
    if status_line is not None:  # the trust covers the status line command too
        raw = {"hooks": hooks, "permissions": widening, "statusLine": status_line.command}
    _add_file(found, path, source, project, specs, raw, store, permissions if widening else None)
    choices = enabled_plugins_of(path) if project and source.startswith(".claude/") else {}
    if any(choices.values()):  # enabling a plugin widens: it waits for the same trust
        enables = tuple(sorted(k for k, v in choices.items() if v))
        _add_plugin_choices(found, path, source, specs, raw, store, canonical_hash(choices), enables)


def _add_plugin_choices(
    found: HookSet,
    path: Path,
    source: str,
    specs: list[HookSpec],
    raw: Any,
    store: TrustStore,
    digest: str,
    enables: tuple[str, ...],
) -> None:
    file = next((f for f in found.files if f.path == path), None)
    if file is None:
        file = HookFile(
            path, source, True, specs, canonical_hash(raw), store.state(path, TRUST_KIND, canonical_hash(raw))
        )
        if not specs:
            file.state = "trusted"  # no hooks: only the plugin list decides
        found.files.append(file)
    file.plugins_digest = digest
    file.enables = enables
    plugins_state = store.state(path, SETTINGS_KIND, digest)
    if plugins_state != "trusted" and file.state == "trusted":
        file.state = plugins_state


def _claude_hook(
    hook: Any, where: str, event: str, matcher: str, path: Path, source: str, found: HookSet
) -> HookSpec | None:
    if not isinstance(hook, dict):
        found.problems.append(f"{where} must be an object")
        return None
    kind = hook.get("type", "command")
    if kind not in ("command", "http", "prompt", "agent"):
        found.problems.append(f"{where}: hooks of type {kind!r} are not supported here; skipped")
        return None
    timeout = hook.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        found.problems.append(f"{where}: `timeout` must be a positive number of seconds; using 60")
        timeout = DEFAULT_TIMEOUT
    if kind == "http":
        return _http_hook(hook, where, event, matcher, float(timeout), path, source, found)
    if kind in ("prompt", "agent"):
        prompt = hook.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            found.problems.append(f"{where}: a {kind} hook needs a non-empty `prompt`")
            return None
        return HookSpec(event, matcher, prompt, float(timeout), path, source, True, claude=True, kind=kind)
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        found.problems.append(f"{where}: `command` must be a non-empty string")
        return None
    return HookSpec(event, matcher, command, float(timeout), path, source, True, claude=True)


def resolve_directory(raw: str, root: Path) -> Path:
    """An `additionalDirectories` entry as a resolved path (relative to the workspace root)."""
    path = Path(raw).expanduser()
    return Path(os.path.realpath(path if path.is_absolute() else root / path))


def _status_line(value: Any, path: Path, source: str, found: HookSet) -> HookSpec | None:
    """A settings file's `statusLine` (`{"type": "command", "command": …}`) as a spec
    of the pseudo-event `StatusLine` (session/status_line.py runs it), or None."""
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("type", "command") != "command":
        found.problems.append(f'{path}: statusLine must be {{"type": "command", "command": "…"}}; skipped')
        return None
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        found.problems.append(f"{path}: statusLine.command must be a command; skipped")
        return None
    return HookSpec(STATUS_LINE, "", command, 5.0, path, source, True, claude=True)


def _add_file(
    found: HookSet,
    path: Path,
    source: str,
    project: bool,
    specs: list[HookSpec],
    raw: Any,
    store: TrustStore,
    permissions: ClaudePermissions | None = None,
) -> None:
    if not specs and permissions is None:
        return
    digest = canonical_hash(raw)
    state = store.state(path, TRUST_KIND, digest) if project else None
    found.files.append(HookFile(path, source, project, specs, digest, state, permissions))


def _http_hook(
    hook: dict[str, Any],
    where: str,
    event: str,
    matcher: str,
    timeout: float,
    path: Path,
    source: str,
    found: HookSet,
) -> HookSpec | None:
    url = hook.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        found.problems.append(f"{where}: an http hook needs a `url` starting with http:// or https://")
        return None
    if not any(fnmatchcase(url, pattern) for pattern in found.allowed_urls):
        found.problems.append(
            f"{where}: the hook URL {url} is not in `[hooks] allowed_urls` of your config.toml; skipped"
        )
        return None
    headers = hook.get("headers", {})
    names = hook.get("allowedEnvVars", [])
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        found.problems.append(f"{where}: `headers` must be an object of strings")
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        found.problems.append(f"{where}: `allowedEnvVars` must be a list of variable names")
        return None
    return HookSpec(
        event,
        matcher,
        url,
        timeout,
        path,
        source,
        True,
        claude=True,
        kind="http",
        headers=tuple((str(k), v) for k, v in headers.items()),
        env_vars=tuple(names),
    )
