"""The built-in list of destructive shell commands: these always ask, even in yolo
mode and even when an allow rule matches (a deny rule still refuses them).

It covers the effect, not the spelling: every check runs on the commands the parser
found (shellparse.py), so wrappers, quoting, `bash -c`, `eval`, `$(…)`, pipes into a
shell and `find -exec` are seen through.

- recursive deletion (`rm -r`, `find -delete`, `find -exec rm`, `rsync --delete`) of
  a path outside the workspace (the system temp folder excepted), of `/`, a system
  folder, the home folder or a folder above it, of the workspace itself (`.`, `*`),
  of a `.git` folder, or of a path only known when it runs (`$X`, `xargs`);
- writing, truncating, moving or deleting a single file (`rm`, `unlink`, `truncate`,
  `cp`/`mv`/`ln`/`install` onto it, `tee`, `dd of=`, `sed -i`, `chmod`, `rsync`,
  `curl -o`, a redirection) in the home folder's hidden files (`~/.bashrc`,
  `~/.ssh/…`), the home folder itself or above, or a system file (`/etc/passwd`);
  moving or deleting the workspace; `crontab` other than `-l` (destructive_files.py),
  also after a `cd` (`cd ~ && rm -rf .`, `cd ..; rm -rf home`);
- `git clean -f` with `-x`/`-X` (ignored files: secrets, environments); with `-d`
  run at or above the home folder; `git reset --hard`
  while there are uncommitted changes; force pushes (`-f`, `--force`,
  `--force-with-lease`, `+refspec`, `--mirror`) and branch deletion on a protected
  branch;
- `shred`, making or wiping file systems (`mkfs*`, `mkswap`, `wipefs`), `dd of=/dev/…`
  and redirections onto disk devices;
- `chmod`/`chown`/`chgrp -R` on `/`, a system folder or the home folder;
- `kill` of every process (`kill -9 -1`), fork bombs, shutting down the machine;
- downloaded code piped into a shell (`curl … | sh`);
- inline interpreter code (`python -c`, `perl -e`, `node -e`, `ruby -e`) that deletes
  or writes files under home or `/`, or runs a destructive shell command.

Each check is linear in the command's length.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from wyckoff_cli.tools.permissions.danger_paths import DangerContext, contains, resolve_word, tree_danger
from wyckoff_cli.tools.permissions.destructive_files import file_write_danger, redirect_danger
from wyckoff_cli.tools.permissions.opaque import script_reason
from wyckoff_cli.tools.permissions.shellparse import (
    ParsedCommand,
    SimpleCommand,
    Word,
    basename,
    find_start_paths,
    parse_command,
)

__all__ = ["DangerContext", "command_danger", "find_danger", "unseen_script"]

PROTECTED_BRANCHES = frozenset(
    {"main", "master", "trunk", "develop", "development", "production", "prod", "stable", "HEAD"}
)
_DEVICE = re.compile(r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|loop|sr)")
_POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
_DELETE_API = re.compile(
    r"rmtree|removedirs|os\.remove|os\.unlink|\.unlink\(|rmdir|rm_rf|rm_r\b|rimraf|rmSync|fs\.rm\b|"
    r"\.rm\(|File\.delete|FileUtils\.rm|unlink\s*\(|deleteRecursively|remove_tree|rmtree\("
)
_WRITE_API = re.compile(
    r"\bopen\((?:[^()]|\([^()]*\))*,\s*['\"][rb]*[wax+]|\.write_text\(|\.write_bytes\(|os\.truncate|\.truncate\(|"
    r"shutil\.(?:copy\w*|move)\(|os\.(?:rename|replace)\(|writeFileSync|appendFileSync|truncateSync|"
    r"File\.(?:write|open\([^)]*['\"][wa])|IO\.write|FileUtils\.(?:cp|mv)|open\s*\(?\s*\w*\s*,\s*['\"]?[>+]"
)
_ROOTISH = re.compile(r"expanduser|Path\.home|homedir|Dir\.home|ENV\{HOME|ENV\[.HOME|\bHOME\b|getenv\(\s*['\"]HOME|['\"]~|['\"]/['\"]|"
                      r"['\"]/(?:etc|usr|bin|var|home|root|boot|lib)\b")  # fmt: skip
_QUOTED = re.compile(r"'([^'\n]{2,2000})'|\"([^\"\n]{2,2000})\"")
_SHELLISH = re.compile(r"^\s*(?:sudo\s+)?(?:rm|find|dd|mkfs\S*|shred|chmod|chown|git|kill|wipefs)\b")


def find_danger(command: str | ParsedCommand, context: DangerContext | None = None) -> str | None:
    """Why `command` is on the destructive list, or None."""
    parsed = parse_command(command) if isinstance(command, str) else command
    ctx = replace(context or DangerContext(), variables=_variables(parsed))
    if parsed.fork_bomb:
        return "a fork bomb"
    if parsed.network_code:
        return "runs code downloaded from the network (piped into a shell)"
    for redirect in parsed.writes:
        if redirect.target.literal and _DEVICE.match(redirect.target.text):
            return "writes onto a disk device"
    places = [ctx]
    here = ctx
    for simple in parsed.commands:
        if simple.words and simple.name in ("cd", "pushd"):
            here = _changed_folder(simple, here)
            places.append(here)
            continue
        reason = command_danger(simple, here)
        if reason:
            return reason
    return redirect_danger(parsed, places)


def unseen_script(parsed: ParsedCommand) -> str | None:
    """A shell script, sourced file or program by path the command runs, whose
    content no check can see (asked about with the sandbox off), or None."""
    for simple in parsed.commands:
        script = script_reason(simple, recipes=False)
        if script:
            return script
    return None


def _variables(parsed: ParsedCommand) -> dict[str, Word]:
    """The variables a command sets: assignments, and `export`/`declare` … run through
    a wrapper (`command export F=~/.bashrc`), which the grammar sees as words."""
    found = dict(parsed.assignments)
    for simple in parsed.commands:
        if simple.name in ("export", "declare", "typeset", "readonly", "local"):
            for word in simple.words[1:]:
                name, equals, value = word.text.partition("=")
                if equals and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    found[name] = Word(value, word.literal)
    return found


def _changed_folder(command: SimpleCommand, ctx: DangerContext) -> DangerContext:
    """The context after `cd DIR` / `pushd DIR` (`cd` alone: the home folder)."""
    operands = [w for w in command.words[1:] if not (w.literal and w.text.startswith("-") and w.text != "-")]
    target = operands[0] if operands else Word("~")
    path = None if target.text == "-" else resolve_word(target, ctx)
    if path is None:
        return replace(ctx, cwd_known=False)
    return replace(ctx, cwd=path)


def command_danger(command: SimpleCommand, ctx: DangerContext, depth: int = 0) -> str | None:
    """Why one (normalised) simple command is destructive, or None."""
    if not command.words or not command.words[0].literal:
        return None
    prog = basename(command.name)
    args = list(command.words[1:])
    texts = [w.text for w in args]
    if prog == "rm":
        return _rm_danger(command, args, ctx)
    if prog == "find":
        return _find_danger(command, ctx)
    if prog == "rsync" and any(t.startswith("--delete") or t in ("--remove-source-files",) for t in texts):
        targets = [w for w in args if not (w.literal and w.text.startswith("-"))]
        if targets:
            why = tree_danger(targets[-1], ctx, whole_ok=False)
            if why:
                return f"`rsync --delete` into {why}"
        return None
    if prog == "git":
        return _git_danger(command, texts, ctx)
    if prog == "shred":
        return "`shred` destroys file contents beyond recovery"
    if prog.startswith("mkfs") or prog in ("mkswap", "wipefs"):
        return f"`{prog}` creates or wipes a file system"
    if prog == "dd" and any(_is_device_target(t) for t in texts):
        return "`dd` writes onto a device"
    if prog in ("chmod", "chown", "chgrp") and _recursive(texts):
        for word in args:
            if word.literal and word.text.startswith("-"):
                continue
            why = tree_danger(word, ctx, whole_ok=True, system_only=True)
            if why:
                return f"recursive `{prog}` of {why}"
        return None
    if prog in ("kill", "pkill") and ("-1" in texts[texts.index("--") + 1 :] if "--" in texts else
                                      any(t == "-1" for t in texts[1:]) or texts[-1:] == ["-1"]):  # fmt: skip
        return "`kill` of every process"
    if prog == "killall5":
        return "`killall5` stops every process"
    if prog in _POWER or (prog == "systemctl" and any(a in _POWER for a in texts)):
        return "shuts down or restarts the machine"
    if prog in ("init", "telinit") and texts[:1] in (["0"], ["6"]):
        return "shuts down or restarts the machine"
    if command.inline_code is not None and depth < 2:
        return _code_danger(command.inline_code, ctx, depth) or file_write_danger(command, ctx)
    return file_write_danger(command, ctx)


# --------------------------------------------------------------------------- paths


def _short_flags(args: list[str]) -> str:
    return "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))


def _recursive(args: list[str]) -> bool:
    flags = _short_flags(args)
    return "r" in flags or "R" in flags or "--recursive" in args


def _rm_danger(command: SimpleCommand, args: list[Word], ctx: DangerContext) -> str | None:
    texts = [w.text for w in args if w.literal]
    if "--no-preserve-root" in texts:
        return "`rm --no-preserve-root`"
    if not _recursive([t for t in texts if t.startswith("-")]):
        return file_write_danger(command, ctx)
    if command.input_args:
        return "recursive `rm` of paths read from input"
    after_dashes = False
    for word in args:
        if word.literal and word.text == "--" and not after_dashes:
            after_dashes = True
            continue
        if not after_dashes and word.literal and word.text.startswith("-"):
            continue
        why = tree_danger(word, ctx, whole_ok=True)
        if why:
            return f"recursive `rm` of {why}"
    return None


def _find_danger(command: SimpleCommand, ctx: DangerContext) -> str | None:
    texts = [w.text for w in command.words]
    deletes = "-delete" in texts or any(
        texts[i] in ("-exec", "-execdir", "-ok", "-okdir")
        and i + 1 < len(texts)
        and basename(texts[i + 1]) in ("rm", "shred", "unlink", "rmdir")
        for i in range(len(texts))
    )
    if not deletes:
        return None
    for start in find_start_paths(command):
        why = tree_danger(start, ctx, whole_ok=False)
        if why:
            return f"`find` deleting in {why}"
    return None


def _git_danger(command: SimpleCommand, args: list[str], ctx: DangerContext) -> str | None:
    if not args:
        return None
    sub, rest = args[0], args[1:]
    folder = ctx.here
    if command.chdir is not None:
        resolved = resolve_word(Word(command.chdir), ctx)
        folder = resolved or folder
    if sub == "push":
        return _push_danger(rest)
    if sub == "clean":
        flags = _short_flags(rest)
        forced = "f" in flags or "--force" in rest
        if forced and ("x" in flags or "X" in flags) and "n" not in flags and "--dry-run" not in rest:
            return "`git clean -x` deletes ignored files (secrets, environments, local data no commit holds)"
        if forced and ("d" in flags or "x" in flags or "X" in flags):
            home = Path(os.path.normpath(ctx.home))
            if contains(Path(os.path.normpath(folder)), home):
                return "`git clean` at or above the home folder"
        return None
    if sub == "reset" and "--hard" in rest and ctx.dirty(folder):
        return "`git reset --hard` with uncommitted changes (they would be lost)"
    return None


def _push_danger(push: list[str]) -> str | None:
    options = [a for a in push if a.startswith("-")]
    positional = [a for a in push if not a.startswith("-")]
    refspecs = positional[1:]
    forced = (
        any(
            a in ("--force", "--mirror", "--force-if-includes") or a.startswith("--force-with-lease")
            for a in options
        )  # fmt: skip
        or "f" in _short_flags(options)
        or any(r.startswith("+") for r in refspecs)
    )
    if forced:
        if "--mirror" in options or "--all" in options:
            return "git force push of every branch"
        return "git force push (rewrites the remote's history)"
    deleting = (
        "--delete" in options or "d" in _short_flags(options) or any(r.startswith(":") for r in refspecs)
    )
    if not deleting:
        return None
    if "--mirror" in options or "--all" in options:
        return "git branch deletion of every branch"
    for refspec in refspecs:
        target = refspec.split(":")[-1].removeprefix("refs/heads/")
        if target in PROTECTED_BRANCHES or target.startswith(("release/", "releases/", "release-")):
            return f"git branch deletion of the protected branch {target}"
    return None


def _is_device_target(arg: str) -> bool:
    if not arg.startswith("of=/dev/"):
        return False
    return arg not in ("of=/dev/null", "of=/dev/stdout", "of=/dev/stderr", "of=/dev/zero")


def _code_danger(code: str, ctx: DangerContext, depth: int) -> str | None:
    if _DELETE_API.search(code) and _ROOTISH.search(code):
        return "inline code deleting files under the home folder or /"
    if _WRITE_API.search(code) and _ROOTISH.search(code):
        return "inline code writing files under the home folder or /"
    for match in _QUOTED.finditer(code):
        text = match.group(1) or match.group(2) or ""
        if not _SHELLISH.match(text):
            continue
        for simple in parse_command(text).commands:
            why = command_danger(simple, ctx, depth + 1)
            if why:
                return f"inline code running a destructive command ({why})"
    return None
