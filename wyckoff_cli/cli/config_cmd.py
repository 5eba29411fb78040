"""`wyckoff config path|show|get KEY|set KEY VALUE|unset KEY`."""

from __future__ import annotations

import argparse
import json
import tomllib
from pathlib import Path
from typing import Any

from wyckoff_cli.core.errors import ConfigError, UsageError


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("path", help="print the config files (user, then project)")
    show = actions.add_parser("show", help="print the effective configuration as TOML")
    show.add_argument(
        "--origin", action="store_true", help="name the file (or default) each value comes from"
    )
    get = actions.add_parser("get", help="print one value, e.g. `permissions.allow`")
    get.add_argument("key")
    put = actions.add_parser("set", help="set a value (parsed as TOML when it can be, else a string)")
    put.add_argument("key")
    put.add_argument("value")
    put.add_argument("--project", action="store_true", help="write .wyckoff/config.toml of this project")
    unset = actions.add_parser("unset", help="remove a key")
    unset.add_argument("key")
    unset.add_argument("--project", action="store_true", help="edit .wyckoff/config.toml of this project")


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.storage import config as cfg
    from wyckoff_cli.storage import paths

    root = paths.find_project_root(Path.cwd())
    if args.action == "path":
        print(paths.config_file())
        project = paths.project_config_file(root)
        if project.exists():
            print(project)
        return 0
    loaded = cfg.load_config(root)
    if args.action == "show" and args.origin:
        from wyckoff_cli.cli.config_origin import origin_lines

        print("\n".join(origin_lines(loaded)))
        return 0
    if args.action == "show":
        import tomli_w

        print(tomli_w.dumps(cfg.to_plain(loaded.config)), end="")
        from wyckoff_cli.tools.process import removed_variables

        shell = loaded.config.shell
        removed = removed_variables(keep=shell.env_keep, remove=shell.env_remove)
        print("\n# removed from shell commands' environment: " + (", ".join(removed) or "nothing"))
        return 0
    if args.action == "get":
        try:
            value = cfg.get_dotted(loaded.config, args.key)
        except KeyError:
            raise UsageError(f"no config key {args.key!r} (see `wyckoff config show`)") from None
        plain = cfg.to_plain(value)
        print(plain if isinstance(plain, str) else json.dumps(plain))
        return 0
    target = paths.project_config_file(root) if args.project else paths.config_file()
    value = None if args.action == "unset" else parse_value(args.value)
    try:
        cfg.update_config_file(target, {args.key: value})
    except ConfigError as exc:
        raise ConfigError(f"not saved: {exc.message}") from None
    print(f"{'removed' if value is None else 'set'} {args.key} in {target}")
    return 0


def parse_value(text: str) -> Any:
    """`15` → 15, `true` → True, `["a"]` → list; anything else stays a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
