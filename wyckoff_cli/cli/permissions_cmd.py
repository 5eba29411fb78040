"""`wyckoff permissions list|add|remove`: the saved allow and deny rules.

    wyckoff permissions list [--json]
    wyckoff permissions add 'run_shell(pytest*)' [--deny] [--user]
    wyckoff permissions remove 'run_shell(pytest*)' [--deny | --allow] [--user | --project]
    wyckoff permissions trust [--yes]     # this project's allow rules and command files
    wyckoff permissions untrust

Rules are `TOOL` or `TOOL(PATTERN)` (see docs/TOOLS.md). `add` writes the project's
`.wyckoff/config.toml` unless `--user` is given; `remove` removes the rule from every
list it is in unless narrowed.

A project's allow rules and its command files' `allowed-tools` and `` !`…` `` snippets
apply only once trusted (storage/project_grants.py): `trust` names everything they
grant and records the trust (after a yes on a terminal, or with `--yes`); `untrust`
removes it. Rules the user saves (`add`, "always") keep a trusted list trusted.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("list", help="print the saved rules (user, then project)")
    show.add_argument("--json", action="store_true", help="print JSON objects {rule, kind, scope, file}")
    add = actions.add_parser("add", help="save a rule (allow, unless --deny)")
    add.add_argument("rule", help="TOOL or TOOL(PATTERN), e.g. 'run_shell(pytest*)'")
    add.add_argument("--deny", action="store_true", help="save it as a deny rule")
    add.add_argument("--user", action="store_true", help="save it in the user config, not the project's")
    remove = actions.add_parser("remove", help="remove a saved rule")
    remove.add_argument("rule", help="the rule exactly as `permissions list` shows it")
    kind = remove.add_mutually_exclusive_group()
    kind.add_argument("--allow", action="store_true", help="only from the allow lists")
    kind.add_argument("--deny", action="store_true", help="only from the deny lists")
    scope = remove.add_mutually_exclusive_group()
    scope.add_argument("--user", action="store_true", help="only from the user config")
    scope.add_argument("--project", action="store_true", help="only from the project config")
    trust = actions.add_parser("trust", help="trust this project's allow rules and command files as they are")
    trust.add_argument("--yes", "-y", action="store_true", help="do not ask (for scripts and CI)")
    actions.add_parser("untrust", help="forget the trust given to this project's rules and command files")


def run(args: argparse.Namespace) -> int:
    from wyckoff_cli.core.errors import UsageError
    from wyckoff_cli.storage import permissions as store
    from wyckoff_cli.storage.paths import find_project_root
    from wyckoff_cli.storage.project_grants import allow_grant, ignored_allow_rules, keep_allow_trust
    from wyckoff_cli.tools.permissions.rules import RuleError, check_rule

    root = find_project_root(Path.cwd())
    if args.action in ("trust", "untrust"):
        return _trust(root, args.action == "trust", args.yes if args.action == "trust" else True)
    ignored = set(ignored_allow_rules(root))
    if args.action == "list":
        saved = store.list_rules(root)
        if args.json:
            rows = [
                {
                    "rule": s.rule,
                    "kind": s.kind,
                    "scope": s.scope,
                    "file": str(s.file),
                    "trusted": not (s.scope == "project" and s.kind == "allow" and s.rule in ignored),
                }
                for s in saved
            ]
            print(json.dumps(rows, ensure_ascii=False, indent=2))
            return 0
        if not saved:
            print("No saved rules. Add one with `wyckoff permissions add RULE`, or choose")
            print('"always" when the app asks for approval.')
            return 0
        width = max(len(s.rule) for s in saved)
        for s in saved:
            note = (
                "  [not trusted: ignored]"
                if s.scope == "project" and s.kind == "allow" and s.rule in ignored
                else ""
            )
            print(f"{s.kind:<5}  {s.rule:<{width}}  {s.scope} ({s.file}){note}")
        if ignored:
            print("Trust the project's allow rules with `wyckoff permissions trust`.")
        return 0
    try:
        rule = check_rule(args.rule)
    except RuleError as exc:
        raise UsageError(str(exc)) from None
    if args.action == "add":
        from wyckoff_cli.session.shell import session_tool_names
        from wyckoff_cli.tools.permissions.policy import known_tool_hint, unknown_tool_rules

        known = session_tool_names()
        if unknown_tool_rules([rule], known):
            raise UsageError(
                f"the rule {rule!r} names a tool that does not exist. Known tools: {known_tool_hint(known)}"
            )
        kind: store.RuleKind = "deny" if args.deny else "allow"
        before = allow_grant(root)
        target = store.save_rule(rule, root=root, kind=kind, scope="user" if args.user else "project")
        keep_allow_trust(root, before)
        print(f"saved {kind} rule {rule} in {target}")
        return 0
    before = allow_grant(root)
    removed = store.remove_rule(
        rule,
        root=root,
        kind="allow" if args.allow else "deny" if args.deny else None,
        scope="user" if args.user else "project" if args.project else None,
    )
    keep_allow_trust(root, before)
    if not removed:
        raise UsageError(f"no saved rule {rule!r} (see `wyckoff permissions list`)")
    for gone in removed:
        print(f"removed {gone.kind} rule {gone.rule} from {gone.file}")
    return 0


def _trust(root: Path, trust: bool, yes: bool) -> int:
    import sys

    from wyckoff_cli.session.custom_commands import project_grants
    from wyckoff_cli.storage.project_grants import revoke_grants, trust_grants

    grants = project_grants(root)
    if not trust:
        removed = revoke_grants(grants)
        print("\n".join(f"No longer trusted: {p}" for p in removed) or "Nothing was trusted here.")
        return 0
    waiting = [g for g in grants if not g.trusted]
    if not waiting:
        print("Nothing of this project waits for trust (its allow rules and command files are trusted).")
        return 0
    for grant in waiting:
        changed = " (changed since it was trusted)" if grant.state == "changed" else ""
        print(f"{grant.path}{changed} grants:")
        for granted in grant.grants:
            print(f"  {granted}")
    if not yes:
        if not sys.stdin.isatty():
            print(
                "wyckoff: not a terminal; run `wyckoff permissions trust --yes` to trust these.",
                file=sys.stderr,
            )
            return 2
        if input("Trust these permissions? [y/N] ").strip().lower() not in ("y", "yes"):
            print("Not trusted.")
            return 1
    trust_grants(waiting)
    print("Trusted.")
    return 0
