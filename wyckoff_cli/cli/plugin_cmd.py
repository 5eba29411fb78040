"""`wyckoff plugin …`: Claude Code plugins and their marketplaces (docs/PLUGINS.md).

- `marketplace add SOURCE [--sha256 HEX]` (a folder, a git URL, GitHub's OWNER/NAME, or
  an archive URL pinned by its SHA-256), `marketplace list`, `marketplace remove NAME`;
- `install NAME[@MARKET] [--yes]`: fetch and check the plugin, list what it brings
  (hooks, MCP servers, commands, agents, skills, and the context its agents and skills
  cost), then ask; yes installs it and trusts its hooks and MCP servers as listed
  (`--yes` answers for scripts; without a terminal and without `--yes` nothing is installed);
- `list [--available]`, `enable NAME`, `disable NAME`, `remove NAME`,
  `update [NAME] [--yes]` (fetch again, list, ask again).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    market = actions.add_parser("marketplace", help="add, list and remove plugin marketplaces")
    verbs = market.add_subparsers(dest="verb", metavar="VERB", required=True)
    add = verbs.add_parser("add", help="add a marketplace: a folder, a git URL, OWNER/NAME or an archive URL")
    add.add_argument("source")
    add.add_argument("--sha256", default=None, help="the SHA-256 an archive URL must have")
    verbs.add_parser("list", help="the known marketplaces")
    remove = verbs.add_parser("remove", help="forget a marketplace (no plugin of it may remain)")
    remove.add_argument("name")
    install = actions.add_parser("install", help="install a plugin: NAME or NAME@MARKETPLACE")
    install.add_argument("name")
    install.add_argument("--yes", "-y", action="store_true", help="install and trust without asking")
    listing = actions.add_parser("list", help="the installed plugins")
    listing.add_argument("--available", action="store_true", help="also what the marketplaces offer")
    for verb, text in (
        ("enable", "use it again"),
        ("disable", "keep it installed, unused"),
        ("remove", "uninstall it"),
    ):
        actions.add_parser(verb, help=f"{text}").add_argument("name")
    update = actions.add_parser("update", help="fetch a plugin (default: every plugin) again")
    update.add_argument("name", nargs="?")
    update.add_argument("--yes", "-y", action="store_true", help="update and trust without asking")


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.storage import plugins

    if args.action == "marketplace":
        return _marketplace(args)
    if args.action == "install":
        return _install(args.name, args.yes, updating=False)
    if args.action == "update":
        names = [args.name] if args.name else sorted(plugins.load_registry().plugins)
        if not names:
            print("No plugins are installed.")
        refreshed: set[str] = set()
        for name in names:
            plugin = plugins.installed(name)
            if plugin.marketplace not in refreshed:
                plugins.refresh_marketplace(plugin.marketplace)
                refreshed.add(plugin.marketplace)
            code = _install(plugin.key, args.yes, updating=True)
            if code:
                return code
        return 0
    if args.action == "list":
        return _list(args.available)
    if args.action in ("enable", "disable"):
        plugin = plugins.set_enabled(args.name, args.action == "enable")
        print(f"{plugin.key} is {'enabled' if plugin.enabled else 'disabled'} (new sessions use it so)")
        return 0
    removed = plugins.remove_plugin(args.name)
    print(f"Removed {removed.key}")
    return 0


def _marketplace(args: argparse.Namespace) -> int:
    from wyckoff_cli.storage import plugins
    from wyckoff_cli.storage.plugin_sources import classify

    if args.verb == "add":
        market = plugins.add_marketplace(classify(args.source, args.sha256))
        print(f"Added the marketplace {market.name} ({len(market.plugins)} plugins, owner {market.owner})")
        for problem in market.problems:
            print(f"skipped: {problem}")
        return 0
    if args.verb == "remove":
        plugins.remove_marketplace(args.name)
        print(f"Removed the marketplace {args.name}")
        return 0
    registry = plugins.load_registry()
    if not registry.marketplaces:
        print("No marketplaces. `wyckoff plugin marketplace add SOURCE` adds one.")
    for name, source in sorted(registry.marketplaces.items()):
        print(f"{name}  {source.describe()}")
    return 0


def _install(spec: str, yes: bool, *, updating: bool) -> int:
    from wyckoff_cli.context.plugin_listing import list_plugin
    from wyckoff_cli.storage import plugins

    staged = plugins.stage_plugin(spec, updating=updating)
    try:
        listing = list_plugin(staged.manifest)
        previous = plugins.load_registry().plugins.get(staged.manifest.name)
        verb = "Update" if previous is not None else "Install"
        done = "updated" if previous is not None else "installed"
        if previous is not None:
            print(
                f"{previous.key}: installed {previous.version or '?'}, offered {staged.manifest.version or '?'}"
            )
        print("\n".join(listing.lines()))
        question = f"{verb} {staged.manifest.name}@{staged.marketplace}"
        if listing.runs_programs:
            question += " and trust its hooks and MCP servers"
        if not yes:
            if not sys.stdin.isatty():
                print(
                    f"wyckoff: not a terminal; `wyckoff plugin {verb.lower()} {spec} --yes` "
                    f"{verb.lower()}s and trusts it. Nothing was {done}.",
                    file=sys.stderr,
                )
                staged.discard()
                return 2
            answer = input(f"{question}? [y/N] ").strip().lower()
            if answer not in ("y", "yes"):
                print(f"Nothing was {done}.")
                staged.discard()
                return 1
        plugin = plugins.install_staged(staged, trust=True)
    except BaseException:
        staged.discard()
        raise
    print(f"{done.capitalize()} {plugin.key} {plugin.version}".rstrip() + " (new sessions use it)")
    return 0


def _list(available: bool) -> int:
    from wyckoff_cli.storage import plugins
    from wyckoff_cli.storage.managed import load_managed
    from wyckoff_cli.storage.paths import find_project_root

    managed = load_managed()
    if managed is not None and not managed.allow_plugins:
        print(f"Plugins are turned off by the managed policy {managed.path} (allow_plugins = false).")
    registry = plugins.load_registry()
    if not registry.plugins:
        print("No plugins installed. `wyckoff plugin install NAME@MARKETPLACE` installs one.")
    root = find_project_root(Path.cwd())
    used = {m.name for m in plugins.active_plugins(root)}
    _, waiting = plugins.settings_choices(root)
    for name, plugin in sorted(registry.plugins.items()):
        broken = "" if plugins.read_plugin_quietly(plugin.root) else "  (unreadable: reinstall it)"
        state = "enabled" if plugin.enabled else "disabled"
        here = "in use here" if name in used else "not used here"
        print(f"{plugin.key}  {plugin.version or '-'}  {state}, {here}{broken}")
    for note in waiting:
        print(note)
    if available:
        for market_name in sorted(registry.marketplaces):
            market = plugins.open_marketplace(market_name, registry)
            print(f"\n{market.name} offers:")
            for entry in market.plugins:
                mark = " (installed)" if entry.name in registry.plugins else ""
                print(f"  {entry.name}@{market.name}  {entry.version or '-'}  {entry.description}{mark}")
            for problem in market.problems:
                print(f"  skipped: {problem}")
    return 0
