"""Claude Code's plugin and marketplace files, read and checked (docs/PLUGINS.md).

A plugin is a folder with `.claude-plugin/plugin.json` — `name` (kebab-case, required),
`version`, `description`, `author` (a string or `{name, email, url}`) and the optional
component paths `commands`, `agents`, `skills` (a path or a list of paths, added to the
default folders), `hooks` (a path to a hooks file or the hooks object itself) and
`mcpServers` (a path to an `.mcp.json`-shaped file or the servers object) — and any of
the default parts: `commands/`, `agents/`, `skills/`, `hooks/hooks.json`, `.mcp.json`.

A marketplace is a folder with `.claude-plugin/marketplace.json`: `name`, `owner`
(`{name, email}`), `plugins` (each `name`, `source`, optional `description`, `version`,
`strict`; an entry that cannot be used is skipped and listed in `problems`, the others stay
usable); `metadata.pluginRoot` is the folder relative sources without `./` are under. A plugin
folder without `plugin.json` (Claude Code makes it optional) takes its name, version and
description from its entry, if it has any of the default parts.
A plugin's `source` is a relative path inside the marketplace (`"./plugins/x"`), a
GitHub repository (`{"source": "github", "repo": "owner/name", "ref"?}`) or any git URL
(`{"source": "url" | "git", "url": "…", "ref"?}`).

Every path a manifest names must stay inside its folder. Bad input is a `PluginError`
naming the file and the key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import WyckoffError

MANIFEST = Path(".claude-plugin") / "plugin.json"
MARKETPLACE = Path(".claude-plugin") / "marketplace.json"
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")  # kebab-case, as Claude Code asks
PLUGIN_ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"
DEFAULT_PARTS = ("commands", "agents", "skills", "hooks/hooks.json", ".mcp.json")


class PluginError(WyckoffError):
    """A plugin or marketplace cannot be read, fetched or installed."""

    exit_code = 2


@dataclass(frozen=True)
class PluginManifest:
    """One plugin folder's manifest and where its parts are."""

    root: Path
    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    command_paths: tuple[Path, ...] = ()
    agent_paths: tuple[Path, ...] = ()
    skill_paths: tuple[Path, ...] = ()
    hooks_file: Path | None = None  # the file the hooks come from (plugin.json when inline)
    hooks: dict[str, Any] = field(default_factory=dict)  # event → matcher groups (Claude Code's shape)
    mcp_file: Path | None = None
    mcp_servers: dict[str, Any] = field(default_factory=dict)  # name → `.mcp.json` entry


@dataclass(frozen=True)
class PluginSource:
    """Where a marketplace says a plugin is: a folder inside it, or a git repository."""

    kind: str  # "path" or "git"
    location: str  # the relative path, or the clone URL
    ref: str = ""

    def describe(self) -> str:
        return self.location + (f" ({self.ref})" if self.ref else "")


@dataclass(frozen=True)
class MarketplaceEntry:
    name: str
    source: PluginSource
    description: str = ""
    version: str = ""
    strict: bool = True  # read and kept; a plugin without a manifest takes the entry's either way


@dataclass(frozen=True)
class Marketplace:
    root: Path
    name: str
    owner: str
    plugins: tuple[MarketplaceEntry, ...]
    problems: tuple[str, ...] = ()  # entries skipped (a bad name or source): the others stay usable

    def get(self, name: str) -> MarketplaceEntry | None:
        return next((p for p in self.plugins if p.name == name), None)


def read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PluginError(f"{path}: no {what} here") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PluginError(f"{path}: cannot read the {what} ({exc})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PluginError(f"{path}, line {exc.lineno}: the {what} is not valid JSON: {exc.msg}") from None
    if not isinstance(data, dict):
        raise PluginError(f"{path}: the {what} must be a JSON object")
    return data


def inside(root: Path, relative: str, where: str) -> Path:
    """`relative` under `root`, refused when it leaves it (`..`, an absolute path, a link out)."""
    candidate = (root / relative).resolve()
    base = root.resolve()
    if Path(relative).is_absolute() or not candidate.is_relative_to(base):
        raise PluginError(f"{where}: the path {relative!r} leaves the folder {root}")
    return candidate


def check_name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not NAME.match(value):
        raise PluginError(
            f"{where}: `name` must be a kebab-case name (lower-case letters, digits, '-', '_', '.'), "
            f"got {value!r}"
        )
    return value


def _author(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("name"), str):
        email = value.get("email")
        return str(value["name"]) + (f" <{email}>" if isinstance(email, str) and email else "")
    return ""


def _text(data: dict[str, Any], key: str, where: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise PluginError(f"{where}: `{key}` must be a string, got {value!r}")
    return value


def _paths(root: Path, data: dict[str, Any], key: str, default: str, where: str) -> tuple[Path, ...]:
    value = data.get(key, [])
    listed = [value] if isinstance(value, str) else value
    if not isinstance(listed, list) or not all(isinstance(v, str) for v in listed):
        raise PluginError(f"{where}: `{key}` must be a path or a list of paths, got {value!r}")
    found = [root / default] if (root / default).exists() else []
    for item in listed:
        path = inside(root, item, f"{where}: {key}")
        if not path.exists():
            raise PluginError(f"{where}: `{key}` names {item!r}, which does not exist")
        if path not in found:
            found.append(path)
    return tuple(found)


def _hooks(root: Path, data: dict[str, Any], where: str) -> tuple[Path | None, dict[str, Any]]:
    value = data.get("hooks")
    if isinstance(value, dict):
        inner = value.get("hooks", value)
        if not isinstance(inner, dict):
            raise PluginError(f"{where}: `hooks.hooks` must be an object of events")
        return root / MANIFEST, inner
    if value is not None and not isinstance(value, str):
        raise PluginError(f"{where}: `hooks` must be a path to a hooks file or an object, got {value!r}")
    path = inside(root, value, f"{where}: hooks") if value else root / "hooks" / "hooks.json"
    if not path.is_file():
        if value:
            raise PluginError(f"{where}: `hooks` names {value!r}, which does not exist")
        return None, {}
    hooks = read_json(path, "hooks file").get("hooks", {})
    if not isinstance(hooks, dict):
        raise PluginError(f"{path}: `hooks` must be an object of events")
    return path, hooks


def _servers(root: Path, data: dict[str, Any], where: str) -> tuple[Path | None, dict[str, Any]]:
    value = data.get("mcpServers")
    if isinstance(value, dict):
        return root / MANIFEST, value
    if value is not None and not isinstance(value, str):
        raise PluginError(f"{where}: `mcpServers` must be a path or an object, got {value!r}")
    path = inside(root, value, f"{where}: mcpServers") if value else root / ".mcp.json"
    if not path.is_file():
        if value:
            raise PluginError(f"{where}: `mcpServers` names {value!r}, which does not exist")
        return None, {}
    file = read_json(path, "MCP server file")
    servers = file.get("mcpServers", file)
    if not isinstance(servers, dict) or not all(isinstance(v, dict) for v in servers.values()):
        raise PluginError(f"{path}: `mcpServers` must be an object of servers")
    return path, servers


def read_plugin(root: Path, entry: MarketplaceEntry | None = None) -> PluginManifest:
    """The plugin in `root`. Without `.claude-plugin/plugin.json` (optional in Claude Code)
    its marketplace entry stands in, when the folder has plugin parts at all."""
    manifest = root / MANIFEST
    if manifest.is_file() or entry is None:
        data = read_json(manifest, "plugin manifest (.claude-plugin/plugin.json)")
    elif not any((root / part).exists() for part in DEFAULT_PARTS):
        raise PluginError(
            f"{manifest}: no plugin manifest (.claude-plugin/plugin.json) and none of "
            f"{', '.join(DEFAULT_PARTS)}: this folder is not a plugin"
        )
    else:  # Claude Code makes the manifest optional: the marketplace entry stands in
        data = {"name": entry.name, "version": entry.version, "description": entry.description}
    where = str(manifest)
    name = check_name(data.get("name"), where)
    hooks_file, hooks = _hooks(root, data, where)
    mcp_file, servers = _servers(root, data, where)
    return PluginManifest(
        root=root,
        name=name,
        version=_text(data, "version", where),
        description=_text(data, "description", where),
        author=_author(data.get("author")),
        command_paths=_paths(root, data, "commands", "commands", where),
        agent_paths=_paths(root, data, "agents", "agents", where),
        skill_paths=_paths(root, data, "skills", "skills", where),
        hooks_file=hooks_file,
        hooks=hooks,
        mcp_file=mcp_file,
        mcp_servers=servers,
    )


def _source(value: Any, where: str, plugin_root: str) -> PluginSource:
    if isinstance(value, str):
        relative = value if value.startswith(("./", "../")) or not plugin_root else f"{plugin_root}/{value}"
        return PluginSource("path", relative)
    if isinstance(value, dict):
        kind = value.get("source")
        ref = value.get("ref", "")
        if not isinstance(ref, str):
            raise PluginError(f"{where}: source.ref must be a string")
        if kind == "github":
            repo = value.get("repo")
            if not isinstance(repo, str) or not re.fullmatch(r"[\w.-]+/[\w.-]+", repo):
                raise PluginError(f"{where}: a github source needs `repo` as OWNER/NAME, got {repo!r}")
            return PluginSource("git", f"https://github.com/{repo}.git", ref)
        if kind in ("url", "git"):
            url = value.get("url")
            if not isinstance(url, str) or not url:
                raise PluginError(f"{where}: a {kind} source needs `url`")
            return PluginSource("git", url, ref)
        raise PluginError(f"{where}: source.source must be 'github', 'url' or 'git', got {kind!r}")
    raise PluginError(f"{where}: `source` must be a relative path or an object, got {value!r}")


def read_marketplace(root: Path) -> Marketplace:
    path = root / MARKETPLACE
    data = read_json(path, "marketplace file (.claude-plugin/marketplace.json)")
    where = str(path)
    name = check_name(data.get("name"), where)
    owner = data.get("owner")
    if not isinstance(owner, dict) or not isinstance(owner.get("name"), str):
        raise PluginError(f"{where}: `owner` must be an object with a `name`")
    metadata = data.get("metadata", {})
    plugin_root = metadata.get("pluginRoot", "") if isinstance(metadata, dict) else ""
    if not isinstance(plugin_root, str):
        raise PluginError(f"{where}: metadata.pluginRoot must be a string")
    plugin_root = plugin_root.removeprefix("./").rstrip("/")
    listed = data.get("plugins")
    if not isinstance(listed, list):
        raise PluginError(f"{where}: `plugins` must be a list")
    entries: list[MarketplaceEntry] = []
    problems: list[str] = []
    for number, item in enumerate(listed):
        try:
            entry = _entry(item, f"{where}: plugins[{number}]", plugin_root)
        except PluginError as exc:
            problems.append(f"{exc.message}; that entry is skipped")
            continue
        if any(e.name == entry.name for e in entries):
            problems.append(
                f"{where}: plugins[{number}]: the plugin name {entry.name!r} is listed twice; skipped"
            )
            continue
        entries.append(entry)
    return Marketplace(root, name, _author(owner), tuple(entries), tuple(problems))


def _entry(item: Any, at: str, plugin_root: str) -> MarketplaceEntry:
    if not isinstance(item, dict):
        raise PluginError(f"{at} must be an object")
    entry_name = check_name(item.get("name"), at)
    strict = item.get("strict", True)
    if not isinstance(strict, bool):
        raise PluginError(f"{at}: `strict` must be true or false")
    return MarketplaceEntry(
        entry_name,
        _source(item.get("source"), at, plugin_root),
        _text(item, "description", at),
        _text(item, "version", at),
        strict,
    )
