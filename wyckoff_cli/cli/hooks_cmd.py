"""`wyckoff hooks list|trust|untrust`: the user hooks of this project and the user.

`list` shows every hook with its event, matcher, command, source file and trust state
(`user`: the user's own config, runs; `trusted`; `untrusted`; `changed`: trusted
before, changed since, asks again), then the entries that were skipped. `trust`
names each command of the project's untrusted hook files and records the trust
(after a yes on a terminal, or with `--yes`); `untrust` removes the records.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="every hook with its source and trust state")
    listing.add_argument("--json", action="store_true", help="print JSON lines")
    trust = actions.add_parser("trust", help="trust this project's hook configuration as it is now")
    trust.add_argument("--yes", "-y", action="store_true", help="do not ask (for scripts and CI)")
    actions.add_parser("untrust", help="forget the trust given to this project's hook files")
    for child in (listing, trust):
        child.add_argument("--cwd", type=Path, default=None, help="project folder (default: current)")


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.runtime.hook_config import load_hooks, trust_files
    from wyckoff_cli.storage.paths import find_project_root
    from wyckoff_cli.storage.trust import TrustStore

    root = find_project_root((getattr(args, "cwd", None) or Path.cwd()).resolve())
    hooks = load_hooks(root)
    if args.action == "list":
        if args.json:
            for file in hooks.files:
                for spec in file.specs:
                    record = {
                        "event": spec.event,
                        "matcher": spec.matcher,
                        "command": spec.command,
                        "timeout": spec.timeout,
                        "source": str(spec.file),
                        "trust": hooks.state_of(file),
                    }
                    print(json.dumps(record, ensure_ascii=False))
            return 0
        if not hooks.files:
            print("No hooks configured ([[hooks.EVENT]] in config.toml, `hooks` in .claude/settings.json).")
        for file in hooks.files:
            print(f"{file.path}  [{hooks.state_of(file)}]")
            for spec in file.specs:
                print(
                    f"  {spec.event:<16} {spec.matcher or '*':<16} {spec.command}  (timeout {spec.timeout:g}s)"
                )
            for grant in file.grants:
                print(f"  permissions: {grant}")
            for plugin in file.enables:
                print(f"  enables plugin: {plugin}")
        for problem in hooks.problems:
            print(f"skipped: {problem}")
        return 0
    if args.action == "untrust":
        store = TrustStore()
        removed: list[Path] = []
        for file in hooks.files:
            if not file.project or file.source.startswith("plugin "):  # a plugin's: `wyckoff plugin remove`
                continue
            enabling = store.revoke(file.path, "plugins")  # a settings file's enabledPlugins
            if store.revoke(file.path, "hooks") or enabling:
                removed.append(file.path)
        print("\n".join(f"No longer trusted: {p}" for p in removed) or "Nothing was trusted here.")
        return 0
    waiting = hooks.needing_trust()
    if not waiting:
        print("Every hook file of this project is trusted.")
        return 0
    for file in waiting:
        print(f"{file.path}{' (changed since it was trusted)' if file.state == 'changed' else ''}:")
        for spec in file.specs:
            print(f"  {spec.event} [{spec.matcher or '*'}]: {spec.command}")
        for grant in file.grants:
            print(f"  permissions: {grant}")
        for plugin in file.enables:
            print(f"  enables plugin: {plugin}")
    if not args.yes:
        if not sys.stdin.isatty():
            print("wyckoff: not a terminal; run `wyckoff hooks trust --yes` to trust these.", file=sys.stderr)
            return 2
        if input("Trust these (commands run, rules apply)? [y/N] ").strip().lower() not in ("y", "yes"):
            print("Not trusted.")
            return 1
    trust_files(waiting)
    print("Trusted.")
    return 0
