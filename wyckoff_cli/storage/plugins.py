"""Installed plugins and known marketplaces, under the user's data folder.

`DATA/plugins/plugins.json` records the marketplaces (`local` ones are read where they
are; `git` and `archive` ones are copied to `DATA/plugins/marketplaces/NAME`) and the
installed plugins (each copied to `DATA/plugins/installed/NAME`, with its marketplace,
version and enabled state). Everything is staged in `DATA/plugins/.staging/` and moved
into place with one rename once it is complete and valid, so a failure installs nothing.

Which plugins a session uses (`active_plugins`): the installed, enabled ones, with
Claude Code's `enabledPlugins` (`{"NAME@MARKET": true|false}`) from `~/.claude/settings.json`
(the user's own) and from the project's `.claude/settings.json` / `settings.local.json`,
whose `false` always applies and whose `true` applies once the user trusted that file's
list (trust kind `plugins`, recorded with its hooks by `wyckoff hooks trust`). The managed
policy's `allow_plugins = false` turns every plugin off. A plugin's hooks and MCP servers
run only once the user trusted them (recorded at install: `plugin_trust_records`).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from wyckoff_cli.storage import paths
from wyckoff_cli.storage.atomic import write_atomic
from wyckoff_cli.storage.claude_home import claude_user_dir
from wyckoff_cli.storage.managed import load_managed
from wyckoff_cli.storage.plugin_manifest import (
    MANIFEST,
    Marketplace,
    MarketplaceEntry,
    PluginError,
    PluginManifest,
    inside,
    read_marketplace,
    read_plugin,
)
from wyckoff_cli.storage.plugin_sources import (
    MarketSource,
    copy_tree,
    fetch_marketplace,
    git_clone,
    marketplace_root,
)
from wyckoff_cli.storage.trust import TrustState, TrustStore, canonical_hash

VERSION = 1
HOOKS_KIND = "hooks"  # the same records as a project's hook files (runtime/hook_config.py)
MCP_KIND = "plugin-mcp"
SETTINGS_KIND = "plugins"  # a project settings file's `enabledPlugins`


def plugins_dir() -> Path:
    return paths.plugins_dir()


def registry_file() -> Path:
    return plugins_dir() / "plugins.json"


@dataclass(frozen=True)
class InstalledPlugin:
    name: str
    marketplace: str
    version: str
    enabled: bool
    root: Path

    @property
    def key(self) -> str:
        return f"{self.name}@{self.marketplace}"


@dataclass
class Registry:
    marketplaces: dict[str, MarketSource] = field(default_factory=dict)
    plugins: dict[str, InstalledPlugin] = field(default_factory=dict)


def load_registry() -> Registry:
    file = registry_file()
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Registry()
    except (OSError, ValueError) as exc:
        raise PluginError(f"{file}: the plugin records cannot be read ({exc})") from None
    registry = Registry()
    for name, item in (data.get("marketplaces") or {}).items():
        registry.marketplaces[name] = MarketSource(
            str(item["kind"]), str(item["location"]), str(item.get("sha256", "")), str(item.get("ref", ""))
        )
    for name, item in (data.get("plugins") or {}).items():
        registry.plugins[name] = InstalledPlugin(
            name,
            str(item["marketplace"]),
            str(item.get("version", "")),
            bool(item["enabled"]),
            installed_dir(name),
        )
    return registry


def save_registry(registry: Registry) -> None:
    data = {
        "version": VERSION,
        "marketplaces": {
            name: {"kind": s.kind, "location": s.location, "sha256": s.sha256, "ref": s.ref}
            for name, s in sorted(registry.marketplaces.items())
        },
        "plugins": {
            name: {"marketplace": p.marketplace, "version": p.version, "enabled": p.enabled}
            for name, p in sorted(registry.plugins.items())
        },
    }
    write_atomic(registry_file(), json.dumps(data, indent=2) + "\n")


def installed_dir(name: str) -> Path:
    return plugins_dir() / "installed" / name


def market_dir(name: str) -> Path:
    return plugins_dir() / "marketplaces" / name


def staging() -> Path:
    """A fresh, empty staging folder beside the final places (same file system: a rename)."""
    base = paths.ensure_private_dir(plugins_dir() / ".staging")
    return Path(tempfile.mkdtemp(dir=base))


def swap_in(new: Path, final: Path) -> None:
    """Put the folder `new` at `final`, replacing what is there, never leaving it half made."""
    paths.ensure_private_dir(final.parent)
    old: Path | None = None
    if final.exists():
        old = final.with_name(f".{final.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        final.rename(old)
    try:
        new.rename(final)
    except OSError:
        if old is not None:
            old.rename(final)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


# --------------------------------------------------------------------------- marketplaces


def marketplace_folder(name: str, source: MarketSource) -> Path:
    return Path(source.location) if source.kind == "local" else market_dir(name)


def open_marketplace(name: str, registry: Registry | None = None) -> Marketplace:
    registry = registry or load_registry()
    source = registry.marketplaces.get(name)
    if source is None:
        known = ", ".join(sorted(registry.marketplaces)) or "none; `wyckoff plugin marketplace add SOURCE`"
        raise PluginError(f"no marketplace named {name!r} (known: {known})")
    folder = marketplace_folder(name, source)
    return read_marketplace(marketplace_root(folder, str(folder)))


def add_marketplace(source: MarketSource) -> Marketplace:
    """Fetch and record a marketplace; a name already known is refused."""
    registry = load_registry()
    stage: Path | None = None
    try:
        if source.kind == "local":
            folder = marketplace_root(Path(source.location), source.location)
            source = MarketSource("local", str(folder))
        else:
            stage = staging()
            fetch_marketplace(source, stage / "market")
            folder = marketplace_root(stage / "market", source.location)
        market = read_marketplace(folder)
        if market.name in registry.marketplaces:
            raise PluginError(
                f"a marketplace named {market.name!r} is already known "
                f"({registry.marketplaces[market.name].describe()}); remove it first"
            )
        if stage is not None:
            swap_in(folder, market_dir(market.name))
        registry.marketplaces[market.name] = source
        save_registry(registry)
        return read_marketplace(marketplace_root(marketplace_folder(market.name, source), market.name))
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)


def refresh_marketplace(name: str) -> None:
    """Fetch a git marketplace again (a local one is read in place; an archive is pinned)."""
    registry = load_registry()
    source = registry.marketplaces[name]
    if source.kind != "git":
        return
    stage = staging()
    try:
        fetch_marketplace(source, stage / "market")
        folder = marketplace_root(stage / "market", source.location)
        if read_marketplace(folder).name != name:
            raise PluginError(f"{source.location}: the marketplace is no longer named {name!r}")
        swap_in(folder, market_dir(name))
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def remove_marketplace(name: str) -> None:
    registry = load_registry()
    if name not in registry.marketplaces:
        open_marketplace(name, registry)  # the error naming the known ones
    using = sorted(p.name for p in registry.plugins.values() if p.marketplace == name)
    if using:
        raise PluginError(
            f"plugins installed from {name!r} remain ({', '.join(using)}); `wyckoff plugin remove` them first"
        )
    del registry.marketplaces[name]
    save_registry(registry)
    shutil.rmtree(market_dir(name), ignore_errors=True)


# --------------------------------------------------------------------------- plugins


@dataclass
class StagedPlugin:
    """A plugin fetched and checked, waiting for the user's yes (then `install_staged`)."""

    manifest: PluginManifest
    marketplace: str
    entry: MarketplaceEntry
    stage: Path

    def discard(self) -> None:
        shutil.rmtree(self.stage, ignore_errors=True)


def find_entry(spec: str, registry: Registry) -> tuple[Marketplace, MarketplaceEntry]:
    """`NAME@MARKET`, or `NAME` when exactly one marketplace lists it."""
    name, _, market_name = spec.partition("@")
    names = [market_name] if market_name else sorted(registry.marketplaces)
    found: list[tuple[Marketplace, MarketplaceEntry]] = []
    for each in names:
        market = open_marketplace(each, registry)
        entry = market.get(name)
        if entry is not None:
            found.append((market, entry))
    if not found:
        where = f"the marketplace {market_name!r}" if market_name else "any known marketplace"
        raise PluginError(f"no plugin named {name!r} in {where}")
    if len(found) > 1:
        markets = ", ".join(f"{name}@{m.name}" for m, _ in found)
        raise PluginError(f"{name!r} is in several marketplaces; name one: {markets}")
    return found[0]


def stage_plugin(spec: str, *, updating: bool = False) -> StagedPlugin:
    """Fetch the plugin `spec` names into a staging folder and check it; nothing is
    installed yet. A name clash with another installed plugin is refused."""
    policy_check()
    registry = load_registry()
    market, entry = find_entry(spec, registry)
    current = registry.plugins.get(entry.name)
    if current is not None and not updating:
        if current.marketplace == market.name:
            raise PluginError(f"{current.key} is already installed; `wyckoff plugin update {entry.name}`")
        raise PluginError(
            f"a plugin named {entry.name!r} is already installed from {current.marketplace!r}; "
            f"`wyckoff plugin remove {entry.name}` first"
        )
    stage = staging()
    try:
        target = stage / entry.name
        if entry.source.kind == "path":
            copy_tree(
                inside(market.root, entry.source.location, f"{market.name}: {entry.name}.source"), target
            )
        else:
            git_clone(entry.source.location, target, entry.source.ref)
        read_plugin(target, entry)  # checked before anything is written into the copy
        if not (target / MANIFEST).is_file():  # the entry stood in: keep it beside the copy
            write_atomic(target / MANIFEST, json.dumps(entry_manifest(entry), indent=2) + "\n", mode=0o644)
        manifest = read_plugin(target, entry)
        if manifest.name != entry.name:
            raise PluginError(
                f"{market.name}: the entry {entry.name!r} holds a plugin named {manifest.name!r} "
                "(the names must match)"
            )
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return StagedPlugin(manifest, market.name, entry, stage)


def entry_manifest(entry: MarketplaceEntry) -> dict[str, str]:
    return {"name": entry.name, "version": entry.version, "description": entry.description}


def install_staged(staged: StagedPlugin, *, trust: bool) -> InstalledPlugin:
    """Move a staged plugin into place (one rename) and record it; `trust` records
    that the user trusted its hooks and MCP servers as listed."""
    registry = load_registry()
    try:
        final = installed_dir(staged.manifest.name)
        swap_in(staged.stage / staged.manifest.name, final)
    finally:
        staged.discard()
    previous = registry.plugins.get(staged.manifest.name)
    plugin = InstalledPlugin(
        staged.manifest.name,
        staged.marketplace,
        staged.manifest.version or staged.entry.version,
        previous.enabled if previous is not None else True,
        final,
    )
    registry.plugins[plugin.name] = plugin
    save_registry(registry)
    if trust:
        trust_plugin(read_plugin(final, staged.entry))
    return plugin


def remove_plugin(name: str) -> InstalledPlugin:
    registry = load_registry()
    plugin = installed(name, registry)
    store = TrustStore()
    for path, kind, _ in plugin_trust_records(read_plugin_quietly(plugin.root)):
        store.revoke(path, kind)
    del registry.plugins[name]
    save_registry(registry)
    shutil.rmtree(plugin.root, ignore_errors=True)
    return plugin


def set_enabled(name: str, enabled: bool) -> InstalledPlugin:
    registry = load_registry()
    plugin = installed(name, registry)
    registry.plugins[name] = InstalledPlugin(
        plugin.name, plugin.marketplace, plugin.version, enabled, plugin.root
    )
    save_registry(registry)
    return registry.plugins[name]


def installed(name: str, registry: Registry | None = None) -> InstalledPlugin:
    registry = registry or load_registry()
    plugin = registry.plugins.get(name.partition("@")[0])
    if plugin is None:
        names = ", ".join(sorted(registry.plugins)) or "none"
        raise PluginError(f"no installed plugin named {name!r} (installed: {names})")
    return plugin


def read_plugin_quietly(root: Path) -> PluginManifest | None:
    try:
        return read_plugin(root)
    except PluginError:
        return None


# --------------------------------------------------------------------------- trust


def plugin_trust_records(manifest: PluginManifest | None) -> list[tuple[Path, str, str]]:
    """(path, kind, digest) of what a plugin runs: its hooks (the same record a
    project's hook file has) and its MCP servers."""
    if manifest is None:
        return []
    records: list[tuple[Path, str, str]] = []
    if manifest.hooks_file is not None and manifest.hooks:
        records.append((manifest.hooks_file, HOOKS_KIND, canonical_hash(manifest.hooks)))
    if manifest.mcp_servers:
        records.append((manifest.root, MCP_KIND, canonical_hash(manifest.mcp_servers)))
    return records


def trust_plugin(manifest: PluginManifest, store: TrustStore | None = None) -> None:
    store = store or TrustStore()
    for path, kind, digest in plugin_trust_records(manifest):
        store.trust(path, kind, digest)


def mcp_state(manifest: PluginManifest, store: TrustStore | None = None) -> TrustState:
    return (store or TrustStore()).state(manifest.root, MCP_KIND, canonical_hash(manifest.mcp_servers))


# --------------------------------------------------------------------------- what a session uses


def policy_check() -> None:
    managed = load_managed()
    if managed is not None and not managed.allow_plugins:
        raise PluginError(
            f"plugins are turned off by the managed policy {managed.path} (allow_plugins = false)"
        )


def settings_choices(
    root: Path, store: TrustStore | None = None, *, trust_settings: bool = False
) -> tuple[dict[str, bool], list[str]]:
    """Claude Code's `enabledPlugins` that apply here, and notes on those that do not.
    `trust_settings`: the project's settings files count as trusted for this run
    (`wyckoff run --trust-hooks`; nothing is recorded)."""
    store = store or TrustStore()
    chosen: dict[str, bool] = {}
    notes: list[str] = []
    claude = claude_user_dir()
    files = [(claude / "settings.json", False)] if claude is not None else []
    files += [(root / ".claude" / name, True) for name in ("settings.json", "settings.local.json")]
    for path, project in files:
        choices = enabled_plugins_of(path)
        if not choices:
            continue
        trusted = (
            not project
            or trust_settings
            or store.state(path, SETTINGS_KIND, canonical_hash(choices)) == "trusted"
        )
        for key, value in choices.items():
            if value and not trusted:
                notes.append(f"{path}: enabledPlugins {key} waits for trust (`wyckoff hooks trust`)")
                continue
            chosen[key] = value
    return chosen, notes


def enabled_plugins_of(path: Path) -> dict[str, bool]:
    """A Claude Code settings file's `enabledPlugins` (empty when absent or unreadable:
    runtime/hook_config.py reports an unreadable settings file)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    value = data.get("enabledPlugins") if isinstance(data, dict) else None
    if not isinstance(value, dict):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, bool)}


def active_plugins(root: Path, *, trust_settings: bool = False) -> list[PluginManifest]:
    """The plugins a session in `root` uses, by name (see the module's docstring);
    `trust_settings` as in `settings_choices`."""
    managed = load_managed()
    if managed is not None and not managed.allow_plugins:
        return []
    try:
        registry = load_registry()
    except PluginError:
        return []
    chosen, _ = settings_choices(root, trust_settings=trust_settings)
    active: list[PluginManifest] = []
    for name in sorted(registry.plugins):
        plugin = registry.plugins[name]
        enabled = chosen.get(plugin.key, chosen.get(plugin.name, plugin.enabled))
        manifest = read_plugin_quietly(plugin.root) if enabled else None
        if manifest is not None:
            active.append(manifest)
    return active
