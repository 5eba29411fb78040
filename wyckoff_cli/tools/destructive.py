"""The built-in list of destructive shell commands: these always ask, even in yolo
mode and even when an allow rule matches (a deny rule still refuses them).

Kept deliberately small and specific: what cannot be undone and is almost never what
a coding task needs.

- `rm -r` of `/`, a top-level system folder, the home folder, `.`, `..` or `*`
  (also `--no-preserve-root`);
- `git push --force` (`-f`, `--force-with-lease`, a `+refspec`, `--mirror`, or
  `--delete`) to a protected branch (main, master, trunk, develop, production,
  release/…) or without naming the branch;
- making or wiping file systems (`mkfs*`, `mkswap`, `wipefs`), `dd of=/dev/…` and
  redirections onto disk devices;
- `chmod`/`chown`/`chgrp -R` on `/` or a top-level system folder;
- fork bombs (`:(){ :|:& };:`);
- `shutdown`, `reboot`, `halt`, `poweroff` (also through `systemctl` and `init 0|6`).

Wrappers are looked through: `sudo`, `doas`, `env`, `nohup`, `nice`, `time`,
`command`, `exec`, variable assignments, and `bash -c "…"`.
"""

from __future__ import annotations

import re

from wyckoff_cli.tools.shellparse import split_command, words

PROTECTED_BRANCHES = frozenset(
    {"main", "master", "trunk", "develop", "development", "production", "prod", "stable", "HEAD"}
)
_SYSTEM_TOP = frozenset(
    {
        "bin", "boot", "dev", "etc", "home", "lib", "lib64", "opt", "proc", "root",
        "sbin", "srv", "sys", "usr", "var", "Users", "System", "Library", "Applications",
    }
)  # fmt: skip
_HOME_TARGETS = frozenset(
    {"~", "~/", "~/*", "$HOME", "$HOME/", "$HOME/*", "${HOME}", "${HOME}/", "${HOME}/*"}
)
_HERE_TARGETS = frozenset({".", "./", "./*", "..", "../", "*", ".*"})
_WRAPPERS = frozenset({"sudo", "doas", "nohup", "time", "command", "exec", "builtin", "env", "nice"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
_FORK_BOMB = re.compile(r"(?P<name>[^\s(){}|;&]+)\(\)\{(?P=name)\|(?P=name)&\};(?P=name)")
_DEVICE = re.compile(r">\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-)")
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})


def find_danger(command: str, _depth: int = 0) -> str | None:
    """Why `command` is on the destructive list, or None."""
    if _FORK_BOMB.search(re.sub(r"\s+", "", command)):
        return "a fork bomb"
    for part in split_command(command).parts:
        reason = _part_danger(part, _depth)
        if reason:
            return reason
    return None


def _part_danger(part: str, depth: int) -> str | None:
    if _DEVICE.search(part):
        return "writes onto a disk device"
    argv = _unwrap(words(part))
    if not argv:
        return None
    prog = argv[0].rsplit("/", 1)[-1]
    args = argv[1:]
    if prog in _SHELLS and "-c" in args and depth < 3:
        index = args.index("-c")
        if index + 1 < len(args):
            return find_danger(args[index + 1], depth + 1)
    if prog == "rm":
        return _rm_danger(args)
    if prog == "git":
        return _git_danger(args)
    if prog.startswith("mkfs") or prog in ("mkswap", "wipefs"):
        return f"`{prog}` creates or wipes a file system"
    if prog == "dd" and any(_is_device_target(a) for a in args):
        return "`dd` writes onto a device"
    if prog in ("chmod", "chown", "chgrp") and _recursive(args) and any(_is_system_path(a) for a in args):
        return f"recursive `{prog}` on a system folder"
    if prog in _POWER or (prog == "systemctl" and any(a in _POWER for a in args)):
        return "shuts down or restarts the machine"
    if prog in ("init", "telinit") and args[:1] in (["0"], ["6"]):
        return "shuts down or restarts the machine"
    return None


def _unwrap(argv: list[str]) -> list[str]:
    """Drop leading wrappers (sudo, env, nohup …), their options and VAR=value words."""
    out = list(argv)
    changed = True
    while out and changed:
        changed = False
        while out and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", out[0]):
            out.pop(0)
            changed = True
        if out and out[0].rsplit("/", 1)[-1] in _WRAPPERS:
            out.pop(0)
            while out and out[0].startswith("-"):
                option = out.pop(0)
                if option in ("-u", "-g", "-n", "-C", "-p") and out:
                    out.pop(0)  # the option's value
            changed = True
    return out


def _short_flags(args: list[str]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


def _recursive(args: list[str]) -> bool:
    return "r" in _short_flags(args) or "R" in _short_flags(args) or "--recursive" in args


def _is_system_path(arg: str) -> bool:
    if arg in ("/", "/*", "/."):
        return True
    match = re.fullmatch(r"/+([^/]+)/*\*?", arg)
    return bool(match and match.group(1) in _SYSTEM_TOP)


def _rm_danger(args: list[str]) -> str | None:
    if "--no-preserve-root" in args:
        return "`rm --no-preserve-root`"
    if not _recursive(args):
        return None
    targets: list[str] = []
    after_dashes = False
    for arg in args:
        if arg == "--" and not after_dashes:
            after_dashes = True
        elif after_dashes or not arg.startswith("-"):
            targets.append(arg)
    for target in targets:
        if _is_system_path(target):
            return f"recursive `rm` of {target}"
        if target in _HOME_TARGETS:
            return "recursive `rm` of the home folder"
        if target in _HERE_TARGETS:
            return f"recursive `rm` of {target} (everything here)"
    return None


def _git_danger(args: list[str]) -> str | None:
    rest = list(args)
    while rest and rest[0].startswith("-"):  # global options: -C DIR, -c KEY=VALUE, --no-pager …
        option = rest.pop(0)
        if option in ("-C", "-c", "--git-dir", "--work-tree") and rest:
            rest.pop(0)
    if not rest or rest[0] != "push":
        return None
    push = rest[1:]
    options = [a for a in push if a.startswith("-")]
    positional = [a for a in push if not a.startswith("-")]
    refspecs = positional[1:]
    forced = (
        any(a in ("--force", "--mirror") or a.startswith("--force-with-lease") for a in options)
        or "f" in _short_flags(options)
        or any(r.startswith("+") for r in refspecs)
    )
    deleting = (
        "--delete" in options or "d" in _short_flags(options) or any(r.startswith(":") for r in refspecs)
    )
    if not forced and not deleting:
        return None
    what = "force push" if forced else "branch deletion"
    if "--mirror" in options or "--all" in options:
        return f"git {what} of every branch"
    if not refspecs:
        return f"git {what} without naming the branch (it may be protected)"
    for refspec in refspecs:
        target = refspec.lstrip("+").split(":")[-1].removeprefix("refs/heads/")
        if target in PROTECTED_BRANCHES or target.startswith(("release/", "releases/", "release-")):
            return f"git {what} to the protected branch {target}"
    return None


def _is_device_target(arg: str) -> bool:
    if not arg.startswith("of=/dev/"):
        return False
    return arg not in ("of=/dev/null", "of=/dev/stdout", "of=/dev/stderr", "of=/dev/zero")
