"""`/plugins`: the installed plugins, what each brings and whether this session uses
it; `/plugins enable NAME` and `/plugins disable NAME` (installing asks the questions of
`wyckoff plugin install`, so it stays on the command line)."""

from __future__ import annotations

from pathlib import Path

from wyckoff_cli.context.plugin_listing import list_plugin
from wyckoff_cli.core import events as ev
from wyckoff_cli.storage import plugins
from wyckoff_cli.storage.managed import load_managed
from wyckoff_cli.storage.plugin_manifest import PluginError

USAGE = "Usage: /plugins, /plugins enable NAME, /plugins disable NAME"


def plugins_output(root: Path, argument: str) -> ev.RuntimeEvent:
    verb, _, name = argument.strip().partition(" ")
    try:
        if verb in ("enable", "disable") and name.strip():
            plugin = plugins.set_enabled(name.strip(), verb == "enable")
            state = "enabled" if plugin.enabled else "disabled"
            return ev.Notice(
                "info",
                f"{plugin.key} is {state}; its commands follow now, its hooks, MCP servers, agents "
                "and skills from the next session (/clear)",
            )
        if verb:
            return ev.Notice("warning", USAGE)
        return _listing(root)
    except PluginError as exc:
        return ev.Notice("error", exc.message)


def _listing(root: Path) -> ev.RuntimeEvent:
    registry = plugins.load_registry()
    managed = load_managed()
    notes: list[str] = []
    if managed is not None and not managed.allow_plugins:
        notes.append(f"Plugins are turned off by the managed policy {managed.path} (allow_plugins = false).")
    if not registry.plugins:
        notes.append("No plugins installed: `wyckoff plugin install NAME@MARKETPLACE` installs one.")
        return ev.Notice("info", "\n".join(notes))
    used = {m.name for m in plugins.active_plugins(root)}
    _, waiting = plugins.settings_choices(root)
    rows: list[list[str]] = []
    for name, plugin in sorted(registry.plugins.items()):
        manifest = plugins.read_plugin_quietly(plugin.root)
        if manifest is None:
            rows.append([plugin.key, plugin.version, "unreadable: reinstall it", "", ""])
            continue
        listing = list_plugin(manifest)
        parts = [
            f"{len(listing.commands)} commands",
            f"{len(listing.agents)} agents",
            f"{len(listing.skills)} skills",
            f"{len(listing.hooks)} hooks",
            f"{len(listing.servers)} MCP servers",
        ]
        state = "in use" if name in used else "enabled, off here" if plugin.enabled else "disabled"
        rows.append(
            [plugin.key, plugin.version or "-", state, ", ".join(parts), f"{listing.context_tokens:,}"]
        )
    return ev.CommandOutput(
        "plugins",
        title="Plugins",
        text="\n".join([*notes, *waiting]),
        columns=["plugin", "version", "state", "brings", "context tokens"],
        rows=rows,
    )
